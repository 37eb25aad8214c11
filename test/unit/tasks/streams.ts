/** In-memory streams for tests of the output host, prompts and the CLI. */
import { PassThrough, Writable } from 'node:stream';
import type { Streams } from '../../../src/tasks/output.js';

export interface MemoryStreams extends Streams {
  out(): string;
  err(): string;
}

/** Streams with configurable TTY flags; stdin is an ended PassThrough unless `input` is given. */
export function memoryStreams(
  opts: { tty?: boolean; env?: Record<string, string | undefined>; input?: string } = {},
): MemoryStreams {
  let out = '';
  let err = '';
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = opts.tty ?? false;
  if (opts.input !== undefined) stdin.end(opts.input);
  else stdin.end();
  const sink = (append: (s: string) => void): Writable & { isTTY?: boolean } => {
    const w = new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        append(chunk.toString());
        cb();
      },
    }) as Writable & { isTTY?: boolean };
    w.isTTY = opts.tty ?? false;
    return w;
  };
  return {
    stdin,
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    env: opts.env ?? {},
    out: () => out,
    err: () => err,
  };
}
