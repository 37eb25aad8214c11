/**
 * `loko emulator start`: run the Metal API emulator in the foreground until SIGINT/SIGTERM, then
 * close it (persisting `--state`) and remove `--ready-file`. Prints the URL and an `export` line for
 * METAL_API_URL and METAL_AUTH_TOKEN on stderr: with `--ready-file` the line reads the token from
 * that file; without one the token itself is printed only when stderr is a terminal. `-o json`
 * never carries the token (it is in the ready file). The Kubernetes twin runs with its CCM and CNI
 * gates on unless `--no-ccm-gate` / `--no-cni-gate` or `LOKO_TWIN_REQUIRE_CCM=0` /
 * `LOKO_TWIN_REQUIRE_CNI=0` say otherwise (../shared/twin.ts).
 */
import { Command, InvalidArgumentError } from 'commander';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { ExitCode, LokoError } from '../../util/errors.js';
import type { RunAction } from '../shared/context.js';
import { twinGates } from '../shared/twin.js';

interface StartFlags {
  port: number;
  state?: string;
  readyFile?: string;
  timeScale: number;
  rateLimit?: number;
  projectId?: string;
  /** `--no-ccm-gate` sets false. */
  ccmGate: boolean;
  /** `--no-cni-gate` sets false. */
  cniGate: boolean;
}

function number(flag: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min)
      throw new InvalidArgumentError(`${flag} must be a number >= ${min}`);
    return n;
  };
}

/** `--port`: an integer 0-65535 (0 picks a free port). */
function port(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(
      '--port must be a whole number from 0 to 65535 (0 picks a free one)',
    );
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `--project-id`: a UUID, as Metal project ids are. */
function uuid(v: string): string {
  if (!UUID.test(v.trim()))
    throw new InvalidArgumentError(
      "--project-id must be a UUID (like 7c9d0f1e-2b3a-4c5d-8e6f-0a1b2c3d4e5f), as in your configuration's project_id",
    );
  return v.trim();
}

/** Defines the command. */
export function emulatorStartCommand(runAction: RunAction): Command {
  return new Command('start')
    .description('run the Metal API emulator in the foreground (Ctrl-C stops it)')
    .option('--port <port>', 'TCP port on 127.0.0.1 (0 picks a free one)', port, 0)
    .option(
      '--state <file>',
      'state file to restore from and save to (default: fresh seed, not saved)',
    )
    .option('--ready-file <file>', 'write {"url","token","projectId"} to this file once serving')
    .option(
      '--time-scale <x>',
      'speed of the emulated clock (10 = ten times faster)',
      number('--time-scale', 0.001),
      1,
    )
    .option(
      '--rate-limit <rps>',
      'answer 429 beyond this many requests per second',
      number('--rate-limit', 1),
    )
    .option(
      '--project-id <uuid>',
      "id of the seeded project, a UUID (e.g. your config's project_id)",
      uuid,
    )
    .option(
      '--no-ccm-gate',
      'Kubernetes twin: initialise nodes at once instead of waiting for the Equinix Metal CCM (env LOKO_TWIN_REQUIRE_CCM=0)',
    )
    .option(
      '--no-cni-gate',
      'Kubernetes twin: nodes turn Ready at once instead of waiting for a CNI pod (env LOKO_TWIN_REQUIRE_CNI=0)',
    )
    .action(
      runAction<StartFlags>(
        async (ctx, opts) => {
          const gates = twinGates(ctx.env, opts);
          const { startEmulator, writeReadyFile } = await import('../../emulator/index.js');
          const running = await startEmulator({
            port: opts.port,
            statePath: opts.state ? path.resolve(ctx.cwd, opts.state) : undefined,
            projectId: opts.projectId,
            timeScale: opts.timeScale,
            rateLimitPerSecond: opts.rateLimit,
            logger: { info: (msg: string) => ctx.host.info(msg) },
            twinOptions: gates,
          }).catch((err: unknown) => {
            if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
              throw new LokoError(`port ${opts.port} on 127.0.0.1 is in use`, {
                hint: 'Choose another --port, or --port 0 for a free one.',
              });
            }
            throw err;
          });
          const readyFile = opts.readyFile ? path.resolve(ctx.cwd, opts.readyFile) : undefined;
          // The token is shown only where a person reads it (stderr on a terminal); otherwise it is
          // in the ready file, and the hint reads it from there.
          const showToken = !readyFile && Boolean(ctx.host.streams.stderr.isTTY);
          try {
            if (readyFile) await writeReadyFile(readyFile, running);
            if (ctx.host.format === 'json') {
              ctx.host.json({
                url: running.url,
                controlUrl: running.controlUrl,
                projectId: running.projectId,
                ...(readyFile ? { readyFile } : {}),
              });
            }
            ctx.host.info(`Project: ${running.projectId}`);
            ctx.host.info('Use it from another shell:');
            if (readyFile) {
              const read = `node -p 'JSON.parse(require("fs").readFileSync(${JSON.stringify(readyFile)}, "utf8")).token'`;
              ctx.host.info(`  export METAL_API_URL=${running.url} METAL_AUTH_TOKEN=$(${read})`);
            } else if (showToken) {
              ctx.host.info(
                `  export METAL_API_URL=${running.url} METAL_AUTH_TOKEN=${running.token}`,
              );
            } else {
              ctx.host.info(`  export METAL_API_URL=${running.url}`);
              ctx.host.info(
                '  (the API token is not printed when stderr is not a terminal: pass --ready-file <file> and read "token" from it)',
              );
            }
            ctx.host.info('Press Ctrl-C to stop.');
            await stopped(ctx.signal);
          } finally {
            await running.close();
            // The ready file says "serving": remove it once that is no longer true.
            if (readyFile) await rm(readyFile, { force: true }).catch(() => undefined);
          }
          return ExitCode.ok;
        },
        { interruptMessage: 'stopping the emulator (press Ctrl-C again to exit now)' },
      ),
    );
}

/** Resolves on the run's abort (first Ctrl-C) or SIGTERM. */
function stopped(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGTERM', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', done);
    process.on('SIGTERM', done);
  });
}
