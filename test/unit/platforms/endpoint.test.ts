/**
 * The control-plane Elastic IP through the executor: reserved before any device, found by its tags
 * on re-runs (never a second one, also after an uncertain answer), assigned to controller 0 once
 * it exists, re-assigned when controller 0 is replaced, left where a kept controller holds it,
 * and planned by a dry run exactly as apply performs it.
 */
import { describe, expect, it } from 'vitest';
import { mutationJson, planLines } from '../../../src/commands/shared/render-plan.js';
import {
  applyCluster,
  applyPhases,
  planPhases,
} from '../../../src/platforms/equinixmetal/apply.js';
import {
  ENDPOINT_ROLE_TAG,
  controlPlaneEipTag,
} from '../../../src/platforms/equinixmetal/endpoint.js';
import { createPlainRunner } from '../../../src/tasks/phase.js';
import { LokoError } from '../../../src/util/errors.js';
import { Chalk } from 'chalk';
import { FakeApiError, FakeMetal } from './fake-metal.js';
import { cluster, pool } from './fixtures.js';
import { applyCtx } from './helpers.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;
/** A new reservation's tags: cluster, role and the CPEM `eipTag` unique to this cluster's endpoint. */
const TAGS = ['loko:cluster=demo', ENDPOINT_ROLE_TAG, 'loko:control-plane-endpoint=demo'];
const kinds = (ctx: { executor: { recorded: readonly { kind: string }[] } }) =>
  ctx.executor.recorded.map((m) => m.kind);

/** The device holding the Elastic IP, by hostname. */
function holder(api: FakeMetal): string | undefined {
  const a = api.assignments[0];
  return a && api.live().find((d) => d.id === a.deviceId)?.hostname;
}

describe('control-plane Elastic IP', { timeout: 30_000 }, () => {
  it('is reserved before any device is created, in the metro, with its three tags; then assigned', async () => {
    const api = new FakeMetal();
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(kinds(ctx)[0]).toBe('reserve-ip');
    expect(kinds(ctx).at(-1)).toBe('assign-ip');
    expect(ctx.executor.recorded[0]).toMatchObject({ kind: 'reserve-ip', metro: 'sv', tags: TAGS });
    expect(api.calls.indexOf('createIPReservation')).toBeLessThan(
      api.calls.indexOf('createDevice'),
    );
    expect(api.reservations).toHaveLength(1);
    expect(api.reservations[0]).toMatchObject({ cidr: 32, tags: TAGS, metro: { code: 'sv' } });
    // CPEM's eipTag: one tag that only this cluster's endpoint carries.
    expect(api.reservations[0]!.tags).toContain(controlPlaneEipTag('demo'));
    expect(holder(api)).toBe('demo-controller-0');
    expect(ctx.summary?.controlPlaneEndpoint).toBe(api.reservations[0]!.network);
    // Not mistaken for the device's own address.
    expect(ctx.summary?.devices[0]?.publicIPv4).not.toBe(api.reservations[0]!.network);
  });

  it('a re-run finds it by tag and changes nothing', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(ctx.plan?.changes).toBe(false);
    expect(ctx.plan?.endpoint).toMatchObject({ reserve: false, heldBy: 'demo-controller-0' });
    expect(ctx.executor.recorded).toEqual([]);
    expect(api.reservations).toHaveLength(1);
  });

  it('after an uncertain reservation answer it re-lists and adopts, never reserving twice', async () => {
    const api = new FakeMetal();
    api.reserveFault = () => ({ after: new FakeApiError(503, 'unavailable') });
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(api.reservations).toHaveLength(1);
    expect(api.calls.filter((c) => c === 'createIPReservation')).toHaveLength(1);
    expect(holder(api)).toBe('demo-controller-0');
  });

  it('a run killed after reserving finds the reservation and only assigns it', async () => {
    const api = new FakeMetal();
    await api.createIPReservation('p', {
      type: 'public_ipv4',
      quantity: 1,
      metro: 'sv',
      tags: TAGS,
    });
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(kinds(ctx).filter((k) => k.endsWith('-ip'))).toEqual(['assign-ip']);
    expect(api.reservations).toHaveLength(1);
  });

  it('an endpoint reserved before the eipTag existed is tagged (plan shows it), never reserved again', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    api.reservations[0]!.tags = TAGS.slice(0, 2);
    const plan = applyCtx(api, cluster(), { dryRun: true });
    await runner.run(planPhases, plan, signal);
    expect(plan.plan?.changes).toBe(true);
    const lines = planLines(plan.plan!, new Chalk({ level: 0 }), false);
    expect(lines.join('\n')).toContain(
      `~ tag the control-plane Elastic IP ${api.reservations[0]!.network} (tags ${TAGS.join(', ')};`,
    );
    expect(lines.join('\n')).toContain('control-plane Elastic IP: tag');
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(kinds(ctx)).toEqual(['tag-ip']);
    expect(mutationJson(ctx.executor.recorded[0]!).call).toBe(
      `PATCH /ips/${api.reservations[0]!.id}`,
    );
    expect(api.reservations).toHaveLength(1);
    expect(api.reservations[0]!.tags).toEqual(TAGS);
    const again = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(again.executor.recorded).toEqual([]);
  });

  it('is assigned again when controller 0 was unassigned by hand', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    api.assignments.splice(0);
    const plan = applyCtx(api, cluster(), { dryRun: true });
    await runner.run(planPhases, plan, signal);
    expect(plan.plan?.changes).toBe(true);
    expect(plan.plan?.deviceChanges).toBe(false);
    const lines = planLines(plan.plan!, new Chalk({ level: 0 }), false);
    expect(lines).toContain(
      `    + assign the control-plane Elastic IP ${api.reservations[0]!.network} to demo-controller-0`,
    );
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(kinds(ctx)).toEqual(['assign-ip']);
    expect(holder(api)).toBe('demo-controller-0');
  });

  it('follows a replaced controller 0: unassigned from the old device, assigned to the new', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [] })), { runner, signal });
    const old = api.live().find((d) => d.hostname === 'demo-controller-0')!.id;
    const ctx = await applyCluster(
      applyCtx(api, cluster({ workerPools: [], controllerType: 'm3.large.x86' }), {
        allowReplace: true,
      }),
      { runner, signal },
    );
    expect(kinds(ctx)).toEqual(['delete-device', 'create-device', 'unassign-ip', 'assign-ip']);
    const fresh = api.live().find((d) => d.hostname === 'demo-controller-0' && d.id !== old)!;
    expect(api.assignments).toEqual([expect.objectContaining({ deviceId: fresh.id })]);
  });

  it('stays on another controller that holds it (the CCM moves it to a healthy one)', async () => {
    const api = new FakeMetal();
    const ha = cluster({ controllerCount: 3, workerPools: [] });
    await applyCluster(applyCtx(api, ha), { runner, signal });
    const c2 = api.live().find((d) => d.hostname === 'demo-controller-2')!;
    api.assignments.splice(0);
    await api.assignIP(c2.id, `${api.reservations[0]!.network}/32`);
    const ctx = await applyCluster(applyCtx(api, ha), { runner, signal });
    expect(ctx.plan?.endpoint?.heldBy).toBe('demo-controller-2');
    expect(ctx.executor.recorded).toEqual([]);
  });

  it('refuses a reservation in another metro than the cluster', async () => {
    const api = new FakeMetal();
    await api.createIPReservation('p', {
      type: 'public_ipv4',
      quantity: 1,
      metro: 'da',
      tags: TAGS,
    });
    const err = await applyCluster(applyCtx(api, cluster()), { runner, signal }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toMatch(/is in metro da, the cluster in sv$/);
    expect(api.calls).not.toContain('createDevice');
  });

  it('a dry run lists the same Elastic IP writes as the apply that follows', async () => {
    const dryApi = new FakeMetal();
    const dry = applyCtx(dryApi, cluster({ workerPools: [pool('general', { count: 1 })] }), {
      dryRun: true,
    });
    await runner.run([...planPhases, ...applyPhases], dry, signal);
    expect(dryApi.calls).not.toContain('createIPReservation');
    const live = applyCtx(
      new FakeMetal(),
      cluster({ workerPools: [pool('general', { count: 1 })] }),
    );
    await applyCluster(live, { runner, signal });
    const described = (ctx: typeof dry) =>
      ctx.executor.recorded.map((m) => mutationJson(m).description);
    expect(described(dry)).toEqual(described(live));
    expect(described(dry)).toEqual([
      'reserve the control-plane Elastic IP (public_ipv4 /32 in sv)',
      'create device demo-controller-0 (c3.small.x86, sv, ubuntu_22_04)',
      'create device demo-general-0 (c3.small.x86, sv, ubuntu_22_04)',
      'assign the control-plane Elastic IP to demo-controller-0',
    ]);
    expect(mutationJson(dry.executor.recorded.at(-1)!).call).toBe(
      'POST /devices/dry-run:demo-controller-0/ips',
    );
  });
});
