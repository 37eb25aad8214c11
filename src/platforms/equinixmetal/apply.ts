/**
 * `cluster apply` for Equinix Metal, as one readable list of phases (DESIGN.md §2.4):
 * read state -> preflight, then (after the command's confirmation) devices -> wait active -> summary.
 * Every mutation goes through the context's {@link Executor}; with a dry-run executor the same
 * phases record exactly what apply would do.
 */
import pLimit from 'p-limit';
import type { ClusterConfig, SourceIndex } from '../../config/types.js';
import type { MetalApi } from '../../metal/api.js';
import type { Device, DeviceCreateInput } from '../../metal/types.js';
import type { Phase, PhaseIO, PhaseItem, PhaseRunner } from '../../tasks/phase.js';
import { LokoError } from '../../util/errors.js';
import { deleteDevices, settleAll, type DeleteTarget } from './delete-devices.js';
import { createWave, desiredState, type DesiredDevice, type DesiredState } from './desired.js';
import type { Executor } from './executor.js';
import { observe, type ObservedState } from './observe.js';
import { plan, refusedReplacements, type Action, type Plan, type ReplaceAction } from './plan.js';
import { DEFAULT_POLL, systemClock, type Clock, type PollOptions } from './poll.js';
import { preflight, type PreflightReport } from './preflight.js';
import { summarize, writeSummary, type ClusterSummary } from './summary.js';
import { waitForActive, type WaitTarget } from './wait.js';

/** Tunables of apply; all have defaults in {@link createApplyContext}. */
export interface ApplyOptions {
  /** Allow `replace` actions caused by a changed plan, OS or metro. */
  allowReplace: boolean;
  /** Maximum concurrent device creates/deletes/updates (default 10). */
  parallelism: number;
  /** Poll timing for waits (default 2 s growing to 10 s, 30 min overall). */
  poll: Omit<PollOptions, 'clock' | 'signal'>;
  clock: Clock;
  /** Write `<asset_dir>/cluster.json` in the summary phase (default true; never in dry-run). */
  writeSummary: boolean;
}

/** State shared by the apply phases. Fields below `executor` are filled in as phases run. */
export interface ApplyContext {
  api: MetalApi;
  cluster: ClusterConfig;
  sources: SourceIndex;
  executor: Executor;
  options: ApplyOptions;
  desired: DesiredState;
  observed?: ObservedState;
  plan?: Plan;
  preflight?: PreflightReport;
  /** Devices by hostname as last listed (after waiting, all active). */
  devices?: Map<string, Device>;
  summary?: ClusterSummary;
  /** Path of the written summary file. */
  summaryFile?: string;
}

/** Builds the context; `options` fill in defaults. */
export function createApplyContext(input: {
  api: MetalApi;
  cluster: ClusterConfig;
  sources: SourceIndex;
  executor: Executor;
  options?: Partial<ApplyOptions>;
}): ApplyContext {
  return {
    api: input.api,
    cluster: input.cluster,
    sources: input.sources,
    executor: input.executor,
    desired: desiredState(input.cluster),
    options: {
      allowReplace: false,
      parallelism: 10,
      poll: DEFAULT_POLL,
      clock: systemClock,
      writeSummary: true,
      ...input.options,
    },
  };
}

/** Reads the cluster's devices by tag and plans. */
export const readStatePhase: Phase<ApplyContext> = {
  title: 'Read the cluster state from the Metal API',
  async run(ctx, io) {
    ctx.observed = await observe(ctx.api, ctx.desired.projectId, ctx.desired.clusterTag);
    ctx.plan = plan(ctx.desired, ctx.observed);
    const c = ctx.plan.counts;
    io.progress.status(
      `${ctx.observed.devices.length} devices found; ${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete`,
    );
  },
};

/** Checks metros, plans, OS and capacity against the API. */
export const preflightPhase: Phase<ApplyContext> = {
  title: 'Check metros, plans, operating systems and capacity',
  async run(ctx, io) {
    ctx.preflight = await preflight({
      api: ctx.api,
      desired: ctx.desired,
      plan: requirePlan(ctx),
      sources: ctx.sources,
    });
    const n = ctx.preflight.capacityChecked.reduce((s, c) => s + c.quantity, 0);
    io.progress.status(n > 0 ? `capacity available for ${n} new devices` : 'ok');
  },
};

/** Applies updates, deletes, replacements and creates. */
export const devicesPhase: Phase<ApplyContext> = {
  title: 'Create, update and delete devices',
  skip: (ctx) => (ctx.plan && !ctx.plan.changes ? 'no device changes' : false),
  items: (ctx) => changedActions(ctx).map(itemFor),
  async run(ctx, io) {
    await applyDeviceChanges(ctx, io);
  },
};

/** Waits until every desired device is active, listing by tag each round. */
export const waitActivePhase: Phase<ApplyContext> = {
  title: 'Wait for devices to become active',
  skip: (ctx) => (ctx.executor.dryRun ? 'dry run' : false),
  items: (ctx) => ctx.desired.devices.map((d) => ({ key: d.hostname, title: d.hostname })),
  async run(ctx, io) {
    const hostnames = ctx.desired.devices.map((d) => d.hostname);
    ctx.devices = await waitForActive(waitTarget(ctx, io), hostnames);
  },
};

/** Builds the summary and writes `<asset_dir>/cluster.json`. */
export const summaryPhase: Phase<ApplyContext> = {
  title: 'Write the cluster summary',
  skip: (ctx) => (ctx.executor.dryRun ? 'dry run' : false),
  async run(ctx, io) {
    if (!ctx.devices) {
      const { devices } = await observe(ctx.api, ctx.desired.projectId, ctx.desired.clusterTag);
      ctx.devices = new Map(
        devices.filter((d) => d.state !== 'deprovisioning').map((d) => [d.hostname, d]),
      );
    }
    ctx.summary = summarize(
      ctx.desired,
      ctx.devices,
      ctx.cluster.assetDir,
      ctx.options.clock.now(),
    );
    if (ctx.options.writeSummary) {
      ctx.summaryFile = await writeSummary(ctx.summary);
      io.progress.status(ctx.summaryFile);
    }
  },
};

/** Phases before confirmation: read state and plan, then preflight. */
export const planPhases: Phase<ApplyContext>[] = [readStatePhase, preflightPhase];

/** Phases after confirmation. */
export const applyPhases: Phase<ApplyContext>[] = [devicesPhase, waitActivePhase, summaryPhase];

/**
 * Throws a LokoError listing replacements that need `--allow-replace` (nothing is done for them).
 * Called after planning and before confirmation.
 */
export function assertReplacementsAllowed(p: Plan, allowReplace: boolean): void {
  const refused = refusedReplacements(p, allowReplace);
  if (refused.length === 0) return;
  const lines = refused.map(
    (a) => `${a.hostname}: ${a.changes.map((c) => `${c.field} ${c.from} -> ${c.to}`).join(', ')}`,
  );
  throw new LokoError(
    `${refused.length} device${refused.length === 1 ? '' : 's'} would have to be replaced (deleted and created again):\n  ${lines.join('\n  ')}`,
    {
      hint: 'Pass --allow-replace to replace them, or change the configuration back. Replacing a device loses its local data.',
    },
  );
}

/**
 * Runs the whole apply: plan phases, the replacement check, `confirm(plan)` when there are
 * changes (the command prompts; the core never does), then the apply phases. Resolves the context
 * with `summary` set. Rejects with PreflightError, LokoError, InterruptedError or API errors.
 */
export async function applyCluster(
  ctx: ApplyContext,
  run: { runner: PhaseRunner; signal: AbortSignal; confirm?: (p: Plan) => Promise<void> },
): Promise<ApplyContext> {
  await run.runner.run(planPhases, ctx, run.signal);
  const p = requirePlan(ctx);
  assertReplacementsAllowed(p, ctx.options.allowReplace);
  if (p.changes && run.confirm) await run.confirm(p);
  await run.runner.run(applyPhases, ctx, run.signal);
  return ctx;
}

/** Actions that change something, in plan order. */
export function changedActions(ctx: ApplyContext): Action[] {
  return (ctx.plan?.actions ?? []).filter((a) => a.type !== 'noop');
}

function itemFor(a: Action): PhaseItem {
  return { key: a.hostname, title: a.hostname };
}

/**
 * The device changes, in an order that is safe to interrupt at any point: tag updates; deletes of
 * unwanted devices and of devices being replaced (waiting until the old device is at least
 * deprovisioning, so a hostname never has two live devices, or gone when the replacement is on a
 * hardware reservation, which stays busy until then); then creates, explicit hardware
 * reservations first so `next-available` cannot take them.
 */
async function applyDeviceChanges(ctx: ApplyContext, io: PhaseIO): Promise<void> {
  const p = requirePlan(ctx);
  assertReplacementsAllowed(p, ctx.options.allowReplace);
  const limit = pLimit(Math.max(1, ctx.options.parallelism));
  const { executor } = ctx;
  const target = { ...waitTarget(ctx, io), executor, parallelism: ctx.options.parallelism };

  const updates = p.actions.filter((a) => a.type === 'update');
  await settleAll(
    updates.map((a) =>
      limit(async () => {
        io.progress.item(a.hostname, 'running', 'updating tags');
        await executor.execute({
          kind: 'update-device',
          deviceId: a.deviceId,
          hostname: a.hostname,
          input: { tags: a.tagsTo },
        });
        io.progress.item(a.hostname, 'done', 'tags updated');
      }),
    ),
  );

  const replaces = p.actions.filter((a): a is ReplaceAction => a.type === 'replace');
  const deletes: DeleteTarget[] = p.actions.flatMap((a) =>
    a.type === 'delete' ? [{ deviceId: a.deviceId, hostname: a.hostname, state: a.state }] : [],
  );
  // A hardware reservation stays busy until its old device is gone, not just deprovisioning.
  const replaced = (onReservation: boolean): DeleteTarget[] =>
    replaces
      .filter((a) => Boolean(a.desired.hardwareReservationId) === onReservation)
      .map((a) => ({ deviceId: a.deviceId, hostname: a.hostname, state: a.state }));
  const lefts = await Promise.all([
    deleteDevices(target, deletes, 'requested'),
    deleteDevices(target, replaced(false), 'deprovisioning'),
    deleteDevices(target, replaced(true), 'gone'),
  ]);
  const left = lefts.flat();
  if (left.length > 0) {
    throw new LokoError(
      `timed out deleting ${left.map((x) => `${x.hostname} (${x.state})`).join(', ')}`,
      { hint: 'Run `loko cluster apply` again to continue.' },
    );
  }

  const creates: DesiredDevice[] = p.actions.flatMap((a) =>
    a.type === 'create' || a.type === 'replace' ? [a.desired] : [],
  );
  for (const wave of [0, 1] as const) {
    const batch = creates.filter((d) => createWave(d) === wave);
    await settleAll(
      batch.map((d) =>
        limit(async () => {
          io.progress.item(d.hostname, 'running', 'creating');
          const created = await executor.execute({
            kind: 'create-device',
            projectId: ctx.desired.projectId,
            tag: ctx.desired.clusterTag,
            input: createInput(d),
          });
          io.progress.item(d.hostname, 'done', `created (${created.state})`);
        }),
      ),
    );
  }
}

/** DeviceCreateInMetroInput for a desired device. */
export function createInput(d: DesiredDevice): DeviceCreateInput {
  return {
    metro: d.metro,
    plan: d.plan,
    operating_system: d.os,
    hostname: d.hostname,
    billing_cycle: d.billingCycle,
    userdata: d.userdata,
    tags: d.tags,
    ...(d.hardwareReservationId ? { hardware_reservation_id: d.hardwareReservationId } : {}),
    ...(d.sshKeys.length > 0
      ? { ssh_keys: d.sshKeys.map((k) => ({ key: k.key, label: k.label })) }
      : {}),
  };
}

function waitTarget(ctx: ApplyContext, io: PhaseIO): WaitTarget {
  return {
    api: ctx.api,
    projectId: ctx.desired.projectId,
    tag: ctx.desired.clusterTag,
    poll: { ...ctx.options.poll, clock: ctx.options.clock, signal: io.signal },
    progress: io.progress,
  };
}

function requirePlan(ctx: ApplyContext): Plan {
  if (!ctx.plan) throw new Error('internal: the plan phase has not run');
  return ctx.plan;
}
