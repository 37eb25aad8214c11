import { describe, expect, it } from 'vitest';
import {
  applyCluster,
  applyPhases,
  planPhases,
} from '../../../src/platforms/equinixmetal/apply.js';
import { DRY_RUN_ADDRESS } from '../../../src/platforms/equinixmetal/executor.js';
import { DeviceFailedError, DeviceStoppedError } from '../../../src/platforms/equinixmetal/wait.js';
import { createPlainRunner } from '../../../src/tasks/phase.js';
import { InterruptedError, LokoError } from '../../../src/util/errors.js';
import { FakeApiError, FakeMetal } from './fake-metal.js';
import { cluster, pool } from './fixtures.js';
import { applyCtx, fastPoll, recordingReporter } from './helpers.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;

describe('apply', () => {
  it('creates every device, waits by listing (no per-device GETs) and summarises', async () => {
    const api = new FakeMetal();
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(ctx.summary?.devices.map((d) => [d.hostname, d.state, d.role])).toEqual([
      ['demo-controller-0', 'active', 'controller'],
      ['demo-general-0', 'active', 'worker'],
      ['demo-general-1', 'active', 'worker'],
      ['demo-edge-0', 'active', 'worker'],
    ]);
    expect(ctx.summary?.devices.every((d) => d.publicIPv4?.startsWith('127.'))).toBe(true);
    expect(api.calls.filter((c) => c === 'createDevice')).toHaveLength(4);
    expect(api.calls).not.toContain('getDevice');
    const lists = api.calls.filter((c) => c === 'listDevices').length;
    expect(lists).toBeLessThan(10);
  });

  it('a second run changes nothing', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const before = api.calls.length;
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(ctx.plan?.changes).toBe(false);
    const after = api.calls.slice(before);
    expect(
      after.filter((c) => ['createDevice', 'updateDevice', 'deleteDevice'].includes(c)),
    ).toEqual([]);
  });

  it('sends the create body from the desired device', async () => {
    const api = new FakeMetal();
    const ctx = applyCtx(api, cluster({ workerPools: [] }));
    await applyCluster(ctx, { runner, signal });
    const m = ctx.executor.recorded.find((x) => x.kind === 'create-device');
    expect(m).toMatchObject({
      kind: 'create-device',
      tag: 'loko:cluster=demo',
      input: {
        hostname: 'demo-controller-0',
        metro: 'sv',
        plan: 'c3.small.x86',
        operating_system: 'ubuntu_22_04',
        billing_cycle: 'hourly',
        tags: ['loko:cluster=demo', 'loko:role=controller', 'team:infra'],
        ssh_keys: [{ key: 'ssh-ed25519 AAAAC3Nza alice@laptop', label: 'alice@laptop' }],
      },
    });
  });

  it('creates explicit reservations before next-available ones', async () => {
    const api = new FakeMetal();
    const c = cluster({
      controllerCount: 1,
      reservationIdsDefault: 'next-available',
      workerPools: [pool('general', { count: 2, reservationIds: { 0: 'r-0', 1: 'r-1' } })],
    });
    api.addHardwareReservations(['r-0', 'r-1', 'r-free']);
    const ctx = applyCtx(api, c);
    await applyCluster(ctx, { runner, signal });
    const order = ctx.executor.recorded.flatMap((m) =>
      m.kind === 'create-device' ? [m.input.hardware_reservation_id] : [],
    );
    expect(order).toEqual(['r-0', 'r-1', 'next-available']);
  });

  it('stops with the hostname and reason of a failed device; the re-run replaces it', async () => {
    const api = new FakeMetal();
    api.failHostnames.set('demo-general-1', 'no hardware passed burn-in');
    const err = await applyCluster(applyCtx(api, cluster()), { runner, signal }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DeviceFailedError);
    expect((err as Error).message).toContain('demo-general-1');
    expect((err as Error).message).toContain('no hardware passed burn-in');

    api.failHostnames.clear();
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(ctx.plan?.actions.find((a) => a.type !== 'noop')).toMatchObject({
      type: 'replace',
      reason: 'failed',
      hostname: 'demo-general-1',
    });
    expect(ctx.summary?.devices.every((d) => d.state === 'active')).toBe(true);
    expect(
      api.live().filter((d) => d.hostname === 'demo-general-1' && d.state !== 'deprovisioning'),
    ).toHaveLength(1);
  });

  it('replaces a device on a hardware reservation only once the old one is gone', async () => {
    const api = new FakeMetal();
    api.deprovisionMs = 30_000;
    api.addHardwareReservations(['r-0']);
    const c = cluster({
      workerPools: [pool('general', { count: 1, reservationIds: { 0: 'r-0' } })],
    });
    api.failHostnames.set('demo-general-0', 'no hardware passed burn-in');
    await expect(applyCluster(applyCtx(api, c), { runner, signal })).rejects.toBeInstanceOf(
      DeviceFailedError,
    );
    api.failHostnames.clear();
    const seenAtCreate: string[] = [];
    api.createFault = (input) => {
      if (input.hostname === 'demo-general-0')
        seenAtCreate.push(
          ...api.live().flatMap((d) => (d.hostname === input.hostname ? [d.state] : [])),
        );
      return undefined;
    };
    const ctx = await applyCluster(applyCtx(api, c), { runner, signal });
    expect(ctx.plan?.actions.find((a) => a.type !== 'noop')).toMatchObject({
      type: 'replace',
      hostname: 'demo-general-0',
    });
    // Not even a deprovisioning device held the reservation when the replacement was created.
    expect(seenAtCreate).toEqual([]);
    // controller + worker, then one replacement: no create was refused for a busy reservation.
    expect(api.calls.filter((c) => c === 'createDevice')).toHaveLength(3);
    expect(ctx.summary?.devices.every((d) => d.state === 'active')).toBe(true);
  });

  it('fails at once, naming the fix, when a device is powered off (inactive/powering_off)', async () => {
    for (const state of ['inactive', 'powering_off']) {
      const api = new FakeMetal();
      api.stoppedHostnames.set('demo-general-1', state);
      const err = await applyCluster(applyCtx(api, cluster()), { runner, signal }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DeviceStoppedError);
      const id = api.live().find((d) => d.hostname === 'demo-general-1')!.id;
      expect((err as LokoError).message).toBe(
        `device demo-general-1 (${id}) is ${state} and will not become active by itself`,
      );
      expect((err as LokoError).hint).toContain(
        `POST /devices/${id}/actions {"type":"power_on"}, or from the Metal console`,
      );
      // The first round that saw it, not the --timeout (fastPoll: 120 s).
      expect(api.now).toBeLessThan(api.provisionMs + fastPoll.maxIntervalMs + 1);
    }
  });

  it('refuses replacements without allowReplace, before changing anything', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const c2 = cluster({
      workerPools: [pool('general', { nodeType: 'm3.large.x86' }), pool('edge', { count: 1 })],
    });
    const before = api.calls.length;
    const err = await applyCluster(applyCtx(api, c2), { runner, signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain(
      'demo-general-0: plan c3.small.x86 -> m3.large.x86',
    );
    expect((err as LokoError).hint).toContain('--allow-replace');
    expect(
      api.calls.slice(before).filter((c) => c === 'createDevice' || c === 'deleteDevice'),
    ).toEqual([]);

    const ctx = await applyCluster(applyCtx(api, c2, { allowReplace: true }), { runner, signal });
    expect(ctx.summary?.devices.filter((d) => d.plan === 'm3.large.x86')).toHaveLength(2);
    const gen0 = api
      .live()
      .filter((d) => d.hostname === 'demo-general-0' && d.state !== 'deprovisioning');
    expect(gen0).toHaveLength(1);
  });

  it('scales down by deleting the highest indexes', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [pool('general', { count: 4 })] })), {
      runner,
      signal,
    });
    const ctx = applyCtx(api, cluster({ workerPools: [pool('general', { count: 2 })] }));
    await applyCluster(ctx, { runner, signal });
    expect(ctx.executor.recorded.map((m) => m.kind === 'delete-device' && m.hostname)).toEqual([
      'demo-general-2',
      'demo-general-3',
    ]);
  });

  it('waits for a still-provisioning device before deleting it (422 otherwise)', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [] })), { runner, signal });
    api.seed(
      {
        hostname: 'demo-general-5',
        tags: ['loko:cluster=demo', 'loko:role=worker', 'loko:pool=general'],
      },
      'provisioning',
    );
    const ctx = applyCtx(api, cluster({ workerPools: [] }));
    await applyCluster(ctx, { runner, signal });
    expect(ctx.executor.recorded.filter((m) => m.kind === 'delete-device')).toHaveLength(1);
    expect(api.live().find((d) => d.hostname === 'demo-general-5')?.state).toBe('deprovisioning');
  });

  it('updates tags in place', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const ctx = applyCtx(api, cluster({ tags: ['team:platform'] }));
    await applyCluster(ctx, { runner, signal });
    expect(ctx.executor.recorded.map((m) => m.kind)).toEqual([
      'update-device',
      'update-device',
      'update-device',
      'update-device',
    ]);
    expect(api.live().every((d) => d.tags.includes('team:platform'))).toBe(true);
  });

  it('adopts the device after an uncertain create instead of creating a duplicate', async () => {
    const api = new FakeMetal();
    let faults = 0;
    api.createFault = (input) =>
      input.hostname === 'demo-general-0' && faults++ === 0
        ? { after: Object.assign(new Error('socket hang up'), { name: 'MetalTransportError' }) }
        : undefined;
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(api.live().filter((d) => d.hostname === 'demo-general-0')).toHaveLength(1);
    expect(ctx.summary?.devices.every((d) => d.state === 'active')).toBe(true);
  });

  it('retries a create only after re-listing proved it did not happen', async () => {
    const api = new FakeMetal();
    let faults = 0;
    api.createFault = (input) =>
      input.hostname === 'demo-edge-0' && faults++ === 0
        ? { before: new FakeApiError(503, 'unavailable') }
        : undefined;
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(api.live().filter((d) => d.hostname === 'demo-edge-0')).toHaveLength(1);
    expect(api.calls.filter((c) => c === 'createDevice')).toHaveLength(5);
  });

  it('does not retry a create the API rejected (422)', async () => {
    const api = new FakeMetal();
    api.createFault = (input) =>
      input.hostname === 'demo-edge-0' ? { before: new FakeApiError(422, 'bad plan') } : undefined;
    const events: string[] = [];
    const reporter = {
      status: () => {},
      warn: () => {},
      debug: () => {},
      item: (k: string, st: string, det?: string) => void events.push(`${k} ${st} ${det ?? ''}`),
    };
    const err = await applyCluster(applyCtx(api, cluster()), {
      runner: createPlainRunner(reporter),
      signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect(api.calls.filter((c) => c === 'createDevice')).toHaveLength(4);
    // The item fails with the API's message, not "not finished".
    expect(events.filter((e) => e.startsWith('demo-edge-0 ')).at(-1)).toMatch(
      /^demo-edge-0 failed creating demo-edge-0 was refused: bad plan/,
    );
  });

  it('names the config value a refused create (422) is about', async () => {
    const api = new FakeMetal();
    api.createFault = (input) =>
      input.hostname === 'demo-edge-0'
        ? { before: new FakeApiError(422, 'metro sv has no capacity for this plan') }
        : undefined;
    const err = (await applyCluster(applyCtx(api, cluster()), { runner, signal }).catch(
      (e: unknown) => e,
    )) as LokoError;
    expect(err.message).toContain(
      'creating demo-edge-0 was refused: metro sv has no capacity for this plan',
    );
    expect(err.message).toContain('metro sv at /cfg/cluster.lokocfg:3:3');
    expect(err.message).toContain('plan c3.small.x86');
    expect(err.hint).toBeTruthy();
  });

  it('keeps a replaced device open from its delete through its create', async () => {
    const api = new FakeMetal();
    const c = cluster({ workerPools: [pool('general', { count: 1 })] });
    api.failHostnames.set('demo-general-0', 'no hardware passed burn-in');
    await expect(applyCluster(applyCtx(api, c), { runner, signal })).rejects.toBeInstanceOf(
      DeviceFailedError,
    );
    api.failHostnames.clear();
    const events: string[] = [];
    const reporter = {
      status: () => {},
      warn: () => {},
      debug: () => {},
      item: (k: string, st: string, det?: string) => void events.push(`${k} ${st} ${det ?? ''}`),
    };
    await applyCluster(applyCtx(api, c), { runner: createPlainRunner(reporter), signal });
    const mine = events.filter((e) => e.startsWith('demo-general-0 '));
    const creating = mine.indexOf('demo-general-0 running creating');
    expect(creating).toBeGreaterThan(0);
    expect(mine.slice(0, creating).some((e) => e.startsWith('demo-general-0 done'))).toBe(false);
    expect(mine.slice(creating).some((e) => e.startsWith('demo-general-0 done created'))).toBe(
      true,
    );
  });

  it('cancellation stops at the next safe point with InterruptedError; the re-run converges', async () => {
    const api = new FakeMetal();
    const ac = new AbortController();
    const c = cluster({ workerPools: [pool('general', { count: 6 })] });
    const ctx = applyCtx(api, c, { signal: ac.signal });
    let creates = 0;
    api.createFault = () => {
      if (++creates === 3) ac.abort();
      return undefined;
    };
    const err = await applyCluster(ctx, { runner, signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InterruptedError);
    // In-flight creates finished; none started after the abort.
    const created = api.live().length;
    expect(created).toBeGreaterThanOrEqual(3);
    expect(created).toBeLessThan(7);

    api.createFault = undefined;
    const again = await applyCluster(applyCtx(api, c), { runner, signal });
    expect(again.summary?.devices.every((d) => d.state === 'active')).toBe(true);
    const hostnames = api.live().map((d) => d.hostname);
    expect(new Set(hostnames).size).toBe(hostnames.length);
    expect(hostnames).toHaveLength(7);
  });

  it('reports per-device progress', async () => {
    const api = new FakeMetal();
    const reporter = recordingReporter();
    await applyCluster(applyCtx(api, cluster()), { runner: createPlainRunner(reporter), signal });
    expect(reporter.items.get('demo-edge-0')).toEqual({ state: 'done', detail: 'active' });
  });
});

describe('executor chokepoint', () => {
  /** A cluster in a state that needs every kind of mutation. */
  function messyFake(): FakeMetal {
    const api = new FakeMetal();
    const t = (pool: string) => [
      'loko:cluster=demo',
      'loko:role=worker',
      `loko:pool=${pool}`,
      'team:infra',
    ];
    api.seed({
      hostname: 'demo-controller-0',
      tags: ['loko:cluster=demo', 'loko:role=controller'],
    }); // tag drift
    api.seed({ hostname: 'demo-general-0', tags: t('general'), plan: { slug: 'm3.large.x86' } }); // replace
    api.seed({ hostname: 'demo-general-1', tags: t('general') }, 'failed'); // replace (failed)
    api.seed({ hostname: 'demo-general-2', tags: t('general') }); // scale down
    api.seed({ hostname: 'demo-old-0', tags: t('old') }); // removed pool
    return api;
  }

  it('dry-run records exactly the mutations apply performs, and calls no mutating API', async () => {
    const dryApi = messyFake();
    const dry = applyCtx(dryApi, cluster(), { dryRun: true, allowReplace: true });
    await runner.run([...planPhases, ...applyPhases], dry, signal);
    expect(
      dryApi.calls.filter((c) => ['createDevice', 'updateDevice', 'deleteDevice'].includes(c)),
    ).toEqual([]);

    const liveApi = messyFake();
    const live = applyCtx(liveApi, cluster(), { allowReplace: true });
    await runner.run([...planPhases, ...applyPhases], live, signal);

    // Only what a plan cannot know differs: the userdata (rendered once the PKI is loaded; never
    // in a plan) and the address of the Elastic IP the live run reserved.
    const eip = liveApi.reservations[0]!.network;
    const norm = (ms: typeof dry.executor.recorded) =>
      ms.map((m) =>
        JSON.stringify(m, (k, v: unknown) => (k === 'userdata' ? undefined : v)).replace(
          new RegExp(`${DRY_RUN_ADDRESS}|${eip.replace(/\./g, '\\.')}`, 'g'),
          '<eip>',
        ),
      );
    expect(norm(dry.executor.recorded)).toEqual(norm(live.executor.recorded));
    expect(
      live.executor.recorded.every((m) => m.kind !== 'create-device' || m.input.userdata),
    ).toBe(true);
    expect(
      dry.executor.recorded.map(
        (m) =>
          `${m.kind} ${'hostname' in m ? m.hostname : m.kind === 'create-device' ? m.input.hostname : ''}`,
      ),
    ).toEqual([
      'reserve-ip ',
      'update-device demo-controller-0',
      'delete-device demo-general-2',
      'delete-device demo-old-0',
      'delete-device demo-general-0',
      'delete-device demo-general-1',
      'create-device demo-general-0',
      'create-device demo-general-1',
      'create-device demo-edge-0',
      'assign-ip demo-controller-0',
    ]);
    // Every API mutation of the live run went through the executor.
    const liveMutations = liveApi.calls.filter((c) =>
      [
        'createDevice',
        'updateDevice',
        'deleteDevice',
        'createIPReservation',
        'assignIP',
        'deleteIP',
      ].includes(c),
    );
    expect(liveMutations).toHaveLength(live.executor.recorded.length);
  });
});
