/**
 * The same config against a separately started `loko emulator start`, over real HTTP with
 * METAL_API_URL / METAL_AUTH_TOKEN: apply, a provisioning failure that names the hostname and
 * reason (the re-run replaces the device), API economy while waiting, and destroy.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseEnv,
  loko,
  quickstartCopy,
  requireBuild,
  startEmulatorProcess,
  type StartedEmulator,
} from './helpers.js';

const PROJECT = '5f1c3a0e-2d4b-4e6f-9a8b-7c6d5e4f3a21';

describe('against `loko emulator start` over HTTP', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  let emu: StartedEmulator;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
    emu = await startEmulatorProcess(path.dirname(work.dir), PROJECT, ['--time-scale', '10']);
    env = baseEnv({ METAL_API_URL: emu.url, METAL_AUTH_TOKEN: emu.token });
  });
  afterAll(async () => {
    if (emu) {
      const r = await emu.stop();
      expect(r.code).toBe(0);
    }
    await work?.cleanup();
  });

  it('the emulator wrote a ready file and printed an export line on stderr', async () => {
    expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metal\/v1$/);
    expect(emu.projectId).toBe(PROJECT);
    expect(emu.proc.stderr()).toContain(`export METAL_API_URL=${emu.url} METAL_AUTH_TOKEN=`);
  });

  it('a failed device stops apply naming hostname and reason; the re-run replaces it', async () => {
    await emu.control('POST', '/provision-failures', {
      hostname: 'quickstart-general-1',
      reason: 'burn-in found a bad DIMM',
    });
    // The emulator runs without its Kubernetes twin (baseEnv): machines only.
    const r = await loko(['cluster', 'apply', '-c', work.dir, '--yes', '--machines-only'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('quickstart-general-1');
    expect(r.stderr).toContain('burn-in found a bad DIMM');
    expect(r.stderr).not.toContain(emu.token);

    const plan = await loko(['cluster', 'plan', '-c', work.dir, '-o', 'json'], { env });
    expect(plan.code).toBe(2);
    const doc = JSON.parse(plan.stdout) as {
      actions: Array<{ action: string; hostname: string; reason?: string }>;
    };
    expect(doc.actions.filter((a) => a.action !== 'noop')).toEqual([
      expect.objectContaining({
        action: 'replace',
        hostname: 'quickstart-general-1',
        reason: 'failed',
      }),
    ]);

    const again = await loko(['cluster', 'apply', '-c', work.dir, '--yes', '--machines-only'], {
      env,
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/quickstart-general-1\s.*active/);
    expect((await loko(['cluster', 'plan', '-c', work.dir], { env })).code).toBe(0);
  });

  it('waiting costs list calls, not a GET per device per round', async () => {
    const summary = (await emu.control('GET', '/requests/summary')) as {
      routes: Array<{ method: string; route: string; count: number }>;
    };
    const count = (method: string, suffix: string): number =>
      summary.routes
        .filter((r) => r.method === method && r.route.endsWith(suffix))
        .reduce((n, r) => n + r.count, 0);
    expect(count('GET', '/projects/:id/devices')).toBeGreaterThan(0);
    // At most one GET for the failed device's reason; none for polling.
    expect(count('GET', '/devices/:id')).toBeLessThanOrEqual(1);
    expect(count('POST', '/projects/:id/devices')).toBe(5); // 4 + the replacement
  });

  it('destroy over HTTP leaves nothing', async () => {
    const r = await loko(['cluster', 'destroy', '-c', work.dir, '--yes'], { env });
    expect(r.code).toBe(0);
    expect((await loko(['cluster', 'plan', '-c', work.dir], { env })).code).toBe(2);
    const summary = JSON.parse(await readFile(path.join(work.assets, 'cluster.json'), 'utf8')) as {
      clusterName: string;
    };
    expect(summary.clusterName).toBe('quickstart');
  });
});

describe('against an endpoint that serves no Kubernetes API', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  let emu: StartedEmulator;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
    // Without its Kubernetes twin (baseEnv): nothing answers on the Elastic IP.
    emu = await startEmulatorProcess(path.dirname(work.dir), PROJECT, ['--time-scale', '100']);
    env = baseEnv({ METAL_API_URL: emu.url, METAL_AUTH_TOKEN: emu.token });
  });
  afterAll(async () => {
    await emu?.stop();
    await work?.cleanup();
  });

  it('apply provisions the machines, waits for the API and exits 1 after --timeout naming it', async () => {
    const r = await loko(['cluster', 'apply', '-c', work.dir, '--yes', '--timeout', '0.25'], {
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error: timed out after 15 s waiting for the Kubernetes API at https:\/\/127\.\d+\.\d+\.\d+:6443: connect ECONNREFUSED/,
    );
    expect(r.stderr).toContain('quickstart-controller-0');
    // The machines and the Elastic IP are there: a re-run only waits again.
    const plan = await loko(['cluster', 'plan', '-c', work.dir, '-o', 'json'], { env });
    expect(plan.code).toBe(0);
    expect((await loko(['cluster', 'destroy', '-c', work.dir, '--yes'], { env })).code).toBe(0);
  });
});
