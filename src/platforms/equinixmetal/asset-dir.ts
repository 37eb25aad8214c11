/**
 * Creating `asset_dir` safely: before a recursive mkdir, the nearest existing ancestor must be a
 * writable directory, and paths under /proc or /sys are refused (Node's recursive mkdir never
 * returns on procfs). Errors name the asset_dir and, when known, its config file:line:col.
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SourceRange } from '../../config/types.js';
import { LokoError } from '../../util/errors.js';

const FIX = 'Set cluster.asset_dir to a directory you can write to (or create it first).';

/** Creates `dir` (recursively) after the checks above; rejects with a LokoError. */
export async function ensureAssetDir(dir: string, where?: SourceRange): Promise<void> {
  const abs = path.resolve(dir);
  const at = where ? ` (${where.file}:${where.start.line}:${where.start.column})` : '';
  const fail = (why: string): LokoError =>
    new LokoError(`asset_dir "${dir}"${at} ${why}`, { hint: FIX });
  for (const virtual of ['/proc', '/sys']) {
    if (abs === virtual || abs.startsWith(`${virtual}/`))
      throw fail(`is under ${virtual}, a kernel file system where files cannot be created`);
  }
  let cur = abs;
  for (;;) {
    const st = await stat(cur).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw fail(`cannot be checked: ${err.message}`);
    });
    if (st) {
      if (!st.isDirectory())
        throw fail(
          cur === abs ? 'is a file, not a directory' : `cannot be created: ${cur} is a file`,
        );
      try {
        await access(cur, constants.W_OK | constants.X_OK);
      } catch {
        throw fail(cur === abs ? 'is not writable' : `cannot be created: ${cur} is not writable`);
      }
      break;
    }
    const parent = path.dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  try {
    await mkdir(abs, { recursive: true });
  } catch (err) {
    throw fail(`cannot be created: ${(err as Error).message}`);
  }
}
