/**
 * Acceptance (issue 2): destroy is idempotent over real HTTP. A device that answers 404 to its
 * DELETE (it vanished between the inventory and the delete) counts as done; a second destroy
 * succeeds and makes no DELETE call.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../../harness/emulator.js';
import {
  PROJECT,
  clusterDir,
  expectExit,
  listDevices,
  remoteEnv,
  requireBuild,
  runLogged,
  start,
  tally,
  type ClusterDir,
} from './helpers.js';

describe('idempotent destroy', () => {
  let emu: TestEmulator;
  let cluster: ClusterDir;

  beforeAll(async () => {
    requireBuild();
    emu = await startTestEmulator({ projectId: PROJECT, timeScale: 50, twin: 'off' });
    cluster = await clusterDir('gone', { workers: 5 });
    expectExit(await runLogged(emu, cluster, 'apply'), 0);
  });
  afterAll(async () => {
    await emu?.stop();
    await cluster?.cleanup();
  });

  it('a device that answers 404 on DELETE counts as done', async () => {
    const devices = await listDevices(emu.api, cluster.name);
    expect(devices).toHaveLength(6);
    const victim = devices.find((d) => d.hostname === 'gone-workers-2')!;
    // Hold loko's DELETE of the victim at the emulator; meanwhile the device goes away for good.
    await emu.control.addFault({
      method: 'DELETE',
      pathPrefix: `/devices/${victim.id}`,
      latencyMs: 2000,
    });

    const since = await emu.control.lastSeq();
    const run = start(['cluster', 'destroy', '-c', cluster.dir, '--yes'], { env: remoteEnv(emu) });
    while ((await emu.control.faults()).length > 0) await delay(20);
    expect((await emu.api('DELETE', `/devices/${victim.id}`)).status).toBe(204);
    await emu.control.advanceClock(60); // past deprovisioning: the device is gone (404)
    const r = await run.done;
    const log = await emu.control.requests(since);
    console.info(`destroy with a vanished device:\n${tally(log)}`);

    expectExit(r, 0);
    expect(r.stdout).toContain('Destroyed cluster "gone": 6 devices');
    const victimDeletes = log.filter(
      (e) => e.method === 'DELETE' && e.path.startsWith(`/metal/v1/devices/${victim.id}`),
    );
    // The test's own DELETE (204), then loko's, released after the device was gone (404).
    expect(victimDeletes.map((e) => e.status).sort()).toEqual([204, 404]);
    // loko's five other device deletes and the test's own; then the control-plane Elastic IP.
    const deletes = log.filter((e) => e.method === 'DELETE' && e.status === 204);
    expect(deletes.filter((e) => e.path.startsWith('/metal/v1/devices/'))).toHaveLength(6);
    expect(deletes.filter((e) => e.path.startsWith('/metal/v1/ips/'))).toHaveLength(1);
    expect(await listDevices(emu.api, cluster.name)).toEqual([]);
  });

  it('destroy again succeeds with nothing to do and no DELETE call', async () => {
    const r = await runLogged(emu, cluster, 'destroy');
    expectExit(r, 0);
    expect(r.stdout).toContain('Nothing to destroy');
    expect(r.requests.filter((e) => e.method === 'DELETE')).toEqual([]);
    expect(r.requests.filter((e) => e.method !== 'GET')).toEqual([]);
    console.info(`second destroy: ${r.requests.length} calls\n${tally(r.requests)}`);
  });
});
