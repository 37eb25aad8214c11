/**
 * The output host (aesthetics "absorb" 14): the only way commands write to the terminal.
 * stdout carries results only (text, or exactly one JSON document with `-o json`); progress,
 * logs, warnings and errors go to stderr.
 */
import type { ChalkInstance } from 'chalk';
import { colorFor } from './color.js';

/** `-o` values. */
export type OutputFormat = 'text' | 'json';

/** Minimal stream shapes so tests can pass in-memory streams. */
export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
}
export interface InStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
}

/** The process's streams and environment, injected into `createProgram`. */
export interface Streams {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
  env: Record<string, string | undefined>;
}

/** Where commands write. */
export interface OutputHost {
  readonly format: OutputFormat;
  readonly debugEnabled: boolean;
  readonly streams: Streams;
  /** Colours for stderr text (off unless stderr is a TTY and colour is allowed). */
  readonly color: ChalkInstance;
  /** Colours for stdout text. */
  readonly colorOut: ChalkInstance;
  /** True when a human can answer a prompt: stdin and stderr are TTYs. */
  readonly interactive: boolean;
  /** True once a JSON document was printed. */
  readonly jsonWritten: boolean;
  /** A result line on stdout (text mode only; ignored in JSON mode). */
  out(text: string): void;
  /** The JSON result on stdout; a second call throws (one document per run). */
  json(value: unknown): void;
  /** Progress or information on stderr. */
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  /** Only with `--debug`. */
  debug(text: string): void;
}

/** Options of {@link createOutputHost}. */
export interface OutputOptions {
  format: OutputFormat;
  noColor: boolean;
  debug: boolean;
}

/** Builds the host over `streams`. */
export function createOutputHost(streams: Streams, opts: OutputOptions): OutputHost {
  const color = colorFor({
    noColorFlag: opts.noColor,
    env: streams.env,
    isTTY: Boolean(streams.stderr.isTTY),
  });
  const colorOut = colorFor({
    noColorFlag: opts.noColor,
    env: streams.env,
    isTTY: Boolean(streams.stdout.isTTY),
  });
  let jsonWritten = false;
  const line = (s: OutStream, text: string): void => {
    s.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  return {
    format: opts.format,
    debugEnabled: opts.debug,
    streams,
    color,
    colorOut,
    interactive: Boolean(streams.stdin.isTTY && streams.stderr.isTTY),
    get jsonWritten() {
      return jsonWritten;
    },
    out(text) {
      if (opts.format === 'text') line(streams.stdout, text);
    },
    json(value) {
      if (jsonWritten) throw new Error('internal: a second JSON document was about to be printed');
      jsonWritten = true;
      line(streams.stdout, JSON.stringify(value, null, 2));
    },
    info(text) {
      line(streams.stderr, text);
    },
    warn(text) {
      line(streams.stderr, `${color.yellow('warning:')} ${text}`);
    },
    error(text) {
      line(streams.stderr, `${color.red('error:')} ${text}`);
    },
    debug(text) {
      if (opts.debug) line(streams.stderr, color.dim(`debug: ${text}`));
    },
  };
}
