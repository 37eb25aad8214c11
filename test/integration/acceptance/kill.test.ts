/**
 * Acceptance (issue 2): never a duplicate device. A 1+8 apply against a separate `loko emulator
 * start` is killed with SIGKILL at random points (while the process starts, between creates,
 * with creates held in flight at the emulator so they land after the client died, and while it
 * waits), then re-run. After every kill and every re-run no hostname has two live devices; each
 * re-run converges to exactly the 9 desired devices, and over a round the API accepted exactly
 * one create per missing device.
 *
 * The points are drawn from a seeded generator: LOKO_TEST_SEED=<n> replays a failing sequence.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../../src/emulator/index.js';
import { startEmulatorProcess, type StartedEmulator } from '../../e2e/helpers.js';
import {
  DEVICE_LIST,
  PROJECT,
  clusterDir,
  duplicates,
  expectExit,
  listDevices,
  live,
  loko,
  remoteEnv,
  requireBuild,
  start,
  type ClusterDir,
  type ListedDevice,
} from './helpers.js';

const ROUNDS = 5;

/** mulberry32: a small seeded PRNG, so a failing sequence of kill points can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('kill -9 at random points during apply, then re-run', () => {
  let tmp: string;
  let emu: StartedEmulator;
  let cluster: ClusterDir;
  const seed = Number(process.env.LOKO_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const random = prng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

  const api = async (method: string, p: string) => {
    const res = await fetch(`${emu.url}${p}`, {
      method,
      headers: { 'x-auth-token': emu.token, accept: 'application/json' },
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
  const devices = (): Promise<ListedDevice[]> => listDevices(api, cluster.name);
  const lastSeq = async (): Promise<number> =>
    ((await emu.control('GET', '/requests?since=0')) as { lastSeq: number }).lastSeq;
  const requests = async (since: number): Promise<RequestLogEntry[]> =>
    ((await emu.control('GET', `/requests?since=${since}`)) as { requests: RequestLogEntry[] })
      .requests;
  const acceptedCreates = (log: RequestLogEntry[]): number =>
    log.filter((e) => e.method === 'POST' && e.route === DEVICE_LIST && e.status === 201).length;

  beforeAll(async () => {
    requireBuild();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'loko-acceptance-kill-'));
    emu = await startEmulatorProcess(tmp, PROJECT, ['--time-scale', '50']);
    cluster = await clusterDir('kill', { workers: 8 });
    console.info(`kill -9 rounds: LOKO_TEST_SEED=${seed}`);
  });
  afterAll(async () => {
    await emu?.stop();
    await cluster?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it(`${ROUNDS} rounds: never a duplicate, each re-run converges to exactly 9 devices`, async () => {
    const env = remoteEnv(emu);
    const desired = [...cluster.hostnames].sort();

    for (let round = 0; round < ROUNDS; round++) {
      // Start each round with some devices missing (all of them in the first round).
      if (round > 0) {
        const all = await devices();
        const victims = all.filter(() => random() < 0.6);
        if (victims.length === 0) victims.push(all[int(0, all.length - 1)]!);
        for (const d of victims) expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(204);
        await emu.control('POST', '/clock', { advanceSeconds: 30 }); // deprovisioned: gone
      }
      const missing = desired.length - live(await devices()).length;
      // In every other round, hold creates at the emulator so the kill lands while they are in
      // flight: the emulator creates those devices after the client is dead.
      const inFlight = round % 2 === 1 && missing > 0;
      const held = Math.min(3, missing);
      if (inFlight)
        await emu.control('POST', '/faults', {
          method: 'POST',
          route: '/projects/:id/devices',
          latencyMs: 400,
          times: held,
        });

      const since = await lastSeq();
      // Where to kill: after `afterCreates` answered creates (missing + 1: while waiting for
      // active), or, with creates held, once they have all reached the emulator.
      const afterCreates = int(0, missing + 1);
      const extraMs = int(0, 150);
      const reached = async (): Promise<boolean> => {
        if (inFlight)
          return (
            ((await emu.control('GET', '/faults')) as { faults: unknown[] }).faults.length === 0
          );
        const answered = (await requests(since)).filter(
          (e) => e.method === 'POST' && e.route === DEVICE_LIST,
        ).length;
        return answered >= Math.min(afterCreates, missing);
      };
      // The emulator runs without its Kubernetes twin (baseEnv): machines only.
      const run = start(['cluster', 'apply', '-c', cluster.dir, '--yes', '--machines-only'], {
        env,
      });
      let ended = false;
      void run.done.then(() => (ended = true));
      while (!ended && !(await reached())) await delay(10);
      await delay(extraMs);
      run.child.kill('SIGKILL');
      const killed = await run.done;
      // Let held creates land, then check: no hostname has two live devices, even mid-way.
      if (inFlight) await delay(500);
      const afterKill = await devices();
      const where = inFlight
        ? 'with creates in flight'
        : afterCreates > missing
          ? 'while waiting for active'
          : `after ${afterCreates} creates`;
      const point = `round ${round} (seed ${seed}): ${missing} missing, kill ${where} + ${extraMs} ms; ${
        killed.signal === 'SIGKILL' ? 'killed' : `had already exited ${killed.code}`
      }`;
      console.info(`${point}; ${live(afterKill).length} live devices after the kill`);
      expect(duplicates(afterKill), point).toEqual([]);
      // The held creates were done although their client was dead: the re-run must adopt them.
      if (inFlight)
        expect(live(afterKill).length, point).toBeGreaterThanOrEqual(9 - missing + held);
      await emu.control('DELETE', '/faults');

      const again = await loko(
        ['cluster', 'apply', '-c', cluster.dir, '--yes', '--machines-only'],
        { env },
      );
      expectExit(again, 0);
      const after = await devices();
      expect(duplicates(after), point).toEqual([]);
      expect(after.map((d) => d.hostname).sort(), point).toEqual(desired);
      expect(
        after.every((d) => d.state === 'active'),
        point,
      ).toBe(true);
      // Killed run + re-run together: exactly one accepted create per missing device.
      const log = await requests(since);
      expect(acceptedCreates(log), point).toBe(missing);
      expect(
        log.filter((e) => e.method === 'DELETE'),
        point,
      ).toEqual([]);
    }
  });
});
