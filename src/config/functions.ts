/**
 * Functions available in lokocfg expressions: lokoctl's `file()` and `pathexpand()`, and loko's
 * `env()`. All take and return strings.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Outcome of a call: a value, or a diagnostic (optionally about one argument). */
export type CallResult =
  { ok: true; value: string } | { ok: false; summary: string; detail: string; argIndex?: number };

/** Where a call is evaluated: the environment, and the file that contains the call. */
export interface CallContext {
  env: Record<string, string | undefined>;
  file: string;
}

/** One function: arity, a signature for messages, and the implementation. */
export interface FunctionSpec {
  signature: string;
  description: string;
  minArgs: number;
  maxArgs: number;
  call(args: string[], ctx: CallContext): CallResult;
}

function homeDir(env: Record<string, string | undefined>): string {
  return env.HOME || os.homedir();
}

/** The function table, keyed by name. */
export const FUNCTIONS: Record<string, FunctionSpec> = {
  file: {
    signature: 'file(path)',
    description:
      'Contents of a file as a string. Relative paths resolve against the directory of the file that contains the call.',
    minArgs: 1,
    maxArgs: 1,
    call([p], ctx) {
      const target = path.resolve(path.dirname(ctx.file), p!);
      try {
        return { ok: true, value: readFileSync(target, 'utf8') };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why =
          code === 'ENOENT'
            ? `No file exists at ${target}.`
            : code === 'EISDIR'
              ? `${target} is a directory.`
              : `Cannot read ${target}: ${(err as Error).message}.`;
        const tilde = p!.startsWith('~') ? ' To expand "~", wrap the path in pathexpand().' : '';
        return {
          ok: false,
          summary: 'Invalid function argument',
          detail: why + tilde,
          argIndex: 0,
        };
      }
    },
  },
  pathexpand: {
    signature: 'pathexpand(path)',
    description:
      'Replaces a leading "~" with the home directory; other paths are returned unchanged.',
    minArgs: 1,
    maxArgs: 1,
    call([p], ctx) {
      if (p === '~') return { ok: true, value: homeDir(ctx.env) };
      if (p!.startsWith('~/')) return { ok: true, value: path.join(homeDir(ctx.env), p!.slice(2)) };
      if (p!.startsWith('~')) {
        return {
          ok: false,
          summary: 'Invalid function argument',
          detail: `pathexpand() expands "~" and "~/..." only, not another user's home ("${p}").`,
          argIndex: 0,
        };
      }
      return { ok: true, value: p! };
    },
  },
  env: {
    signature: 'env(name, default)',
    description:
      'Value of an environment variable. Without the optional default, an unset variable is an error.',
    minArgs: 1,
    maxArgs: 2,
    call([name, dflt], ctx) {
      const v = ctx.env[name!];
      if (v !== undefined) return { ok: true, value: v };
      if (dflt !== undefined) return { ok: true, value: dflt };
      return {
        ok: false,
        summary: `Environment variable "${name}" is not set`,
        detail: `Set ${name} in the environment, or give a default: env("${name}", "<value>").`,
        argIndex: 0,
      };
    },
  },
};
