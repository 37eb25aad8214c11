import { describe, expect, it } from 'vitest';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import { plan } from '../../../src/platforms/equinixmetal/plan.js';
import { preflight, PreflightError } from '../../../src/platforms/equinixmetal/preflight.js';
import { FakeMetal } from './fake-metal.js';
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
});

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
});
