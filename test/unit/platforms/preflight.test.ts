import { describe, expect, it } from 'vitest';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import { plan } from '../../../src/platforms/equinixmetal/plan.js';
import { preflight, PreflightError } from '../../../src/platforms/equinixmetal/preflight.js';
import type { HardwareReservation } from '../../../src/metal/types.js';
import { FakeMetal, METROS } from './fake-metal.js';
import { cluster, pool, sources } from './fixtures.js';

const src = sources({
  cluster: 1,
  'cluster.metro': 3,
  'cluster.controller_type': 5,
  'cluster.os': 6,
  'cluster.worker_pool.general': 10,
  'cluster.worker_pool.general.count': 11,
  'cluster.worker_pool.general.node_type': 12,
  'cluster.worker_pool.edge': 20,
  'cluster.worker_pool.edge.metro': 21,
  'cluster.worker_pool.edge.os': 22,
  'cluster.reservation_ids': 7,
  'cluster.worker_pool.general.reservation_ids': 13,
  'cluster.worker_pool.general.reservation_ids_default': 14,
});

function hw(id: string, over: Partial<HardwareReservation> = {}): HardwareReservation {
  return {
    id,
    plan: { slug: 'c3.small.x86' },
    facility: { code: 'sv15', metro: METROS[0] },
    provisionable: true,
    spare: false,
    need_of_service: false,
    ...over,
  };
}

async function run(c = cluster(), api = new FakeMetal()) {
  const desired = desiredState(c);
  return preflight({ api, desired, plan: plan(desired, { devices: [] }), sources: src });
}

describe('preflight', () => {
  it('passes a valid config and checks capacity for what will be created', async () => {
    const api = new FakeMetal();
    const r = await run(cluster(), api);
    expect(r.capacityChecked).toEqual([{ metro: 'sv', plan: 'c3.small.x86', quantity: 4 }]);
    expect(api.calls.sort()).toEqual([
      'checkMetroCapacity',
      'listMetros',
      'listOperatingSystems',
      'listPlans',
    ]);
  });

  it('reports every problem at once, each with the config file:line:col', async () => {
    const c = cluster({
      metro: 'zz',
      controllerType: 'nope.x86',
      workerPools: [
        pool('general', { nodeType: 'n3.xlarge.x86', metro: 'sv' }),
        pool('edge', { count: 1, metro: 'da', os: 'windows_2022' }),
      ],
    });
    const err = await run(c).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PreflightError);
    const e = err as PreflightError;
    const got = e.diagnostics.map((d) => `${d.range?.start.line}: ${d.summary}`);
    expect(got).toEqual([
      '3: metro "zz" does not exist',
      '5: plan "nope.x86" does not exist',
      '12: plan "n3.xlarge.x86" is not offered in metro "sv"',
      '22: operating system "windows_2022" cannot be installed on plan "c3.small.x86"',
    ]);
    expect(e.message).toContain('/cfg/cluster.lokocfg:3:3: metro "zz" does not exist');
    expect(e.message).toContain('/cfg/cluster.lokocfg:22:3:');
    expect(e.hint).toBeTruthy();
  });

  it('reports missing capacity at the plan of the first device needing it', async () => {
    const api = new FakeMetal();
    api.capacity.set('sv/c3.small.x86', 2);
    const err = (await run(cluster(), api).catch((e: unknown) => e)) as PreflightError;
    expect(err).toBeInstanceOf(PreflightError);
    expect(err.diagnostics).toHaveLength(1);
    expect(err.diagnostics[0]!.summary).toBe(
      'not enough capacity for 4 × c3.small.x86 in metro "sv"',
    );
    expect(err.diagnostics[0]!.range?.start.line).toBe(5);
  });

  it('skips capacity for devices on hardware reservations and when nothing is created', async () => {
    const api = new FakeMetal();
    api.hardwareReservations.push(hw('r1'));
    const c = cluster({ reservationIdsDefault: 'next-available', workerPools: [] });
    const r = await run(c, api);
    expect(r.capacityChecked).toEqual([]);
    expect(api.calls).not.toContain('checkMetroCapacity');
  });

  it('falls back to the cluster-level source when a pool value is inherited', async () => {
    const c = cluster({ os: 'nope_os' });
    const err = (await run(c).catch((e: unknown) => e)) as PreflightError;
    expect(err.diagnostics.map((d) => d.range?.start.line)).toEqual([6]);
  });

  it('checks hardware reservations: existence, held, plan, metro and next-available count, all at once', async () => {
    const api = new FakeMetal();
    const U = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    api.hardwareReservations.push(
      hw(U(1), { provisionable: false, device: { href: '/metal/v1/devices/other' } }),
      hw(U(2), { plan: { slug: 'm3.large.x86' } }),
      hw(U(3), { facility: { code: 'da11', metro: METROS[1] } }),
      hw(U(4)),
    );
    const c = cluster({
      controllerCount: 1,
      reservationIds: { 0: U(1) },
      workerPools: [
        pool('general', {
          count: 3,
          reservationIds: { 0: U(9), 1: U(2), 2: U(3) },
        }),
        pool('edge', { count: 2, reservationIdsDefault: 'next-available' }),
      ],
    });
    const err = (await run(c, api).catch((e: unknown) => e)) as PreflightError;
    expect(err).toBeInstanceOf(PreflightError);
    const got = err.diagnostics.map((d) => `${d.range?.start.line}: ${d.summary}`);
    expect(got).toEqual([
      `7: hardware reservation "${U(1)}" for ${c.clusterName}-controller-0 is not provisionable (device other is on it)`,
      expect.stringMatching(/^13: hardware reservation "[^"]+9" for .* does not exist in project/),
      `13: hardware reservation "${U(2)}" for ${c.clusterName}-general-1 is for plan "m3.large.x86", not "c3.small.x86"`,
      `13: hardware reservation "${U(3)}" for ${c.clusterName}-general-2 is in metro "da", not "sv"`,
      expect.stringMatching(
        /^20: "next-available" needs 2 provisionable hardware reservations of plan c3.small.x86 in metro "sv", the project has 1$/,
      ),
    ]);
    expect(api.calls.filter((x) => x === 'listHardwareReservations')).toHaveLength(1);
  });

  it('accepts a valid reservation and one held by the device being replaced', async () => {
    const api = new FakeMetal();
    const U1 = '00000000-0000-4000-8000-000000000001';
    api.hardwareReservations.push(hw(U1));
    const c = cluster({
      controllerCount: 1,
      reservationIds: { 0: U1 },
      workerPools: [],
    });
    await expect(run(c, api)).resolves.toBeDefined();
    // The same reservation held by the device being replaced (plan changed) also passes.
    api.hardwareReservations[0] = hw(U1, {
      provisionable: false,
      device: { href: '/metal/v1/devices/dev-1' },
    });
    const desired = desiredState(c);
    const d0 = desired.devices[0]!;
    const p = plan(desired, {
      devices: [api.seed({ hostname: d0.hostname, tags: d0.tags, plan: { slug: 'm3.large.x86' } })],
    });
    expect(p.actions[0]!.type).toBe('replace');
    await expect(preflight({ api, desired, plan: p, sources: src })).resolves.toBeDefined();
  });
});
