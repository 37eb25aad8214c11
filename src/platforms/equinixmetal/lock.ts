/**
 * The advisory lock of a cluster's asset directory: two apply/destroy runs on one cluster must not
 * interleave. `<asset_dir>/.loko.lock` is a proper-lockfile lock (an mkdir, refreshed while held,
 * stale after 10 s without refresh); `<asset_dir>/.loko.lock.json` names the holder.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { LokoError } from '../../util/errors.js';

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

/**
 * Takes the lock of `assetDir` (creating the directory). Fails fast with a LokoError naming the
 * holder's pid and command when another live run holds it. A lock left by a process on this host
 * that no longer exists (e.g. after `kill -9`) is taken over at once instead of waiting for it to
 * go stale.
 */
export async function acquireClusterLock(assetDir: string, command: string): Promise<ClusterLock> {
  await mkdir(assetDir, { recursive: true });
  const lockPath = path.join(assetDir, '.loko.lock');
  const holderPath = `${lockPath}.json`;
  const opts = {
    lockfilePath: lockPath,
    realpath: false,
    stale: 10_000,
    update: 2_000,
    // Losing the lock (e.g. the directory was removed) must not crash the process from a timer;
    // the run finishes and the next run re-checks.
    onCompromised: () => {},
  };

  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(assetDir, opts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const holder = await readHolder(holderPath);
    if (holder && holder.hostname === os.hostname() && !isAlive(holder.pid)) {
      await rm(lockPath, { recursive: true, force: true });
      release = await lockfile.lock(assetDir, opts).catch((e: unknown) => {
        throw lockedError(lockPath, holder, e);
      });
    } else {
      throw lockedError(lockPath, holder, err);
    }
  }

  const me: LockHolder = {
    pid: process.pid,
    hostname: os.hostname(),
    command,
    since: new Date().toISOString(),
  };
  await writeFile(holderPath, `${JSON.stringify(me)}\n`);
  let released = false;
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      await rm(holderPath, { force: true });
      await release().catch(() => {});
    },
  };
}

function lockedError(lockPath: string, holder: LockHolder | undefined, cause: unknown): LokoError {
  const who = holder
    ? `pid ${holder.pid} on ${holder.hostname} (\`${holder.command}\`, since ${holder.since})`
    : 'another loko process';
  return new LokoError(`the cluster is locked by ${who}: ${lockPath}`, {
    hint: holder
      ? `Wait for that run to finish, or stop it (kill ${holder.pid}) and run again. If no such process exists, remove ${lockPath}.`
      : `Wait for the other run to finish; if none is running, remove ${lockPath}.`,
    cause,
  });
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string') {
      return {
        pid: v.pid,
        hostname: v.hostname,
        command: v.command ?? 'loko',
        since: v.since ?? '?',
      };
    }
  } catch {
    // No holder file: a run between mkdir and writing it, or an older lock; report without details.
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
