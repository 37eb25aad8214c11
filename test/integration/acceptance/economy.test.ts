/**
 * Acceptance (issue 2): API economy of a 1 controller + 30 worker apply over real HTTP. It
 * converges within 400 calls; waiting for the devices costs one device list per round, never a
 * GET per device; a second apply makes no mutating call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../../harness/emulator.js';
import {
  DEVICE_LIST,
  DEVICE_ONE,
  PROJECT,
  clusterDir,
  count,
  expectExit,
  listDevices,
  mutations,
  requireBuild,
  runLogged,
  tally,
  type ClusterDir,
} from './helpers.js';

describe('1+30 apply: API economy', () => {
  let emu: TestEmulator;
  let cluster: ClusterDir;

  beforeAll(async () => {
    requireBuild();
    // A slower clock than the other acceptance tests (active 0.8 s after create): the last
    // creates are still provisioning when the wait starts, so waiting takes several rounds.
    emu = await startTestEmulator({ projectId: PROJECT, timeScale: 5, twin: 'off' });
    cluster = await clusterDir('econ', { workers: 30 });
  });
  afterAll(async () => {
    await emu?.stop();
    await cluster?.cleanup();
  });

  it('converges within 400 calls; waiting costs list calls, no per-device GETs', async () => {
    const r = await runLogged(emu, cluster, 'apply');
    expectExit(r, 0);
    const log = r.requests;
    console.info(`1+30 apply: ${log.length} API calls\n${tally(log)}`);

    expect(log.length).toBeLessThanOrEqual(400);
    expect(log.every((e) => e.status >= 200 && e.status < 300)).toBe(true);
    expect(count(log, 'POST', DEVICE_LIST)).toBe(31);

    // Lists: one to read the state, then one per wait round. With 31 devices, a GET per device
    // per round would be 31 x rounds; there is none at all.
    const lists = count(log, 'GET', DEVICE_LIST);
    const waitRounds = lists - 1;
    expect(waitRounds).toBeGreaterThanOrEqual(2);
    expect(count(log, 'GET', DEVICE_ONE)).toBe(0);
    // Lists are by tag (one page each for 31 devices).
    for (const e of log.filter((x) => x.method === 'GET' && x.route === DEVICE_LIST))
      expect(e.path).toContain(`tag=${encodeURIComponent('loko:cluster=econ')}`);

    const devices = await listDevices(emu.api, cluster.name);
    expect(devices.map((d) => d.hostname).sort()).toEqual([...cluster.hostnames].sort());
    expect(devices.every((d) => d.state === 'active')).toBe(true);
  });

  it('a second apply makes no POST, PUT, PATCH or DELETE', async () => {
    const r = await runLogged(emu, cluster, 'apply');
    expectExit(r, 0);
    console.info(`second apply: ${r.requests.length} API calls\n${tally(r.requests)}`);
    expect(mutations(r.requests)).toEqual([]);
    expect(count(r.requests, 'GET', DEVICE_ONE)).toBe(0);
    expect(r.requests.length).toBeLessThanOrEqual(10);
  });
});
