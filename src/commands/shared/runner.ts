/**
 * The phase runner for commands: listr2 on stderr, loaded lazily (it is heavy). Also the session
 * helpers every cluster command uses: poll timing for the endpoint and the debug sink.
 */
import type { PhaseRunner } from '../../tasks/phase.js';
import type { CommandContext } from './context.js';

/** Creates the listr2 runner for this run. */
export async function createRunner(ctx: CommandContext): Promise<PhaseRunner> {
  // listr2 colours through colorette, which decides at import time from stdout's TTY, `CI` and
  // NO_COLOR; our decision is about stderr, so tell it before the first import.
  if (ctx.host.color.level === 0 && process.env.NO_COLOR === undefined) process.env.NO_COLOR = '1';
  const { createListrRunner } = await import('../../tasks/listr-runner.js');
  return createListrRunner(ctx.host);
}

/**
 * Poll timing: 2 s growing to 10 s, `timeoutMinutes` overall (`--timeout`, default 30, always
 * real minutes as the flag says). Against an emulator whose clock runs `timeScale` times faster,
 * the intervals shrink by the same factor so the number of polls stays the same.
 */
export function pollFor(timeScale: number, timeoutMinutes = 30) {
  const timeoutMs = timeoutMinutes * 60_000;
  const s = Math.max(1, timeScale);
  return {
    intervalMs: Math.max(100, 2_000 / s),
    maxIntervalMs: Math.max(200, 10_000 / s),
    factor: 1.5,
    timeoutMs,
  };
}
