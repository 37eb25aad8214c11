import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, writeReadyFile } from '../../../src/emulator/index.js';
import { deviceInput, startTestEmulator, withEmulator, wrap } from '../../harness/emulator.js';

describe('persistence', () => {
  it('keeps devices across a restart from the state file; time moves on', async () => {
    const first = await startTestEmulator();
    try {
      const created = await first.api(
        'POST',
        `/projects/${first.projectId}/devices`,
        deviceInput({ hostname: 'persisted' }),
      );
      expect(created.status).toBe(201);
      await first.control.advanceClock(2); // provisioning
      expect((await first.api('GET', `/devices/${created.body.id}`)).body.state).toBe(
        'provisioning',
      );
      const eip = await first.api('POST', `/projects/${first.projectId}/ips`, {
        type: 'public_ipv4',
        metro: 'sv',
        quantity: 1,
      });
      await first.close();

      const mode = (await stat(first.statePath)).mode & 0o777;
      expect(mode).toBe(0o600);

      const second = wrap(
        await startEmulator({ statePath: first.statePath }),
        first.dir,
        first.statePath,
      );
      try {
        expect(second.token).toBe(first.token);
        expect(second.projectId).toBe(first.projectId);
        const d = await second.api('GET', `/devices/${created.body.id}`);
        expect(d.status).toBe(200);
        expect(d.body.hostname).toBe('persisted');
        // 2 s of the 4 s have passed (persisted clock offset); 2 more make it active.
        await second.control.advanceClock(2.5);
        const active = (await second.api('GET', `/devices/${created.body.id}`)).body;
        expect(active.state).toBe('active');
        expect(active.ip_addresses).toHaveLength(3);
        expect((await second.api('GET', `/ips/${eip.body.id}`)).body.network).toBe(
          eip.body.network,
        );
      } finally {
        await second.close();
      }
    } finally {
      await rm(first.dir, { recursive: true, force: true });
    }
  });

  it('starts fresh without a state path and creates the state file when absent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loko-emu-fresh-'));
    try {
      const statePath = join(dir, 'sub', 'state.json');
      const emu = await startEmulator({ statePath, token: 'fixed-token' });
      const saved = JSON.parse(await readFile(statePath, 'utf8'));
      expect(saved.state.token).toBe('fixed-token');
      await emu.close();
      const noState = await startEmulator();
      expect(noState.token).not.toBe('fixed-token');
      await noState.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('server options', () => {
  it('listens on loopback only', async () => {
    await expect(startEmulator({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
    await expect(startEmulator({ host: '192.168.1.1' })).rejects.toThrow(/loopback/);
  });

  it('uses the given project id (a UUID) and refuses a state file of another project', async () => {
    const projectId = 'A1B2C3D4-0000-4000-8000-000000000001';
    await expect(startEmulator({ projectId: 'my-project' })).rejects.toThrow(/UUID/);
    await withEmulator(
      async (emu) => {
        expect(emu.projectId).toBe(projectId.toLowerCase());
        expect((await emu.api('GET', `/projects/${projectId.toLowerCase()}`)).status).toBe(200);
        await emu.close();
        await expect(
          startEmulator({
            statePath: emu.statePath,
            projectId: '00000000-0000-4000-8000-000000000002',
          }),
        ).rejects.toThrow(/holds project/);
      },
      { projectId },
    );
  });

  it('gives two instances different loopback blocks', async () => {
    await withEmulator(async (a) => {
      await withEmulator(async (b) => {
        const first = async (emu: typeof a) => {
          const d = await emu.api('POST', `/projects/${emu.projectId}/devices`, deviceInput());
          await emu.control.advanceClock(5);
          return (await emu.api('GET', `/devices/${d.body.id}`)).body.ip_addresses[0]
            .address as string;
        };
        const [ipA, ipB] = [await first(a), await first(b)];
        expect(ipA.split('.')[1]).not.toBe(ipB.split('.')[1]);
        expect(a.url).not.toBe(b.url);
      });
    });
  });

  it('writes a ready file with url, token and project id (0600)', async () => {
    await withEmulator(async (emu) => {
      const path = join(emu.dir, 'ready.json');
      await writeReadyFile(path, emu);
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
        url: emu.url,
        token: emu.token,
        projectId: emu.projectId,
      });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metal\/v1$/);
      expect(emu.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_emulator$/);
    });
  });
});
