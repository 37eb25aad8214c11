/**
 * Errors that reach the user. Core layers throw these (or typed errors that the CLI maps to them);
 * the one error handler in `src/cli.ts` prints `message` and `hint` and never a stack trace unless
 * `--debug` is set.
 */

/** Process exit codes (DESIGN.md §7). */
export const ExitCode = {
  ok: 0,
  error: 1,
  changesPending: 2,
  interrupted: 130,
} as const;

/** An error whose message is fit for the user: what went wrong, where (file:line, flag, API call). */
export class LokoError extends Error {
  /** How to fix it, one or two sentences. */
  readonly hint?: string;
  readonly exitCode: number;

  constructor(message: string, opts: { hint?: string; exitCode?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'LokoError';
    this.hint = opts.hint;
    this.exitCode = opts.exitCode ?? ExitCode.error;
  }
}

/** Thrown when the user interrupted the run (Ctrl-C); maps to exit code 130. */
export class InterruptedError extends LokoError {
  constructor(message = 'interrupted') {
    super(message, { exitCode: ExitCode.interrupted });
    this.name = 'InterruptedError';
  }
}
