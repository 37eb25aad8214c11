import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureAssetDir } from '../../../src/platforms/equinixmetal/asset-dir.js';
import { acquireClusterLock } from '../../../src/platforms/equinixmetal/lock.js';
import { writeSummary } from '../../../src/platforms/equinixmetal/summary.js';
import { LokoError } from '../../../src/util/errors.js';

const where = {
  file: '/cfg/cluster.lokocfg',
  start: { line: 4, column: 3 },
  end: { line: 4, column: 30 },
};
const tmp = await mkdtemp(path.join(os.tmpdir(), 'loko-asset-dir-'));
afterAll(async () => {
  await chmod(path.join(tmp, 'ro'), 0o755).catch(() => {});
  await rm(tmp, { recursive: true, force: true });
});

describe('asset_dir checks', () => {
  it('refuses a file at asset_dir, naming it and its config location', async () => {
    const file = path.join(tmp, 'file');
    await writeFile(file, 'x');
    const err = (await acquireClusterLock(file, 'apply', where).catch(
      (e: unknown) => e,
    )) as LokoError;
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toBe(
      `asset_dir "${file}" (/cfg/cluster.lokocfg:4:3) is a file, not a directory`,
    );
    expect(err.hint).toContain('asset_dir');
    await expect(ensureAssetDir(path.join(file, 'sub'))).rejects.toThrow(/is a file/);
  });

  it('refuses paths under /proc and /sys without touching them', async () => {
    await expect(ensureAssetDir('/proc/self/loko-assets', where)).rejects.toThrow(/under \/proc.*/);
    const summary = { assetDir: '/sys/loko', devices: [] } as unknown as Parameters<
      typeof writeSummary
    >[0];
    await expect(writeSummary(summary)).rejects.toBeInstanceOf(LokoError);
  });

  it.skipIf(process.getuid?.() === 0)('refuses an unwritable ancestor', async () => {
    const ro = path.join(tmp, 'ro');
    await ensureAssetDir(ro);
    await chmod(ro, 0o555);
    await expect(ensureAssetDir(path.join(ro, 'a', 'b'), where)).rejects.toThrow(
      `cannot be created: ${ro} is not writable`,
    );
  });

  it('creates a missing directory', async () => {
    await ensureAssetDir(path.join(tmp, 'new', 'deep'));
  });
});
