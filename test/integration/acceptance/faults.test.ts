/**
 * Acceptance (issue 2): with 429 bursts (Retry-After 1 s) and 5xx bursts (500, 503) injected on
 * device creates and device lists, inside the client's retry budget, a 1+30 apply converges in the
 * same run: exit 0, every device active, no duplicate hostname. The request log shows that after
 * each 429 the next request on that route came at least Retry-After later.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../../harness/emulator.js';
import {
  DEVICE_LIST,
  PROJECT,
  clusterDir,
  describeGaps,
  duplicates,
  expectExit,
  listDevices,
  remoteEnv,
  requireBuild,
  retryAfterGaps,
  start,
  tally,
  type ClusterDir,
} from './helpers.js';

/** Timestamps in the log have ms precision; allow that much rounding, nothing more. */
const CLOCK_GRANULARITY_MS = 2;

describe('429 and 5xx bursts inside the retry budget', () => {
  let emu: TestEmulator;
  let cluster: ClusterDir;

  beforeAll(async () => {
    requireBuild();
    emu = await startTestEmulator({ projectId: PROJECT, timeScale: 50, twin: 'off' });
    cluster = await clusterDir('faulty', { workers: 30 });
  });
  afterAll(async () => {
    await emu?.stop();
    await cluster?.cleanup();
  });

  it('apply converges in the same run and waits at least Retry-After after each 429', async () => {
    const create = { method: 'POST', route: '/projects/:id/devices' } as const;
    const list = { method: 'GET', route: '/projects/:id/devices' } as const;
    // Rules apply in order: each burst hits consecutive matching requests. A single request can
    // meet at most 6 faults here, inside the client's 6 retries. The client resends a create only
    // after a 429; a 5xx on a create goes to the executor, which re-lists by tag and creates again.
    for (const rule of [
      { ...create, status: 429, retryAfterSeconds: 1, times: 3 },
      { ...create, status: 503, times: 2 },
      { ...create, status: 500, times: 1 },
      { ...list, status: 429, retryAfterSeconds: 1, times: 2 },
    ] as const)
      await emu.control.addFault(rule);

    const since = await emu.control.lastSeq();
    const run = start(['cluster', 'apply', '-c', cluster.dir, '--yes', '--machines-only'], {
      env: remoteEnv(emu),
    });
    // The 429 burst on lists lands on the first list (reading the state). Once creates have
    // started, a 5xx burst for the lists of the wait phase.
    for (;;) {
      const log = await emu.control.requests(since);
      if (log.some((e) => e.method === 'POST' && e.route.endsWith(create.route))) break;
      await delay(25);
    }
    await emu.control.addFault({ ...list, status: 503, times: 2 });
    await emu.control.addFault({ ...list, status: 500, times: 1 });
    const r = await run.done;
    expectExit(r, 0);

    const log = await emu.control.requests(since);
    const gaps = retryAfterGaps(log);
    console.info(`apply with faults: ${log.length} calls\n${tally(log)}\n${describeGaps(gaps)}`);

    // Every injected fault was met.
    expect(await emu.control.faults()).toEqual([]);
    const statuses = (method: string) =>
      log.filter((e) => e.method === method && e.route === DEVICE_LIST).map((e) => e.status);
    expect(statuses('POST').filter((s) => s === 429)).toHaveLength(3);
    expect(statuses('POST').filter((s) => s >= 500)).toHaveLength(3);
    expect(statuses('GET').filter((s) => s === 429)).toHaveLength(2);
    expect(statuses('GET').filter((s) => s >= 500)).toHaveLength(3);
    // One accepted create per device: nothing was created twice.
    expect(statuses('POST').filter((s) => s === 201)).toHaveLength(31);

    const devices = await listDevices(emu.api, cluster.name);
    expect(duplicates(devices)).toEqual([]);
    expect(devices.map((d) => d.hostname).sort()).toEqual([...cluster.hostnames].sort());
    expect(devices.every((d) => d.state === 'active')).toBe(true);

    // After each 429 the next request on its route came at least Retry-After later; so did the
    // next request on any route (the client holds all its requests, not just the refused one).
    expect(gaps).toHaveLength(5);
    for (const g of [...gaps, ...retryAfterGaps(log, { anyRoute: true })]) {
      expect(g.next, describeGaps([g])).toBeDefined();
      expect(g.gapMs, describeGaps([g])).toBeGreaterThanOrEqual(
        g.retryAfterMs - CLOCK_GRANULARITY_MS,
      );
    }
  });
});
