/**
 * Ctrl-C and kill -9: the first SIGINT stops at the next safe point with exit 130, a second one
 * exits at once with 130, and after either (or a kill -9) a re-run converges without duplicates.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  baseEnv,
  loko,
  quickstartCopy,
  requireBuild,
  start,
  startEmulatorProcess,
  type StartedEmulator,
} from './helpers.js';

const PROJECT = '5f1c3a0e-2d4b-4e6f-9a8b-7c6d5e4f3a21';

/** Asserts the cluster is converged: plan has nothing to do (a duplicate would be a delete). */
async function expectConverged(args: string[], env?: NodeJS.ProcessEnv): Promise<void> {
  const plan = await loko(['cluster', 'plan', ...args, '-o', 'json'], { env });
  expect(plan.stderr).not.toMatch(/error:/);
  const doc = JSON.parse(plan.stdout) as { changes: boolean; actions: Array<{ hostname: string }> };
  expect(doc.changes).toBe(false);
  expect(doc.actions).toHaveLength(4);
  expect(plan.code).toBe(0);
}

describe('interrupting apply (embedded emulator)', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
  });
  afterAll(async () => {
    await work?.cleanup();
  });

  it('SIGINT while waiting exits 130 at a safe point; the re-run converges', async () => {
    // Real-time emulator clock so the wait phase lasts long enough to be interrupted.
    const run = start(['cluster', 'apply', '-c', work.dir, '--emulator', '--yes'], {
      env: baseEnv({ LOKO_EMULATOR_TIME_SCALE: '1' }),
    });
    await run.waitFor('Wait for devices to become active');
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('interrupted: stopped at a safe point');
    expect(r.stdout).toBe('');

    const again = await loko(['cluster', 'apply', '-c', work.dir, '--emulator', '--yes']);
    expect(again.stderr).not.toMatch(/error:/);
    expect(again.code).toBe(0);
    await expectConverged(['-c', work.dir, '--emulator']);
  });

  it('kill -9 during creates, then a re-run: no duplicate device and no stuck lock', async () => {
    await loko(['cluster', 'destroy', '-c', work.dir, '--emulator', '--yes']);
    const run = start(['cluster', 'apply', '-c', work.dir, '--emulator', '--yes']);
    await run.waitFor('Create, update and delete devices');
    run.child.kill('SIGKILL');
    await run.done;

    const again = await loko(['cluster', 'apply', '-c', work.dir, '--emulator', '--yes']);
    expect(again.stderr).not.toMatch(/error:/);
    expect(again.code).toBe(0);
    await expectConverged(['-c', work.dir, '--emulator']);
  });
});

describe('a second SIGINT (separate emulator with slow creates)', () => {
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
    await emu?.stop();
    await work?.cleanup();
  });

  it('exits 130 at once while in-flight calls would still be awaited; the re-run converges', async () => {
    // Creates hang, then their connection is reset without creating anything.
    await emu.control('POST', '/faults', {
      method: 'POST',
      route: '/projects/:id/devices',
      latencyMs: 20_000,
      reset: true,
      times: 4,
    });
    // A separate emulator without its Kubernetes twin (baseEnv): machines only.
    const run = start(['cluster', 'apply', '-c', work.dir, '--yes', '--machines-only'], { env });
    await run.waitFor('Create, update and delete devices');
    run.child.kill('SIGINT');
    await run.waitFor('stopping at the next safe point');
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    // The graceful path's final message never came: the second Ctrl-C did not wait.
    expect(r.stderr).not.toContain('stopped at a safe point');

    await emu.control('DELETE', '/faults');
    const again = await loko(['cluster', 'apply', '-c', work.dir, '--yes', '--machines-only'], {
      env,
    });
    expect(again.stderr).not.toMatch(/error:/);
    expect(again.code).toBe(0);
    await expectConverged(['-c', work.dir], env);
  });
});
