/**
 * The advisory lock of a cluster's asset directory: two apply/destroy runs on one cluster must not
 * interleave. The lock is the directory `<asset_dir>/.loko.lock`, and its holder record
 * `.loko.lock/holder.json` lives inside it:
 *
 * - A run prepares a private directory with its holder record and renames it to `.loko.lock`.
 *   The rename fails while `.loko.lock` exists (it is never empty), so taking the lock and naming
 *   the holder are one atomic step: a holder record always belongs to the lock it sits in, and a
 *   record left over from an earlier run cannot vouch for (or against) a later one.
 * - The holder touches the directory every 2 s. A lock is stale when its holder is a process of
 *   this host that no longer exists (e.g. after `kill -9`), or, for a holder on another host (a
 *   shared asset directory) or a lock without a record, when it was not touched for 10 s.
 * - Taking over a stale lock is serialised by `mkdir .loko.lock/takeover` inside that very
 *   directory: of several runs that find it stale, one wins, re-checks the holder it now owns the
 *   takeover of, and moves the directory away; the others retry and find the winner's live lock.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SourceRange } from '../../config/types.js';
import { LokoError } from '../../util/errors.js';
import { ensureAssetDir } from './asset-dir.js';

/** Who holds the lock. */
export interface LockHolder {
  pid: number;
  hostname: string;
  command: string;
  /** ISO 8601. */
  since: string;
}

/** A held lock. `release` is idempotent. */
export interface ClusterLock {
  readonly path: string;
  release(): Promise<void>;
}

/** A lock not touched for this long is stale (its holder refreshes every {@link REFRESH_MS}). */
const STALE_MS = 10_000;
const REFRESH_MS = 2_000;
/** Name of the holder record inside the lock directory. */
export const HOLDER_FILE = 'holder.json';
const TAKEOVER_DIR = 'takeover';

interface HolderRecord extends LockHolder {
  /** Tells this lock apart from any other one with the same pid. */
  nonce: string;
}

/**
 * Takes the lock of `assetDir` (creating the directory). Fails fast with a LokoError naming the
 * holder's pid and command when another live run holds it. A stale lock (its holder process on
 * this host is gone; for another host, not refreshed for 10 s) is taken over at once.
 */
export async function acquireClusterLock(
  assetDir: string,
  command: string,
  /** Where the config sets asset_dir (`sources.get('cluster.asset_dir')`), for errors. */
  where?: SourceRange,
): Promise<ClusterLock> {
  await ensureAssetDir(assetDir, where);
  const lockPath = path.join(assetDir, '.loko.lock');
  const me: HolderRecord = {
    pid: process.pid,
    hostname: os.hostname(),
    command,
    since: new Date().toISOString(),
    nonce: randomBytes(8).toString('hex'),
  };

  for (let attempt = 0; ; attempt++) {
    if (await tryCreate(lockPath, me)) return held(lockPath, me);
    const found = await inspect(lockPath);
    if (found === 'gone') continue; // released meanwhile
    if (!found.stale || attempt >= 5) throw lockedError(lockPath, found.holder);
    // Stale: take it over, unless another run is doing so (then retry and meet its lock).
    if (!(await takeOver(lockPath, found.holder))) await sleep(20 + Math.random() * 30);
  }
}

/** Creates the lock with `me` inside, atomically; false when a lock exists. */
async function tryCreate(lockPath: string, me: HolderRecord): Promise<boolean> {
  const tmp = `${lockPath}.new-${me.nonce}`;
  await mkdir(tmp, { recursive: true });
  try {
    await writeFile(path.join(tmp, HOLDER_FILE), `${JSON.stringify(me)}\n`);
    await rename(tmp, lockPath);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR') return false;
    throw err;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * The current lock's holder and whether it is stale; `gone` when there is no lock. The holder is
 * read between two stats of the directory so that a record and an age always belong to one lock:
 * a lock moved away (taken over or released) meanwhile is seen again, never judged without its
 * record. loko's locks always hold a record from the moment they exist, so a missing one is read
 * again a few times (a directory's inode may be reused by the next lock) before the lock is judged
 * as a record-less one of an older loko.
 */
async function inspect(
  lockPath: string,
): Promise<'gone' | { holder: HolderRecord | undefined; stale: boolean }> {
  for (let attempt = 0; ; attempt++) {
    const before = await statLock(lockPath);
    if (!before) return 'gone';
    const holder = await readHolder(path.join(lockPath, HOLDER_FILE));
    const after = await statLock(lockPath);
    if (!after) return 'gone';
    if (after.ino !== before.ino || after.dev !== before.dev) continue; // replaced meanwhile
    if (!holder && attempt < 5) {
      await sleep(5);
      continue;
    }
    // On this host the pid decides (a busy holder may miss a refresh); elsewhere only the age can.
    const stale =
      holder?.hostname === os.hostname()
        ? !isAlive(holder.pid)
        : Date.now() - before.mtimeMs > STALE_MS;
    return { holder, stale };
  }
}

async function statLock(
  lockPath: string,
): Promise<{ ino: number; dev: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(lockPath);
    return { ino: s.ino, dev: s.dev, mtimeMs: s.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Moves away the lock that was found stale with `judged` as its holder. Only the run that creates
 * `takeover/` inside the lock directory may, and only if that directory still holds the same
 * record (so it is the lock judged stale, not a newer one) and, on this host, the holder is still
 * gone. False when another run is taking it over, or the lock changed or went away.
 */
async function takeOver(lockPath: string, judged: HolderRecord | undefined): Promise<boolean> {
  const claim = path.join(lockPath, TAKEOVER_DIR);
  try {
    await mkdir(claim);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOENT') return false;
    throw err;
  }
  // The directory holding our claim cannot change holder, and no one else may move it now.
  // (Its age cannot be judged again: creating the claim just touched it.)
  const holder = await readHolder(path.join(lockPath, HOLDER_FILE));
  const same = JSON.stringify(holder) === JSON.stringify(judged);
  if (!same || (holder?.hostname === os.hostname() && isAlive(holder.pid))) {
    await rmdir(claim).catch(() => {});
    return false;
  }
  const grave = `${lockPath}.stale-${randomBytes(8).toString('hex')}`;
  await rename(lockPath, grave);
  await rm(grave, { recursive: true, force: true });
  return true;
}

function held(lockPath: string, me: HolderRecord): ClusterLock {
  // Keep the lock fresh; a lost lock (the directory was removed) is not an error here: the run
  // finishes and the next one re-checks.
  const timer = setInterval(() => {
    const now = new Date();
    utimes(lockPath, now, now).catch(() => {});
  }, REFRESH_MS);
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    path: lockPath,
    release: () =>
      (released ??= (async () => {
        clearInterval(timer);
        const holder = await readHolder(path.join(lockPath, HOLDER_FILE));
        if (holder?.nonce !== me.nonce) return; // taken over meanwhile: not ours to remove
        const grave = `${lockPath}.released-${me.nonce}`;
        try {
          await rename(lockPath, grave);
        } catch {
          return;
        }
        await rm(grave, { recursive: true, force: true });
      })()),
  };
}

function lockedError(lockPath: string, holder: LockHolder | undefined): LokoError {
  const who = holder
    ? `pid ${holder.pid} on ${holder.hostname} (\`${holder.command}\`, since ${holder.since})`
    : 'another loko process';
  return new LokoError(`the cluster is locked by ${who}: ${lockPath}`, {
    hint: holder
      ? `Wait for that run to finish, or stop it (kill ${holder.pid}) and run again. If no such process exists, remove ${lockPath}.`
      : `Wait for the other run to finish; if none is running, remove ${lockPath}.`,
  });
}

async function readHolder(file: string): Promise<HolderRecord | undefined> {
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as Partial<HolderRecord>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string') {
      return {
        pid: v.pid,
        hostname: v.hostname,
        command: v.command ?? 'loko',
        since: v.since ?? '?',
        nonce: v.nonce ?? '',
      };
    }
  } catch {
    // No record: a lock of an older loko (proper-lockfile); it is judged by its age alone.
  }
  return undefined;
}

/** Signal 0 probes a pid; EPERM means it exists but belongs to someone else. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
