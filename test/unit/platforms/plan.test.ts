import { describe, expect, it } from 'vitest';
import type { Device } from '../../../src/metal/types.js';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import { plan, refusedReplacements } from '../../../src/platforms/equinixmetal/plan.js';
import { cluster, pool } from './fixtures.js';

let seq = 0;
/** An observed device matching the desired one of `hostname` unless overridden. */
function observedFor(hostname: string, over: Partial<Device> = {}): Device {
  const want = desiredState(
    cluster({ workerPools: [pool('general', { count: 10 }), pool('edge', { count: 1 })] }),
  ).devices.find((d) => d.hostname === hostname);
  return {
    id: `id-${++seq}`,
    hostname,
    state: 'active',
    tags: want ? [...want.tags] : ['loko:cluster=demo', 'loko:role=worker'],
    plan: { slug: want?.plan ?? 'c3.small.x86' },
    operating_system: { slug: want?.os ?? 'ubuntu_22_04' },
    metro: { id: 'm', code: want?.metro ?? 'sv', name: 'x', country: 'US' },
    ip_addresses: [],
    ...over,
  };
}

const all = (): Device[] =>
  ['demo-controller-0', 'demo-general-0', 'demo-general-1', 'demo-edge-0'].map((h) =>
    observedFor(h),
  );

describe('plan', () => {
  it('creates everything for an empty project', () => {
    const p = plan(desiredState(cluster()), { devices: [] });
    expect(p.actions.map((a) => `${a.type} ${a.hostname}`)).toEqual([
      'create demo-controller-0',
      'create demo-general-0',
      'create demo-general-1',
      'create demo-edge-0',
    ]);
    expect(p.changes).toBe(true);
    expect(p.counts.create).toBe(4);
  });

  it('is all noop when observed matches desired', () => {
    const p = plan(desiredState(cluster()), { devices: all() });
    expect(p.changes).toBe(false);
    expect(p.counts).toEqual({ create: 0, update: 0, replace: 0, delete: 0, noop: 4 });
  });

  it('never compares userdata (create-only)', () => {
    const devices = all().map((d) => ({
      ...d,
      userdata: '#!/bin/sh\necho something else entirely',
    }));
    expect(plan(desiredState(cluster()), { devices }).changes).toBe(false);
  });

  it('scaling a pool down deletes the highest indexes', () => {
    const devices = [
      ...all(),
      observedFor('demo-general-2'),
      observedFor('demo-general-3'),
      observedFor('demo-general-10'),
    ];
    const p = plan(desiredState(cluster()), { devices });
    const deletes = p.actions.filter((a) => a.type === 'delete');
    expect(deletes.map((a) => a.hostname)).toEqual([
      'demo-general-2',
      'demo-general-3',
      'demo-general-10',
    ]);
    expect(deletes.every((a) => a.type === 'delete' && a.reason === 'scale-down')).toBe(true);
    expect(p.counts.noop).toBe(4);
  });

  it('deletes devices of a removed pool and unknown hostnames carrying the cluster tag', () => {
    const devices = [
      ...all(),
      observedFor('demo-old-0', {
        tags: ['loko:cluster=demo', 'loko:role=worker', 'loko:pool=old'],
      }),
      observedFor('hand-made', { tags: ['loko:cluster=demo'] }),
    ];
    const p = plan(desiredState(cluster()), { devices });
    const deletes = p.actions.filter((a) => a.type === 'delete');
    expect(deletes.map((a) => [a.hostname, a.type === 'delete' && a.reason])).toEqual([
      ['demo-old-0', 'not-desired'],
      ['hand-made', 'not-desired'],
    ]);
  });

  it('plans a replace for plan, OS or metro changes, refused unless allowed', () => {
    const devices = all();
    devices[1] = observedFor('demo-general-0', { plan: { slug: 'm3.large.x86' } });
    devices[2] = observedFor('demo-general-1', {
      operating_system: { slug: 'ubuntu_24_04' },
      metro: { id: 'd', code: 'da', name: 'Dallas', country: 'US' },
    });
    const p = plan(desiredState(cluster()), { devices });
    const replaces = p.actions.filter((a) => a.type === 'replace');
    expect(replaces).toHaveLength(2);
    expect(replaces[0]).toMatchObject({
      hostname: 'demo-general-0',
      reason: 'changed',
      requiresAllowReplace: true,
      changes: [{ field: 'plan', from: 'm3.large.x86', to: 'c3.small.x86' }],
    });
    expect(replaces[1]!.type === 'replace' && replaces[1]!.changes.map((c) => c.field)).toEqual([
      'operating_system',
      'metro',
    ]);
    expect(refusedReplacements(p, false).map((a) => a.hostname)).toEqual([
      'demo-general-0',
      'demo-general-1',
    ]);
    expect(refusedReplacements(p, true)).toEqual([]);
  });

  it('replaces a failed device, always allowed', () => {
    const devices = all();
    devices[0] = observedFor('demo-controller-0', { state: 'failed' });
    const p = plan(desiredState(cluster()), { devices });
    expect(p.actions[0]).toMatchObject({
      type: 'replace',
      reason: 'failed',
      requiresAllowReplace: false,
    });
    expect(refusedReplacements(p, false)).toEqual([]);
  });

  it('updates tags-only drift in place', () => {
    const devices = all();
    devices[3] = observedFor('demo-edge-0', {
      tags: ['loko:cluster=demo', 'loko:role=worker', 'loko:pool=edge', 'team:old'],
    });
    const p = plan(desiredState(cluster()), { devices });
    const u = p.actions.find((a) => a.type === 'update');
    expect(u).toMatchObject({
      hostname: 'demo-edge-0',
      tagsTo: ['loko:cluster=demo', 'loko:role=worker', 'loko:pool=edge', 'team:infra'],
    });
    expect(p.counts.update).toBe(1);
  });

  it('tag order alone is not drift', () => {
    const devices = all().map((d) => ({ ...d, tags: [...d.tags].reverse() }));
    expect(plan(desiredState(cluster()), { devices }).changes).toBe(false);
  });

  it('ignores deprovisioning devices and creates their hostname again', () => {
    const devices = all();
    devices[0] = observedFor('demo-controller-0', { state: 'deprovisioning' });
    const p = plan(desiredState(cluster()), { devices });
    expect(p.actions[0]).toMatchObject({ type: 'create', hostname: 'demo-controller-0' });
    expect(p.counts.delete).toBe(0);
  });

  it('keeps one device per hostname and deletes duplicates', () => {
    const devices = [...all(), observedFor('demo-general-0', { state: 'provisioning' })];
    const p = plan(desiredState(cluster()), { devices });
    const del = p.actions.find((a) => a.type === 'delete');
    expect(del).toMatchObject({
      hostname: 'demo-general-0',
      reason: 'duplicate',
      deviceId: devices[4]!.id,
    });
  });

  it('a provisioning device that matches is a noop (apply waits for it)', () => {
    const devices = all();
    devices[1] = observedFor('demo-general-0', { state: 'provisioning' });
    const p = plan(desiredState(cluster()), { devices });
    expect(p.actions[1]).toMatchObject({ type: 'noop', state: 'provisioning' });
  });
});
