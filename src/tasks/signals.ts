/**
 * Ctrl-C handling (DESIGN.md §7, k0sctl `trapSignals`): the first SIGINT aborts the run's
 * AbortController so work stops at the next safe point (exit 130); a second one exits at once
 * with 130.
 */
import { ExitCode } from '../util/errors.js';

/** What {@link trapInterrupts} needs; injectable for tests. */
export interface InterruptOptions {
  controller: AbortController;
  /** Called on the first SIGINT, e.g. to tell the user what happens now. */
  onFirst: () => void;
  /** Called on the second SIGINT; defaults to `process.exit(130)`. */
  exit?: (code: number) => void;
  /** Defaults to `process`. */
  proc?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/** Installs the handler; returns a function that removes it. */
export function trapInterrupts(opts: InterruptOptions): () => void {
  const proc = opts.proc ?? process;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let count = 0;
  const handler = (): void => {
    count++;
    if (count === 1) {
      opts.controller.abort();
      opts.onFirst();
    } else {
      exit(ExitCode.interrupted);
    }
  };
  proc.on('SIGINT', handler);
  return () => {
    proc.off('SIGINT', handler);
  };
}
