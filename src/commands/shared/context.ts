/**
 * What every command action receives: the parsed global flags, the output host, the run's abort
 * signal and the working directory. Light: no heavy imports here (loko --help stays fast).
 */
import type { OutputFormat, OutputHost } from '../../tasks/output.js';

/** Global flags (DESIGN.md §7), as commander parses them. */
export interface GlobalOptions {
  /** `-c/--config`: a directory of `*.lokocfg` or one file (default `.`). */
  config: string;
  /** `--var name=value`, repeatable. */
  var: string[];
  /** `--var-file <file>`, repeatable. */
  varFile: string[];
  apiUrl?: string;
  /** `--api-rate`: client-side Metal API requests per second; unset falls back to LOKO_API_RATE, then 10. */
  apiRate?: number;
  emulator: boolean;
  output: OutputFormat;
  /** False with `--no-color`. */
  color: boolean;
  debug: boolean;
  yes: boolean;
}

/** Per-run context of a command. */
export interface CommandContext {
  globals: GlobalOptions;
  host: OutputHost;
  /** Aborted by the first Ctrl-C. */
  signal: AbortSignal;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** A command's work: resolves its exit code. */
export type CommandRun = (ctx: CommandContext) => Promise<number>;

/**
 * Wraps a command body into a commander action: builds the {@link CommandContext} from the global
 * flags, traps Ctrl-C, and records the exit code. Provided by `src/cli.ts`.
 */
export type RunAction = <O extends object>(
  body: (ctx: CommandContext, opts: O) => Promise<number>,
  options?: RunActionOptions,
) => (opts: O, cmd: import('commander').Command) => Promise<void>;

/** Per-command tweaks of {@link RunAction}. */
export interface RunActionOptions {
  /** What the first Ctrl-C prints (default: stopping at the next safe point). */
  interruptMessage?: string;
  /** The hint after "interrupted: stopped at a safe point" (default: run again, creates nothing twice). */
  interruptHint?: string;
}
