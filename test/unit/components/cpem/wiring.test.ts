/**
 * The CCM's Metal side as cluster apply and destroy run it, through the platform executor (the
 * one chokepoint): the cluster's project API key created once and reused, the control-plane EIP
 * tag added to a reservation made before it existed (a dry run plans the same write), and destroy
 * deleting the key after the devices (a dry run lists it).
 */
import { describe, expect, it } from 'vitest';
import { mutationJson } from '../../../../src/commands/shared/render-plan.js';
import {
  apiKeyPhase,
  applyCluster,
  endpointReservePhase,
  endpointTagPhase,
  planPhases,
  type ApplyContext,
} from '../../../../src/platforms/equinixmetal/apply.js';
import {
  createDestroyContext,
  destroyPhases,
  inventoryPhases,
} from '../../../../src/platforms/equinixmetal/destroy.js';
import { apiKeyExecutor, createExecutor } from '../../../../src/platforms/equinixmetal/executor.js';
import { createPlainRunner } from '../../../../src/tasks/phase.js';
import { FakeMetal } from '../../platforms/fake-metal.js';
import { cluster } from '../../platforms/fixtures.js';
import { applyCtx, fastPoll } from '../../platforms/helpers.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;
const PROJECT = cluster().projectId;
const keyPhases = [...planPhases, endpointReservePhase, endpointTagPhase, apiKeyPhase];

/** An apply context that installs components (the API-key phase runs only then). */
function withComponents(ctx: ApplyContext): ApplyContext {
  ctx.options.kubernetes = { mode: 'wait' };
  ctx.options.components = { names: () => [], apply: async () => [] };
  return ctx;
}

describe('cluster apply/destroy and the CCM through the executor', () => {
  it("creates the cluster's key once through the executor, then reuses it", async () => {
    const api = new FakeMetal();
    const first = withComponents(applyCtx(api, cluster()));
    await runner.run(keyPhases, first, signal);
    const keyWrites = (c: ApplyContext) =>
      c.executor.recorded.filter((m) => m.kind.endsWith('-api-key'));
    expect(keyWrites(first)).toEqual([
      { kind: 'create-api-key', projectId: PROJECT, description: 'loko:cluster=demo' },
    ]);
    expect(keyWrites(first).map(mutationJson)).toEqual([
      {
        call: `POST /projects/${PROJECT}/api-keys`,
        description: `create the cluster's project API key "loko:cluster=demo" (for the cloud controller manager)`,
      },
    ]);
    expect(api.apiKeys).toHaveLength(1);
    expect(first.metalApiKey).toBe(api.apiKeys[0]!.token);
    const again = withComponents(applyCtx(api, cluster()));
    await runner.run(keyPhases, again, signal);
    expect(keyWrites(again)).toEqual([]);
    expect(again.metalApiKey).toBe(first.metalApiKey);
  });

  it('a machines-only apply creates no key', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    expect(api.apiKeys).toEqual([]);
  });

  it("tags a reservation made before the CCM's tag existed, once; a dry run plans the same write", async () => {
    const api = new FakeMetal();
    await api.createIPReservation('p', {
      type: 'public_ipv4',
      quantity: 1,
      metro: 'sv',
      tags: ['loko:cluster=demo', 'loko:role=control-plane-endpoint'],
    });
    const tagWrites = (c: ApplyContext) => c.executor.recorded.filter((m) => m.kind === 'tag-ip');
    const dry = applyCtx(api, cluster(), { dryRun: true });
    await runner.run(keyPhases, dry, signal);
    expect(api.reservations[0]!.tags).not.toContain('loko:control-plane-endpoint=demo');
    const live = applyCtx(api, cluster());
    await runner.run(keyPhases, live, signal);
    expect(tagWrites(live)).toEqual(tagWrites(dry));
    expect(tagWrites(live)).toEqual([
      expect.objectContaining({
        kind: 'tag-ip',
        id: api.reservations[0]!.id,
        tags: [
          'loko:cluster=demo',
          'loko:role=control-plane-endpoint',
          'loko:control-plane-endpoint=demo',
        ],
      }),
    ]);
    expect(mutationJson(tagWrites(live)[0]!).call).toBe(`PATCH /ips/${api.reservations[0]!.id}`);
    expect(api.reservations).toHaveLength(1);
    expect(api.reservations[0]!.tags).toContain('loko:control-plane-endpoint=demo');
    const again = applyCtx(api, cluster());
    await runner.run(keyPhases, again, signal);
    expect(again.executor.recorded).toEqual([]);
  });

  it('destroy deletes the key after the devices and reservations; a dry run lists it', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [] })), { runner, signal });
    const mine = await api.createProjectApiKey('p', { description: 'loko:cluster=demo' });
    await api.createProjectApiKey('p', { description: 'loko:cluster=other' });
    const dctx = (dryRun: boolean) => {
      const executor = createExecutor({ api, dryRun });
      return createDestroyContext({
        api,
        executor,
        clusterName: 'demo',
        projectId: 'p',
        apiKeys: { api, executor: apiKeyExecutor(executor) },
        options: { clock: api.clock, poll: fastPoll },
      });
    };
    const dry = dctx(true);
    await runner.run([...inventoryPhases, ...destroyPhases], dry, signal);
    expect(dry.executor.recorded.at(-1)).toEqual({
      kind: 'delete-api-key',
      id: mine.id,
      description: 'loko:cluster=demo',
    });
    expect(mutationJson(dry.executor.recorded.at(-1)!).call).toBe(`DELETE /api-keys/${mine.id}`);
    expect(api.apiKeys).toHaveLength(2);
    const live = dctx(false);
    await runner.run([...inventoryPhases, ...destroyPhases], live, signal);
    expect(live.executor.recorded.map((m) => m.kind)).toEqual(
      dry.executor.recorded.map((m) => m.kind),
    );
    expect(api.apiKeys.map((k) => k.description)).toEqual(['loko:cluster=other']);
    expect(live.leftovers?.apiKeys).toEqual([]);
  });
});
