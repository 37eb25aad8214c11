/**
 * Confirmation (ux-anchors A3.1): a typed-"yes" prompt on a TTY; on a non-TTY, destructive
 * commands without `--yes` refuse instead of prompting; a declined prompt exits 1.
 */
import { createInterface } from 'node:readline';
import { InterruptedError, LokoError } from '../util/errors.js';
import type { OutputHost } from './output.js';

/** What to do about confirmation. */
export type ConfirmDecision = 'proceed' | 'ask' | 'refuse';

/** `--yes` proceeds; otherwise ask when a human can answer, else refuse. Pure. */
export function confirmationDecision(input: {
  yes: boolean;
  interactive: boolean;
}): ConfirmDecision {
  if (input.yes) return 'proceed';
  return input.interactive ? 'ask' : 'refuse';
}

/** What is being confirmed. */
export interface ConfirmRequest {
  /** The question, e.g. `Destroy cluster "demo" (4 devices)?`. */
  question: string;
  /** Short verb phrase for messages, e.g. `destroy the cluster`. */
  action: string;
  /** `--yes` was given. */
  yes: boolean;
}

/**
 * Resolves when the user confirmed (or `--yes`). Rejects with a LokoError (exit 1) when refused
 * on a non-TTY or declined, and with InterruptedError on Ctrl-C at the prompt.
 */
export async function confirm(host: OutputHost, req: ConfirmRequest): Promise<void> {
  const decision = confirmationDecision({ yes: req.yes, interactive: host.interactive });
  if (decision === 'proceed') return;
  if (decision === 'refuse') {
    throw new LokoError(`refusing to ${req.action} without confirmation: stdin is not a terminal`, {
      hint: 'Pass --yes to confirm non-interactively.',
    });
  }
  const answer = await ask(
    host,
    `${req.question} Only "yes" will be accepted.\n  type "yes" to continue: `,
  );
  if (answer === null) {
    // Ctrl-D: the cursor is still on the prompt line.
    host.info('');
    throw new LokoError(`cancelled: no answer (end of input): did not ${req.action}`, {
      hint: 'Type "yes" at the prompt, or pass --yes.',
    });
  }
  if (answer.trim() !== 'yes') {
    throw new LokoError(
      `answer ${JSON.stringify(answer.trim())} is not "yes": nothing was changed`,
      {
        hint: 'Type "yes" at the prompt, or pass --yes.',
      },
    );
  }
}

/** Resolves the typed line, or null on end of input (Ctrl-D). */
function ask(host: OutputHost, prompt: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({
      input: host.streams.stdin,
      output: host.streams.stderr as NodeJS.WritableStream,
      terminal: true,
    });
    let settled = false;
    rl.on('SIGINT', () => {
      settled = true;
      rl.close();
      host.info('');
      reject(new InterruptedError('interrupted at the prompt: nothing was started or changed'));
    });
    rl.on('close', () => {
      if (!settled) resolve(null); // EOF at the prompt: not a yes
    });
    rl.question(prompt, (answer) => {
      settled = true;
      rl.close();
      resolve(answer);
    });
  });
}
