/**
 * The twin's process lifecycle outside one emulator's life:
 * - `loko emulator start --state F` (the built CLI) runs the twin next to F and stops it on
 *   SIGTERM and on SIGINT (the emulator's close path: the record is emptied, no pid survives);
 * - a restart on the same state resumes the cluster from the etcd data kept beside F;
 * - an embedded-style emulator (`onClose: 'keep'`) leaves the processes running, and `stopTwin`
 *   stops them and removes the twin's data.
 * Needs `npm run build` (like the e2e tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, stopTwin, twinStatus } from '../../../src/emulator/index.js';
import {
  createDevice,
  describeTwin,
  isReady,
  kubeClient,
  makeCluster,
  metalHandle,
  nodesOf,
  pidAlive,
  waitFor,
  type ClusterFixture,
} from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin', 'loko');
const NAME = 'solo';

interface Cli {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
  ready: { url: string; token: string; projectId: string };
}

async function startCli(
  dir: string,
  statePath: string,
  tag: string,
  extra: { args?: string[]; env?: Record<string, string> } = {},
): Promise<Cli> {
  const readyFile = path.join(dir, `${tag}.ready.json`);
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...extra.env };
  // The gates' defaults are what the first start checks.
  if (!extra.env?.LOKO_TWIN_REQUIRE_CCM) delete env.LOKO_TWIN_REQUIRE_CCM;
  if (!extra.env?.LOKO_TWIN_REQUIRE_CNI) delete env.LOKO_TWIN_REQUIRE_CNI;
  const child = spawn(
    process.execPath,
    [
      BIN,
      'emulator',
      'start',
      '--state',
      statePath,
      '--ready-file',
      readyFile,
      ...(extra.args ?? []),
    ],
    { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const ready = await waitFor(
    `loko emulator start (${tag})`,
    async () => {
      if (child.exitCode !== null) throw new Error(`exited early:\n${err}`);
      if (!existsSync(readyFile)) return undefined;
      return JSON.parse(await readFile(readyFile, 'utf8')) as Cli['ready'];
    },
    60_000,
  );
  return { child, stderr: () => err, exited, ready };
}

describeTwin('Kubernetes twin: process lifecycle', () => {
  let dir: string;
  let statePath: string;
  let twinDir: string;
  let fx: ClusterFixture;
  let cli: Cli | undefined;
  const controller = `${NAME}-controller-0`;

  const pidsOf = async () =>
    (await twinStatus(twinDir)).clusters.flatMap((c) => c.components.map((p) => p.pid));
  const serving = () =>
    waitFor('the API on the Elastic IP', async () => {
      const r = await kubeClient(fx)
        .get('/readyz')
        .catch(() => undefined);
      return r?.status === 200;
    });

  beforeAll(async () => {
    if (!existsSync(path.join(ROOT, 'dist', 'cli.js'))) {
      throw new Error('dist/ is missing: run `npm run build` first');
    }
    dir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-solo-'));
    statePath = path.join(dir, 'state.json');
    twinDir = dir;
  });

  afterAll(async () => {
    if (cli && cli.child.exitCode === null) {
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
    if (twinDir) await stopTwin(twinDir);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (fx) await rm(fx.assetDir, { recursive: true, force: true });
  });

  it('`loko emulator start` runs the twin beside its state file, gates on, and stops it on SIGTERM', async () => {
    cli = await startCli(dir, statePath, 'first');
    const metal = metalHandle(cli.ready);
    fx = await makeCluster(metal, { name: NAME, controllers: 1 });
    await createDevice(metal, controller, fx.userdata.get(controller)!);
    // Boot it: the control API's clock jump (sent with the token, which it may ask for).
    const clock = await fetch(cli.ready.url.replace('/metal/v1', '/_emulator/clock'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': cli.ready.token },
      body: JSON.stringify({ advanceSeconds: 10 }),
    });
    expect(clock.status).toBe(200);
    await serving();
    // Both gates are on by default: no CCM and no CNI run, so the node is uninitialised and
    // NotReady for want of a network plugin.
    const node = await waitFor('the controller node NotReady', async () => {
      const n = (await nodesOf(kubeClient(fx))).get(controller);
      const ready = n?.status.conditions?.find((c) => c.type === 'Ready');
      return ready?.status === 'False' ? n : undefined;
    });
    expect(node.status.conditions?.find((c) => c.type === 'Ready')?.message).toContain(
      'cni plugin not initialized',
    );
    expect(node.spec.providerID).toBeUndefined();
    expect((node.spec.taints ?? []).map((t) => t.key)).toContain(
      'node.cloudprovider.kubernetes.io/uninitialized',
    );
    const pids = await pidsOf();
    expect(pids).toHaveLength(5);
    expect(pids.every(pidAlive)).toBe(true);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(pids.some(pidAlive)).toBe(false);
    // Stopped by the close path, which empties the record (not by the parent-death signal).
    const status = await twinStatus(twinDir);
    expect(status.clusters).toHaveLength(1);
    expect(status.clusters[0]!.components).toEqual([]);
  });

  it('a restart on the same state resumes the cluster from its data; SIGINT stops it', async () => {
    // The gates off, once by flag and once by environment variable.
    cli = await startCli(dir, statePath, 'second', {
      args: ['--no-cni-gate'],
      env: { LOKO_TWIN_REQUIRE_CCM: '0' },
    });
    await serving();
    // The node registered before the restart is still there (etcd's data was kept).
    expect((await nodesOf(kubeClient(fx))).has(controller)).toBe(true);
    // With both gates off now, it is let through: initialised and Ready.
    const node = await waitFor('the controller node initialised and Ready', async () => {
      const n = (await nodesOf(kubeClient(fx))).get(controller);
      return isReady(n) && n?.spec.providerID ? n : undefined;
    });
    expect((node.spec.taints ?? []).map((t) => t.key)).not.toContain(
      'node.cloudprovider.kubernetes.io/uninitialized',
    );
    const pids = await waitFor('all five components recorded', async () => {
      const p = await pidsOf();
      return p.length === 5 ? p : undefined;
    });

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(pids.some(pidAlive)).toBe(false);
    expect((await twinStatus(twinDir)).clusters[0]!.components).toEqual([]);
  });

  /**
   * Runs an emulator with onClose "keep" on the state until its twin serves, closes it, and
   * returns the twin's pids (all five alive).
   */
  async function runKeptTwin(lines: string[]): Promise<number[]> {
    const emu = await startEmulator({
      port: 0,
      statePath,
      twinOptions: { onClose: 'keep' },
      logger: { info: (m) => lines.push(m) },
    });
    try {
      await serving();
      // The start is complete once the twin has (re)registered controller 0's node; a start
      // still in progress would be abandoned by close().
      await waitFor('the twin to finish starting', async () =>
        lines.some((l) => l.includes('serving at')),
      );
    } finally {
      await emu.close();
    }
    const pids = await pidsOf();
    expect(pids).toHaveLength(5);
    expect(pids.every(pidAlive)).toBe(true);
    return pids;
  }

  it('with onClose "keep" the processes outlive the emulator; stopTwin stops them', async () => {
    const lines: string[] = [];
    const pids = await runKeptTwin(lines);
    expect((await twinStatus(twinDir)).clusters[0]).toMatchObject({ running: true, serving: true });

    expect(await stopTwin(twinDir)).toEqual({ stopped: 5 });
    expect(pids.some(pidAlive)).toBe(false);
    expect(existsSync(path.join(twinDir, 'twin'))).toBe(false);
    expect((await twinStatus(twinDir)).clusters).toEqual([]);
  });

  it('processes whose twin directory was deleted are stopped by the next twin that starts', async () => {
    // The device is still active: a new emulator starts a fresh control plane (stopTwin removed
    // the data), and leaves it running.
    const lines: string[] = [];
    const pids = await runKeptTwin(lines);
    // The asset dir goes away without `cluster destroy`.
    await rm(path.join(twinDir, 'twin'), { recursive: true, force: true });
    const other = await startEmulator({ port: 0, logger: { info: (m) => lines.push(m) } });
    try {
      await waitFor('the orphans to stop', async () => !pids.some(pidAlive), 30_000);
      expect(lines.some((l) => l.includes('whose directory is gone'))).toBe(true);
    } finally {
      await other.close();
    }
  });
});
