/**
 * The quick start end to end against the embedded emulator: apply, apply again (no change),
 * plan (exit 0), JSON output, refusal without --yes on a non-TTY, destroy, plan (exit 2).
 * Machine behaviour only: the emulator runs without its Kubernetes twin here (baseEnv's
 * LOKO_KUBE_BIN_DIR), so apply stops after the machines and says why; the Kubernetes flow is
 * test/e2e/kubernetes.test.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loko, quickstartCopy, requireBuild } from './helpers.js';

const HOSTS = [
  'quickstart-controller-0',
  'quickstart-general-0',
  'quickstart-general-1',
  'quickstart-edge-0',
];

describe('cluster lifecycle with --emulator', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  let c: string[];

  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
    c = ['-c', work.dir, '--emulator'];
  });
  afterAll(async () => {
    await work?.cleanup();
  });

  it('apply --yes creates every device and prints where things are', async () => {
    const r = await loko(['cluster', 'apply', ...c, '--yes']);
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    for (const h of HOSTS) expect(r.stdout).toMatch(new RegExp(`${h}\\s.*active\\s+127\\.`));
    expect(r.stdout).toMatch(new RegExp(`^Assets: +${work.assets}$`, 'm'));
    expect(r.stdout).toContain('loko cluster destroy');
    // Without the twin's binaries: one line naming the build command, then machines only.
    expect(r.stderr.split('\n').filter((l) => l.includes('npm run kube:build'))).toHaveLength(1);
    expect(r.stdout).toContain("Kubernetes phases skipped: the emulator's Kubernetes twin is off.");
    expect(r.stdout).toMatch(/Kubernetes: {2}https:\/\/127\.\d+\.\d+\.\d+:6443/);
    expect(r.stderr).not.toContain('Wait for the Kubernetes API');
    // Progress goes to stderr, never to stdout.
    expect(r.stderr).toContain('Wait for devices to become active');
    expect(r.stdout).not.toContain('Wait for devices');
    const summary = JSON.parse(await readFile(path.join(work.assets, 'cluster.json'), 'utf8')) as {
      devices: Array<{ hostname: string; state: string }>;
    };
    expect(summary.devices.map((d) => [d.hostname, d.state])).toEqual(
      HOSTS.map((h) => [h, 'active']),
    );
    expect(JSON.stringify(summary)).not.toMatch(/token/i);
    // The control-plane Elastic IP is reserved and on controller 0.
    expect((summary as { controlPlaneEndpoint?: string }).controlPlaneEndpoint).toMatch(/^127\./);
  });

  it('a second apply changes nothing, and plan then exits 0', async () => {
    const again = await loko(['cluster', 'apply', ...c, '--yes', '-o', 'json']);
    expect(again.code).toBe(0);
    const doc = JSON.parse(again.stdout) as {
      changes: boolean;
      counts: Record<string, number>;
      summary: { devices: unknown[] };
    };
    expect(doc.changes).toBe(false);
    expect(doc.counts).toEqual({ create: 0, update: 0, replace: 0, delete: 0, noop: 4 });
    expect(doc.summary.devices).toHaveLength(4);

    const plan = await loko(['cluster', 'plan', ...c]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes');
  });

  it('-o json prints exactly one JSON document on stdout', async () => {
    const plan = await loko(['cluster', 'plan', ...c, '-o', 'json']);
    expect(plan.code).toBe(0);
    const doc = JSON.parse(plan.stdout) as { actions: Array<{ action: string; hostname: string }> };
    expect(doc.actions.map((a) => `${a.action} ${a.hostname}`)).toEqual(
      HOSTS.map((h) => `noop ${h}`),
    );
  });

  it('destroy on a non-TTY without --yes refuses and deletes nothing', async () => {
    const r = await loko(['cluster', 'destroy', ...c]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--yes');
    expect((await loko(['cluster', 'plan', ...c])).code).toBe(0);
  });

  it('destroy --yes removes every device; plan then exits 2', async () => {
    const r = await loko(['cluster', 'destroy', ...c, '--yes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Destroyed cluster "quickstart": 4 devices, 1 IP reservation and 0 API keys deleted.',
    );
    const plan = await loko(['cluster', 'plan', ...c, '-o', 'json']);
    expect(plan.code).toBe(2);
    const doc = JSON.parse(plan.stdout) as {
      counts: { create: number };
      mutations: Array<{ description: string }>;
    };
    expect(doc.counts.create).toBe(4);

    // The plan's dry run lists exactly the API writes the next apply performs.
    const apply = await loko(['cluster', 'apply', ...c, '--yes', '-o', 'json']);
    expect(apply.code).toBe(0);
    const done = JSON.parse(apply.stdout) as { mutations: Array<{ description: string }> };
    expect(done.mutations.map((m) => m.description).sort()).toEqual(
      doc.mutations.map((m) => m.description).sort(),
    );
    // 4 devices, and the control-plane Elastic IP: reserved, then assigned to controller 0.
    expect(done.mutations).toHaveLength(6);
    expect(done.mutations.map((m) => m.description)).toContain(
      'assign the control-plane Elastic IP to quickstart-controller-0',
    );
    await loko(['cluster', 'destroy', ...c, '--yes']);
    const again = await loko(['cluster', 'destroy', ...c, '--yes']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Nothing to destroy');
  });
});
