import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireClusterLock, type ClusterLock } from '../../../src/platforms/equinixmetal/lock.js';
import { LokoError } from '../../../src/util/errors.js';

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'loko-lock-'));
  dirs.push(d);
  return path.join(d, 'assets');
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const holderFile = (dir: string): string => path.join(dir, '.loko.lock', 'holder.json');

/** The pid of a process that existed and was killed with SIGKILL. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    stdio: 'ignore',
  });
  await new Promise((r) => child.once('spawn', r));
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  return child.pid!;
}

/** Leaves the lock of `dir` as a holder killed with SIGKILL would: the directory and its record. */
async function leaveDeadLock(dir: string, pid: number): Promise<void> {
  await mkdir(path.join(dir, '.loko.lock'), { recursive: true });
  await writeFile(
    holderFile(dir),
    JSON.stringify({
      pid,
      hostname: os.hostname(),
      command: 'loko cluster apply',
      since: new Date().toISOString(),
      nonce: 'dead',
    }),
  );
}

async function settleAcquires(
  dir: string,
  n: number,
): Promise<{ won: ClusterLock[]; lost: unknown[] }> {
  const results = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => acquireClusterLock(dir, `loko run ${i}`)),
  );
  return {
    won: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    lost: results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
  };
}

describe('acquireClusterLock', () => {
  it('creates the asset dir, names the holder inside the lock, and fails fast for a second run', async () => {
    const dir = await tmp();
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    const holder = JSON.parse(await readFile(holderFile(dir), 'utf8')) as { pid: number };
    expect(holder.pid).toBe(process.pid);
    const err = await acquireClusterLock(dir, 'loko cluster destroy').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain(`pid ${process.pid}`);
    expect((err as LokoError).message).toContain('loko cluster apply');
    expect((err as LokoError).hint).toContain(`kill ${process.pid}`);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    const again = await acquireClusterLock(dir, 'loko cluster destroy');
    await again.release();
  });

  it('a stale holder record beside the lock cannot make a second run steal a live lock', async () => {
    const dir = await tmp();
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    // What an older loko left next to the lock directory: a record naming a dead process.
    await writeFile(
      path.join(dir, '.loko.lock.json'),
      JSON.stringify({ pid: await deadPid(), hostname: os.hostname(), command: 'x', since: 'y' }),
    );
    const err = await acquireClusterLock(dir, 'loko cluster apply').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain(`pid ${process.pid}`);
    await lock.release();
  });

  it('of parallel acquires exactly one wins', async () => {
    const dir = await tmp();
    const { won, lost } = await settleAcquires(dir, 8);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const e of lost) expect(e).toBeInstanceOf(LokoError);
    await won[0]!.release();
  });

  it('takes over the lock of a holder killed with SIGKILL, once, even when runs race for it', async () => {
    const dir = await tmp();
    const pid = await deadPid();
    await leaveDeadLock(dir, pid);
    const single = await acquireClusterLock(dir, 'loko cluster apply');
    expect(JSON.parse(await readFile(holderFile(dir), 'utf8')).pid).toBe(process.pid);
    await single.release();

    await leaveDeadLock(dir, pid);
    const { won, lost } = await settleAcquires(dir, 8);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const e of lost) {
      expect(e).toBeInstanceOf(LokoError);
      expect((e as LokoError).message).toContain(`pid ${process.pid}`);
    }
    await won[0]!.release();
    // Nothing left behind: no lock, no temporary or moved-away directories.
    expect(await readdir(dir)).toEqual([]);
  });

  it('a live holder on another host keeps the lock while fresh; it goes stale after 10 s', async () => {
    const dir = await tmp();
    await mkdir(path.join(dir, '.loko.lock'), { recursive: true });
    await writeFile(
      holderFile(dir),
      JSON.stringify({ pid: 1, hostname: 'elsewhere', command: 'loko cluster apply', since: 'y' }),
    );
    const err = await acquireClusterLock(dir, 'loko cluster apply').catch((e: unknown) => e);
    expect((err as LokoError).message).toContain('pid 1 on elsewhere');
    const old = new Date(Date.now() - 11_000);
    await utimes(path.join(dir, '.loko.lock'), old, old);
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    await lock.release();
  });

  it('release does not remove a lock that is no longer its own', async () => {
    const dir = await tmp();
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    await rm(path.join(dir, '.loko.lock'), { recursive: true });
    const other = await acquireClusterLock(dir, 'loko cluster destroy');
    await lock.release();
    const err = await acquireClusterLock(dir, 'loko cluster plan').catch((e: unknown) => e);
    expect((err as LokoError).message).toContain('loko cluster destroy');
    await other.release();
  });
});
