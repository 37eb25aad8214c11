import { describe, expect, it } from 'vitest';
import { applyCluster } from '../../../src/platforms/equinixmetal/apply.js';
import {
  createDestroyContext,
  destroyCluster,
} from '../../../src/platforms/equinixmetal/destroy.js';
import { createExecutor } from '../../../src/platforms/equinixmetal/executor.js';
import { createPlainRunner } from '../../../src/tasks/phase.js';
import { LokoError } from '../../../src/util/errors.js';
import { FakeMetal } from './fake-metal.js';
import { cluster } from './fixtures.js';
import { applyCtx, fastPoll } from './helpers.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;

function destroyCtx(api: FakeMetal, opts: { timeoutMs?: number } = {}) {
  return createDestroyContext({
    api,
    executor: createExecutor({ api }),
    clusterName: 'demo',
    projectId: 'p',
    options: {
      clock: api.clock,
      poll: { ...fastPoll, timeoutMs: opts.timeoutMs ?? fastPoll.timeoutMs },
    },
  });
}

describe('destroy', () => {
  it("removes a reservation's remaining assignments before deleting it (422 otherwise)", async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [] })), { runner, signal });
    const eip = api.reservations[0]!;
    // Someone moved the cluster's Elastic IP to a device the cluster does not own.
    const other = api.seed({ hostname: 'other-controller-0', tags: ['loko:cluster=other'] });
    api.assignments.splice(0, api.assignments.length);
    await api.assignIP(other.id, `${eip.network}/32`);

    const ctx = await destroyCluster(destroyCtx(api), { runner, signal });
    expect(ctx.leftovers).toEqual({ devices: [], reservations: [] });
    expect(api.reservations).toEqual([]);
    expect(ctx.executor.recorded.map((m) => m.kind)).toEqual([
      'delete-device',
      'unassign-ip',
      'delete-ip-reservation',
    ]);
    expect(api.live().map((d) => d.hostname)).toEqual(['other-controller-0']);
  });

  it('deletes devices then tagged IP reservations, waits until gone, and is re-runnable', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    api.seed({ hostname: 'other-controller-0', tags: ['loko:cluster=other'] });
    api.reservations.push(
      {
        id: 'r1',
        type: 'public_ipv4',
        address_family: 4,
        network: '147.75.1.0',
        cidr: 29,
        public: true,
        management: false,
        tags: ['loko:cluster=demo'],
      },
      {
        id: 'r2',
        type: 'public_ipv4',
        address_family: 4,
        network: '147.75.2.0',
        cidr: 29,
        public: true,
        management: false,
        tags: ['loko:cluster=other'],
      },
    );
    let confirmed = 0;
    const ctx = await destroyCluster(destroyCtx(api), {
      runner,
      signal,
      confirm: async (inv) => {
        confirmed++;
        expect(inv.devices).toHaveLength(4);
        // The control-plane Elastic IP apply reserved, and the block tagged by hand.
        expect(inv.reservations.map((r) => r.id)).toEqual(['ipr-1', 'r1']);
      },
    });
    expect(confirmed).toBe(1);
    expect(ctx.leftovers).toEqual({ devices: [], reservations: [] });
    expect(api.live().map((d) => d.hostname)).toEqual(['other-controller-0']);
    expect(api.reservations.map((r) => r.id)).toEqual(['r2']);
    const kinds = ctx.executor.recorded.map((m) => m.kind);
    expect(kinds.lastIndexOf('delete-device')).toBeLessThan(kinds.indexOf('delete-ip-reservation'));

    // Nothing left: no confirmation, no mutation.
    const again = await destroyCluster(destroyCtx(api), {
      runner,
      signal,
      confirm: async () => void confirmed++,
    });
    expect(confirmed).toBe(1);
    expect(again.executor.recorded).toEqual([]);
  });

  it('waits for provisioning devices to settle before deleting them', async () => {
    const api = new FakeMetal();
    api.seed({ hostname: 'demo-controller-0', tags: ['loko:cluster=demo'] }, 'provisioning');
    const ctx = await destroyCluster(destroyCtx(api), { runner, signal });
    expect(api.live()).toEqual([]);
    expect(ctx.executor.recorded).toHaveLength(1);
    expect(api.calls.filter((c) => c === 'deleteDevice')).toHaveLength(1);
  });

  it('fails listing what remains when the budget runs out', async () => {
    const api = new FakeMetal();
    api.deprovisionMs = 10 * 60_000;
    api.seed({ hostname: 'demo-controller-0', tags: ['loko:cluster=demo'] });
    const err = await destroyCluster(destroyCtx(api, { timeoutMs: 5_000 }), {
      runner,
      signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as Error).message).toMatch(
      /destroy left 1 object of cluster "demo":\n {2}device demo-controller-0 \(dev-1, deprovisioning\)/,
    );
  });

  it('treats 404 on delete as done', async () => {
    const api = new FakeMetal();
    const d = api.seed({ hostname: 'demo-controller-0', tags: ['loko:cluster=demo'] });
    const ctx = destroyCtx(api);
    ctx.inventory = { devices: [d], reservations: [] };
    api.devicesById.clear();
    const { deleteDevicesPhase } = await import('../../../src/platforms/equinixmetal/destroy.js');
    await createPlainRunner().run([deleteDevicesPhase], ctx, signal);
    expect(ctx.executor.recorded).toHaveLength(1);
  });

  it('gives up at once on a locked device (422) with the API message and how to unlock it', async () => {
    const api = new FakeMetal();
    const d = api.seed({
      hostname: 'demo-controller-0',
      tags: ['loko:cluster=demo'],
      locked: true,
    });
    api.seed({ hostname: 'demo-general-0', tags: ['loko:cluster=demo'] });
    const err = (await destroyCluster(destroyCtx(api), { runner, signal }).catch(
      (e: unknown) => e,
    )) as LokoError;
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toContain(`device demo-controller-0 (${d.id}, locked, active)`);
    expect(err.message).not.toContain('demo-general-0');
    expect(err.hint).toContain('demo-controller-0 is locked');
    expect(err.hint).toContain(`PUT /metal/v1/devices/${d.id}`);
    expect(err.hint).toContain('"locked": false');
    expect(err.hint).not.toContain('deprovisioning');
    // One refused delete, not retries until the timeout.
    expect(api.calls.filter((c) => c === 'deleteDevice')).toHaveLength(2);
    expect(api.now).toBeLessThan(fastPoll.timeoutMs);
  });

  it('gives up on a locked device when only the API message says so', async () => {
    const { deleteDevices } = await import('../../../src/platforms/equinixmetal/delete-devices.js');
    const api = new FakeMetal();
    const d = api.seed({
      hostname: 'demo-controller-0',
      tags: ['loko:cluster=demo'],
      locked: true,
    });
    const items: string[] = [];
    const left = await deleteDevices(
      {
        api,
        projectId: 'p',
        tag: 'loko:cluster=demo',
        poll: { ...fastPoll, clock: api.clock, signal },
        progress: {
          status: () => {},
          warn: () => {},
          debug: () => {},
          item: (k, s, det) => void items.push(`${k} ${s} ${det ?? ''}`),
        },
        executor: createExecutor({ api }),
        parallelism: 2,
      },
      [{ deviceId: d.id, hostname: d.hostname, state: 'active' }],
      'gone',
    );
    expect(left).toHaveLength(1);
    expect(left[0]!.error).toContain('Cannot delete a locked device');
    expect(items.at(-1)).toMatch(
      /^demo-controller-0 failed locked: Cannot delete a locked device; unlock it/,
    );
  });
});
