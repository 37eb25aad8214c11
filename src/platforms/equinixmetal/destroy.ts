/**
 * `cluster destroy` for Equinix Metal: find everything tagged `loko:cluster=<name>` (and the
 * project API key described so), delete it in dependency order (devices, then IP reservations,
 * then the API key the devices' CCM used), treat 404 as done, wait until the devices are gone, and
 * fail listing anything that remains. Re-runnable at any point.
 */
import pLimit from 'p-limit';
import type { MetalApi } from '../../metal/api.js';
import type { ApiKeysApi } from '../../metal/api-keys.js';
import type { Device, IPReservation } from '../../metal/types.js';
import type { Phase, PhaseIO, PhaseRunner } from '../../tasks/phase.js';
import { LokoError } from '../../util/errors.js';
import { isNotFound, isUnprocessable } from './api-errors.js';
import type { ApiKeyExecutor, ApiKeyRef } from './api-key.js';
import { deleteDevices, settleAll, unlockFix } from './delete-devices.js';
import { deviceIdOf, embeddedAssignments } from './endpoint.js';
import type { Executor } from './executor.js';
import { observe } from './observe.js';
import { DEFAULT_POLL, systemClock, type Clock, type PollOptions } from './poll.js';
import { clusterTag } from './tags.js';
import type { WaitTarget } from './wait.js';

/** What the cluster owns, found by tag (API keys by description; never their tokens). */
export interface Inventory {
  devices: Device[];
  reservations: IPReservation[];
  /** The cluster's project API keys; empty when the context has no {@link DestroyContext.apiKeys}. */
  apiKeys?: ApiKeyRef[];
}

/** Shared state of the destroy phases. */
export interface DestroyContext {
  api: MetalApi;
  executor: Executor;
  clusterName: string;
  projectId: string;
  tag: string;
  /**
   * The API-key side: listing through `api`, deleting through `executor` (the platform executor
   * once it takes API-key mutations). Without it destroy leaves the key alone.
   */
  apiKeys?: { api: ApiKeysApi; executor: ApiKeyExecutor };
  options: { parallelism: number; poll: Omit<PollOptions, 'clock' | 'signal'>; clock: Clock };
  inventory?: Inventory;
  /** What remained after the run (filled by the verify phase). */
  leftovers?: Inventory;
}

/** Builds the context; options default to 10 parallel deletes and the standard poll timing. */
export function createDestroyContext(input: {
  api: MetalApi;
  executor: Executor;
  clusterName: string;
  projectId: string;
  apiKeys?: DestroyContext['apiKeys'];
  options?: Partial<DestroyContext['options']>;
}): DestroyContext {
  return {
    api: input.api,
    executor: input.executor,
    ...(input.apiKeys ? { apiKeys: input.apiKeys } : {}),
    clusterName: input.clusterName,
    projectId: input.projectId,
    tag: clusterTag(input.clusterName),
    options: { parallelism: 10, poll: DEFAULT_POLL, clock: systemClock, ...input.options },
  };
}

/**
 * Lists devices and IP reservations carrying the cluster tag, and with `apiKeys` the project API
 * keys whose description is that tag (one list call each). Tokens are dropped on the spot.
 */
export async function takeInventory(
  api: MetalApi,
  projectId: string,
  tag: string,
  apiKeys?: ApiKeysApi,
): Promise<Inventory> {
  const [{ devices }, reservations, keys] = await Promise.all([
    observe(api, projectId, tag),
    api.listIPReservations(projectId),
    apiKeys ? apiKeys.listProjectApiKeys(projectId) : Promise.resolve([]),
  ]);
  return {
    devices,
    reservations: reservations.filter((r) => r.tags?.includes(tag)),
    ...(apiKeys
      ? {
          apiKeys: keys
            .filter((k) => k.description === tag)
            .map((k) => ({ id: k.id, description: k.description! })),
        }
      : {}),
  };
}

/** True when the inventory holds nothing. */
export function isEmpty(inv: Inventory): boolean {
  return (
    inv.devices.length === 0 && inv.reservations.length === 0 && (inv.apiKeys ?? []).length === 0
  );
}

export const inventoryPhase: Phase<DestroyContext> = {
  title: 'Find what the cluster owns (by tag)',
  async run(ctx, io) {
    ctx.inventory = await takeInventory(ctx.api, ctx.projectId, ctx.tag, ctx.apiKeys?.api);
    const keys = ctx.inventory.apiKeys?.length ?? 0;
    io.progress.status(
      `${ctx.inventory.devices.length} devices, ${ctx.inventory.reservations.length} IP reservations` +
        (ctx.apiKeys ? `, ${keys} API key${keys === 1 ? '' : 's'}` : ''),
    );
  },
};

export const deleteDevicesPhase: Phase<DestroyContext> = {
  title: 'Delete devices',
  skip: (ctx) => (ctx.inventory?.devices.length ? false : 'no devices'),
  items: (ctx) =>
    (ctx.inventory?.devices ?? []).map((d) => ({ key: d.hostname, title: d.hostname })),
  async run(ctx, io) {
    const targets = (ctx.inventory?.devices ?? []).map((d) => ({
      deviceId: d.id,
      hostname: d.hostname,
      state: d.state,
      locked: d.locked,
    }));
    await deleteDevices(
      { ...waitTarget(ctx, io), executor: ctx.executor, parallelism: ctx.options.parallelism },
      targets,
      'gone',
    );
  },
};

/**
 * Deletes the IP reservations. A reservation with assignments cannot be deleted (Metal answers
 * 422), so it is read again with its assignments and each remaining one is removed first; the
 * devices' own assignments are normally gone with the devices.
 */
export const deleteReservationsPhase: Phase<DestroyContext> = {
  title: 'Delete IP reservations',
  skip: (ctx) => (ctx.inventory?.reservations.length ? false : 'no IP reservations'),
  items: (ctx) =>
    (ctx.inventory?.reservations ?? []).map((r) => ({ key: r.id, title: reservationLabel(r) })),
  async run(ctx, io) {
    const limit = pLimit(Math.max(1, ctx.options.parallelism));
    const ids = new Set((ctx.inventory?.reservations ?? []).map((r) => r.id));
    const current = ctx.executor.dryRun
      ? (ctx.inventory?.reservations ?? [])
      : (await ctx.api.listIPReservations(ctx.projectId, { include: ['assignments'] })).filter(
          (r) => ids.has(r.id),
        );
    const hostnames = new Map((ctx.inventory?.devices ?? []).map((d) => [d.id, d.hostname]));
    await settleAll(
      (ctx.inventory?.reservations ?? []).map((r) =>
        limit(async () => {
          io.progress.item(r.id, 'running', 'deleting');
          const fresh = current.find((x) => x.id === r.id);
          for (const a of fresh ? embeddedAssignments(fresh) : []) {
            const device = deviceIdOf(a);
            io.progress.item(r.id, 'running', `unassigning from ${device ?? a.id}`);
            await ctx.executor.execute({
              kind: 'unassign-ip',
              id: a.id,
              from: (device && hostnames.get(device)) ?? device ?? 'unknown device',
            });
          }
          try {
            const res = await ctx.executor.execute({
              kind: 'delete-ip-reservation',
              id: r.id,
              label: reservationLabel(r),
            });
            io.progress.item(r.id, 'done', res === 'absent' ? 'gone' : 'deleted');
          } catch (err) {
            // 422 (still assigned) is reported by the verify phase as a leftover, not a crash.
            if (isUnprocessable(err) || isNotFound(err))
              io.progress.item(r.id, 'failed', String((err as Error).message));
            else throw err;
          }
        }),
      ),
    );
  },
};

/**
 * Deletes the cluster's project API key(s) (description `loko:cluster=<name>`), after the devices
 * whose CCM used it; 404 counts as done.
 */
export const deleteApiKeysPhase: Phase<DestroyContext> = {
  title: 'Delete the cluster API key',
  skip: (ctx) =>
    !ctx.apiKeys ? 'API keys not handled' : ctx.inventory?.apiKeys?.length ? false : 'no API key',
  items: (ctx) =>
    (ctx.inventory?.apiKeys ?? []).map((k) => ({ key: k.id, title: `API key ${k.description}` })),
  async run(ctx, io) {
    for (const k of ctx.inventory?.apiKeys ?? []) {
      io.progress.item(k.id, 'running', 'deleting');
      const res = (await ctx.apiKeys!.executor.execute({
        kind: 'delete-api-key',
        id: k.id,
        description: k.description,
      })) as 'deleted' | 'absent';
      io.progress.item(k.id, 'done', res === 'absent' ? 'gone' : 'deleted');
    }
  },
};

export const verifyPhase: Phase<DestroyContext> = {
  title: 'Verify nothing is left',
  skip: (ctx) => (ctx.executor.dryRun ? 'dry run' : false),
  async run(ctx, io) {
    const inv = await takeInventory(ctx.api, ctx.projectId, ctx.tag, ctx.apiKeys?.api);
    ctx.leftovers = inv;
    if (!isEmpty(inv)) throw leftoverError(ctx.clusterName, inv);
    io.progress.status('nothing left');
  },
};

/** Phases before confirmation. */
export const inventoryPhases: Phase<DestroyContext>[] = [inventoryPhase];
/** Phases after confirmation, in dependency order. */
export const destroyPhases: Phase<DestroyContext>[] = [
  deleteDevicesPhase,
  deleteReservationsPhase,
  deleteApiKeysPhase,
  verifyPhase,
];

/**
 * Runs the inventory, `confirm(inventory)` when there is something to delete, then the deletes.
 * Rejects with a LokoError listing leftovers, InterruptedError, or API errors.
 */
export async function destroyCluster(
  ctx: DestroyContext,
  run: { runner: PhaseRunner; signal: AbortSignal; confirm?: (inv: Inventory) => Promise<void> },
): Promise<DestroyContext> {
  await run.runner.run(inventoryPhases, ctx, run.signal);
  if (!ctx.inventory || isEmpty(ctx.inventory)) return ctx;
  if (run.confirm) await run.confirm(ctx.inventory);
  await run.runner.run(destroyPhases, ctx, run.signal);
  return ctx;
}

/**
 * The error for objects that could not be removed, one per line; the hint depends on why
 * (locked devices must be unlocked, deprovisioning ones disappear on their own).
 */
export function leftoverError(clusterName: string, inv: Inventory): LokoError {
  const lines = [
    ...inv.devices.map(
      (d) => `device ${d.hostname} (${d.id}, ${d.locked ? 'locked, ' : ''}${d.state})`,
    ),
    ...inv.reservations.map((r) => `IP reservation ${reservationLabel(r)} (${r.id})`),
    ...(inv.apiKeys ?? []).map((k) => `API key ${k.description} (${k.id})`),
  ];
  const hints: string[] = [];
  const locked = inv.devices.filter((d) => d.locked);
  for (const d of locked) hints.push(`${d.hostname} is locked: ${unlockFix(d.id)}.`);
  const rest = inv.devices.filter((d) => !d.locked);
  if (rest.some((d) => d.state === 'deprovisioning' || d.state === 'deleted'))
    hints.push(
      'Devices still deprovisioning disappear on their own; run `loko cluster destroy` again in a few minutes.',
    );
  if (rest.some((d) => d.state !== 'deprovisioning' && d.state !== 'deleted'))
    hints.push(
      'Run `loko cluster destroy` again; devices that were still provisioning are deleted once they settle.',
    );
  if (hints.length === 0) hints.push('Run `loko cluster destroy` again.');
  return new LokoError(
    `destroy left ${lines.length} object${lines.length === 1 ? '' : 's'} of cluster "${clusterName}":\n  ${lines.join('\n  ')}`,
    { hint: hints.join('\n') },
  );
}

/** `network/cidr`, e.g. `147.75.1.0/29`. */
export function reservationLabel(r: IPReservation): string {
  return `${r.network}/${r.cidr}`;
}

function waitTarget(ctx: DestroyContext, io: PhaseIO): WaitTarget {
  return {
    api: ctx.api,
    projectId: ctx.projectId,
    tag: ctx.tag,
    poll: { ...ctx.options.poll, clock: ctx.options.clock, signal: io.signal },
    progress: io.progress,
  };
}
