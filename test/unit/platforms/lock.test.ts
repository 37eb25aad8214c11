import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireClusterLock } from '../../../src/platforms/equinixmetal/lock.js';
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

describe('acquireClusterLock', () => {
  it('creates the asset dir, names the holder, and fails fast for a second run', async () => {
    const dir = await tmp();
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    const holder = JSON.parse(await readFile(path.join(dir, '.loko.lock.json'), 'utf8')) as {
      pid: number;
    };
    expect(holder.pid).toBe(process.pid);
    const err = await acquireClusterLock(dir, 'loko cluster destroy').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain(`pid ${process.pid}`);
    expect((err as LokoError).message).toContain('loko cluster apply');
    expect((err as LokoError).hint).toContain(`kill ${process.pid}`);
    await lock.release();
    const again = await acquireClusterLock(dir, 'loko cluster destroy');
    await again.release();
  });

  it('takes over a lock whose holder process no longer exists (kill -9)', async () => {
    const dir = await tmp();
    const lock = await acquireClusterLock(dir, 'loko cluster apply');
    // Pretend the holder was a process that died: rewrite the holder file with a dead pid.
    const dead = 2 ** 22 + 12345;
    await writeFile(
      path.join(dir, '.loko.lock.json'),
      JSON.stringify({ pid: dead, hostname: os.hostname(), command: 'x', since: 'y' }),
    );
    const next = await acquireClusterLock(dir, 'loko cluster apply');
    await next.release();
    await lock.release();
  });
});
