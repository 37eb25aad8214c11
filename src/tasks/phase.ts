/**
 * The phase contract shared by workflows (platforms) and runners (this folder). A phase is a title
 * and a run function over a typed context; optional capabilities are a skip predicate and the items
 * (devices) it reports on. Core code reports progress through {@link ProgressReporter} and never
 * prints. This file imports nothing heavy so core layers can depend on it.
 */
import { InterruptedError } from '../util/errors.js';

/** Live state of one item (usually a device) inside a phase. */
export type ItemState = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

/** One item a phase works on, known when the phase starts; runners show one line per item. */
export interface PhaseItem {
  key: string;
  title: string;
}

/** How a phase reports progress. Every method is cheap and may be called often. */
export interface ProgressReporter {
  /** Updates one item: its state and a short detail such as `provisioning 40%`. */
  item(key: string, state: ItemState, detail?: string): void;
  /** A status line for the phase as a whole, e.g. `3/4 active`. */
  status(text: string): void;
  /** A warning for the user (goes to stderr). */
  warn(text: string): void;
  /** A debug line, shown only with `--debug`. */
  debug(text: string): void;
}

/** What a phase receives besides its context. */
export interface PhaseIO {
  /** Aborted on the first Ctrl-C: stop at the next safe point and throw InterruptedError. */
  signal: AbortSignal;
  progress: ProgressReporter;
}

/** One step of a workflow. `title` is a human phrase, e.g. `Wait for devices to become active`. */
export interface Phase<Ctx> {
  title: string;
  /** A reason to skip (shown to the user), or false to run. A pure predicate over the context. */
  skip?(ctx: Ctx): string | false;
  /** Items to show as sub-lines while the phase runs; evaluated right before `run`. */
  items?(ctx: Ctx): PhaseItem[];
  run(ctx: Ctx, io: PhaseIO): Promise<void>;
}

/** Runs phases in order over one context. */
export interface PhaseRunner {
  /**
   * Runs each phase in order, checking `signal` before each; rejects with the first phase's error
   * (InterruptedError when cancelled).
   */
  run<Ctx>(phases: Phase<Ctx>[], ctx: Ctx, signal: AbortSignal): Promise<void>;
}

/** A reporter that drops everything; for tests and silent runs. */
export const silentReporter: ProgressReporter = {
  item: () => {},
  status: () => {},
  warn: () => {},
  debug: () => {},
};

/**
 * A runner without UI: runs phases in order, reporting through `reporter`. Used by unit tests and
 * wherever no terminal rendering is wanted.
 */
export function createPlainRunner(reporter: ProgressReporter = silentReporter): PhaseRunner {
  return {
    async run<Ctx>(phases: Phase<Ctx>[], ctx: Ctx, signal: AbortSignal): Promise<void> {
      for (const phase of phases) {
        if (signal.aborted) throw new InterruptedError();
        if (phase.skip?.(ctx)) continue;
        await phase.run(ctx, { signal, progress: reporter });
      }
    },
  };
}
