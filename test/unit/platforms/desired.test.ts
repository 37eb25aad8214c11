import { describe, expect, it } from 'vitest';
import {
  createWave,
  desiredState,
  NEXT_AVAILABLE,
} from '../../../src/platforms/equinixmetal/desired.js';
import { parseHostname } from '../../../src/platforms/equinixmetal/tags.js';
import { cluster, pool } from './fixtures.js';

describe('desiredState', () => {
  it('names controllers and pool workers deterministically, controllers first', () => {
    const d = desiredState(cluster());
    expect(d.devices.map((x) => x.hostname)).toEqual([
      'demo-controller-0',
      'demo-general-0',
      'demo-general-1',
      'demo-edge-0',
    ]);
    expect(d.clusterTag).toBe('loko:cluster=demo');
    expect(d.groupCounts).toEqual({ controller: 1, general: 2, edge: 1 });
  });

  it('tags ownership, role, pool, then user tags of cluster and pool without duplicates', () => {
    const d = desiredState(
      cluster({ workerPools: [pool('general', { count: 1, tags: ['tier:web', 'team:infra'] })] }),
    );
    expect(d.devices[0]!.tags).toEqual(['loko:cluster=demo', 'loko:role=controller', 'team:infra']);
    expect(d.devices[1]!.tags).toEqual([
      'loko:cluster=demo',
      'loko:role=worker',
      'loko:pool=general',
      'team:infra',
      'tier:web',
    ]);
  });

  it("lets a pool's tag override the cluster's tag with the same key", () => {
    const d = desiredState(
      cluster({
        tags: ['team:infra', 'env:prod'],
        workerPools: [pool('general', { count: 1, tags: ['team:web'] })],
      }),
    );
    expect(d.devices[0]!.tags).toContain('team:infra');
    expect(d.devices[1]!.tags).toContain('team:web');
    expect(d.devices[1]!.tags).toContain('env:prod');
    expect(d.devices[1]!.tags).not.toContain('team:infra');
  });

  it('carries plan, metro (lowercased), OS, billing cycle, ssh keys and placeholder userdata', () => {
    const d = desiredState(
      cluster({
        metro: 'SV',
        workerPools: [
          pool('big', { count: 1, nodeType: 'm3.large.x86', metro: 'da', os: 'ubuntu_24_04' }),
        ],
      }),
    );
    const [ctrl, big] = d.devices;
    expect(ctrl).toMatchObject({
      plan: 'c3.small.x86',
      metro: 'sv',
      os: 'ubuntu_22_04',
      billingCycle: 'hourly',
      role: 'controller',
    });
    expect(big).toMatchObject({
      plan: 'm3.large.x86',
      metro: 'da',
      os: 'ubuntu_24_04',
      role: 'worker',
      pool: 'big',
      index: 0,
    });
    expect(ctrl!.sshKeys).toEqual([
      { key: 'ssh-ed25519 AAAAC3Nza alice@laptop', label: 'alice@laptop' },
    ]);
    // Without the bootstrap material (a plan), no userdata; the node is known from the config.
    expect(ctrl!.userdata).toBeUndefined();
    expect(ctrl!.node).toMatchObject({ hostname: 'demo-controller-0', role: 'controller' });
    expect(big!.node.labels).toMatchObject({ 'loko.dev/pool': 'big' });
  });

  it('uses explicit reservations per index and next-available as the default, explicit ones in the first wave', () => {
    const uuid = '0b7c9e8a-6f1e-4c1a-9a38-6f3c2b3f5d10';
    const d = desiredState(
      cluster({
        controllerCount: 1,
        reservationIds: { 0: uuid },
        workerPools: [pool('general', { count: 2, reservationIdsDefault: 'next-available' })],
      }),
    );
    expect(d.devices.map((x) => x.hardwareReservationId)).toEqual([
      uuid,
      NEXT_AVAILABLE,
      NEXT_AVAILABLE,
    ]);
    expect(d.devices.map(createWave)).toEqual([0, 1, 1]);
    expect(desiredState(cluster()).devices[0]!.hardwareReservationId).toBeUndefined();
  });

  it('points sources at pool keys first, then the cluster defaults', () => {
    const d = desiredState(cluster());
    expect(d.devices[1]!.sources.metro).toEqual([
      'cluster.worker_pool.general.metro',
      'cluster.metro',
      'cluster.facility',
      'cluster.worker_pool.general',
    ]);
    expect(d.devices[0]!.sources.plan[0]).toBe('cluster.controller_type');
  });
});

describe('parseHostname', () => {
  it('splits group and index, including pools with dashes', () => {
    expect(parseHostname('demo', 'demo-controller-2')).toEqual({ group: 'controller', index: 2 });
    expect(parseHostname('demo', 'demo-gpu-pool-11')).toEqual({ group: 'gpu-pool', index: 11 });
    expect(parseHostname('demo', 'other-general-0')).toBeUndefined();
    expect(parseHostname('demo', 'demo-general')).toBeUndefined();
  });
});
