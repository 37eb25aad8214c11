/**
 * `cluster apply` for Equinix Metal, as one readable list of phases (DESIGN.md §2.4):
 * read state -> preflight, then (after the command's confirmation) control-plane Elastic IP ->
 * PKI -> bootstrap of new machines -> devices -> wait active -> assign the Elastic IP -> summary
 * -> wait for the Kubernetes API -> kubeconfig -> nodes registered -> bootstrap components ->
 * nodes Ready. Every Metal mutation goes through the context's {@link Executor}; with a dry-run
 * executor the same phases record exactly what apply would do.
 */
import pLimit from 'p-limit';
import type { ClusterConfig, SourceIndex } from '../../config/types.js';
import type { MetalApi } from '../../metal/api.js';
import type { Device, DeviceCreateInput } from '../../metal/types.js';
import {
  BootstrapToken,
  DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS,
  ensureClusterPki,
  type ClusterPki,
} from '../../pki/index.js';
import type { Phase, PhaseIO, PhaseItem, PhaseRunner } from '../../tasks/phase.js';
import { LokoError } from '../../util/errors.js';
import { deleteDevices, settleAll, type DeleteTarget } from './delete-devices.js';
import {
  createWave,
  desiredState,
  NEXT_AVAILABLE,
  type DesiredDevice,
  type DesiredState,
} from './desired.js';
import { isUnprocessable } from './api-errors.js';
import { ensureClusterApiKey } from './api-key.js';
import {
  controlPlaneEipTag,
  ENDPOINT_PORT,
  endpointTags,
  endpointUrl,
  reservationAddress,
} from './endpoint.js';
import { apiKeyExecutor, type Executor } from './executor.js';
import {
  adminKubeconfig,
  connectClusterApi,
  type ClusterApi,
  type ConnectClusterApi,
  type NodeStatus,
} from './kubernetes.js';
import {
  clusterBootstrapFor,
  kubeconfigPath,
  loadToken,
  saveToken,
  tokenUsable,
} from './machine-bootstrap.js';
import { observe, observeEndpoint, type ObservedState } from './observe.js';
import { plan, refusedReplacements, type Action, type Plan, type ReplaceAction } from './plan.js';
import { DEFAULT_POLL, pollUntil, systemClock, type Clock, type PollOptions } from './poll.js';
import { preflight, reservationSources, type PreflightReport } from './preflight.js';
import { summarize, writeSummary, type ClusterSummary } from './summary.js';
import { controllerHostname } from './tags.js';
import { waitForActive, type WaitTarget } from './wait.js';

/**
 * What apply does after the machines. `wait`: wait for the Kubernetes API, write the kubeconfig,
 * wait for the nodes. `skip`: stop after the machines, for `reason` (shown to the user);
 * `apiExpected` says whether a Kubernetes API may exist at the endpoint at all (false for the
 * emulator without its Kubernetes twin), which decides how a bootstrap token for new machines is
 * found.
 */
export type KubernetesMode =
  { mode: 'wait' } | { mode: 'skip'; reason: string; apiExpected: boolean };

/** Default Kubernetes waits: 1 s growing to 5 s, 30 min overall. */
export const DEFAULT_KUBE_POLL: Omit<PollOptions, 'clock' | 'signal'> = {
  intervalMs: 1_000,
  maxIntervalMs: 5_000,
  factor: 1.5,
  timeoutMs: 30 * 60_000,
};
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
  /** After the machines: wait for Kubernetes (default) or stop. */
  kubernetes: KubernetesMode;
  /** Poll timing of the Kubernetes waits (API, nodes); real time, never scaled. */
  kubePoll: Omit<PollOptions, 'clock' | 'signal'>;
  /** Connects to the cluster's Kubernetes API (unit tests pass a fake). */
  connect: ConnectClusterApi;
  /**
   * Installs the components (the command builds it from src/components; none: apply stops at
   * Kubernetes, as for `--machines-only` callers and unit tests).
   */
  components?: ComponentInstaller;
  /** Skip the non-bootstrap components (`--skip-components`). */
  skipComponents?: boolean;
}

/** The two moments components are applied: right after nodes register, and after they are Ready. */
export type ComponentStage = 'bootstrap' | 'other';

/** What a component stage may know about the cluster from the Metal side. */
export interface ComponentFacts {
  /** The admin kubeconfig written by apply. */
  kubeconfig: string;
  /** The cluster's project API key (a secret), once ensured. */
  metalApiKey?: string;
  /** The control-plane Elastic IP, its API server port and its unique tag (CPEM `eipTag`). */
  endpoint?: { address: string; port: number; eipTag: string };
}

/** One component as a stage applied it. */
export interface AppliedComponent {
  name: string;
  /** Short result, e.g. `3 created, 2 unchanged`. */
  detail: string;
}

/**
 * The seam between the platform and src/components (platforms do not import components): the
 * command builds it from the loaded configuration. `names` lists a stage's components in apply
 * order; `apply` applies them, reporting each through `report`, and resolves what it applied.
 */
export interface ComponentInstaller {
  names(stage: ComponentStage): string[];
  apply(
    stage: ComponentStage,
    facts: ComponentFacts,
    report: (name: string, state: 'running' | 'done' | 'failed', detail?: string) => void,
    signal: AbortSignal,
  ): Promise<AppliedComponent[]>;
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
  /** The control-plane Elastic IP, once found or reserved. */
  endpoint?: { id: string; address: string };
  /** The cluster PKI, once loaded (never in a dry run). */
  pki?: ClusterPki;
  /** Where the new machines' bootstrap token came from, for the log (never the token). */
  tokenSource?: 'new cluster' | 'minted' | 'saved' | 'unregistered';
  /** The Kubernetes API client, once connected. */
  kube?: ClusterApi;
  /** The written admin kubeconfig. */
  kubeconfig?: string;
  /** The cluster's project API key (a secret), once ensured. */
  metalApiKey?: string;
  /** Components applied by this run, in order. */
  components?: AppliedComponent[];
  /** Nodes as last listed by the Kubernetes phases. */
  nodes?: NodeStatus[];
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
      kubernetes: { mode: 'wait' },
      kubePoll: DEFAULT_KUBE_POLL,
      connect: connectClusterApi,
      ...input.options,
    },
  };
}

/** Reads the cluster's devices and control-plane Elastic IP by tag, and plans. */
export const readStatePhase: Phase<ApplyContext> = {
  title: 'Read the cluster state from the Metal API',
  async run(ctx, io) {
    const [{ devices }, reservations] = await Promise.all([
      observe(ctx.api, ctx.desired.projectId, ctx.desired.clusterTag),
      observeEndpoint(ctx.api, ctx.desired.projectId, ctx.desired.clusterName),
    ]);
    ctx.observed = { devices, reservations };
    ctx.plan = plan(ctx.desired, ctx.observed);
    const found = ctx.plan.endpoint?.reservation;
    if (found) ctx.endpoint = found;
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

/** Reserves the control-plane Elastic IP when none carries the cluster's endpoint tags. */
export const endpointReservePhase: Phase<ApplyContext> = {
  title: 'Reserve the control-plane Elastic IP',
  skip: (ctx) =>
    ctx.plan?.endpoint && !ctx.plan.endpoint.reserve
      ? `reserved: ${ctx.endpoint?.address ?? ctx.plan.endpoint.reservation?.address}`
      : false,
  async run(ctx, io) {
    const r = await ctx.executor.execute({
      kind: 'reserve-ip',
      projectId: ctx.desired.projectId,
      metro: ctx.desired.endpointMetro,
      tags: endpointTags(ctx.desired.clusterName),
      details: `loko: control-plane endpoint of cluster ${ctx.desired.clusterName}`,
    });
    if (r.state && r.state !== 'created') {
      throw new LokoError(`the control-plane Elastic IP reservation ${r.id} is ${r.state}`, {
        hint: 'Run `loko cluster apply` again once Equinix Metal has approved it.',
      });
    }
    ctx.endpoint = { id: r.id, address: reservationAddress(r) };
    io.progress.status(ctx.endpoint.address);
  },
};

/**
 * Gives a control-plane Elastic IP reserved by an older loko the tag unique to it (CPEM's
 * `eipTag`): `PATCH /ips/{id}` with the whole tag list, as planned.
 */
export const endpointTagPhase: Phase<ApplyContext> = {
  title: 'Tag the control-plane Elastic IP',
  skip: (ctx) => (ctx.plan?.endpoint?.retag ? false : 'tagged'),
  async run(ctx, io) {
    const retag = ctx.plan!.endpoint!.retag!;
    const label = ctx.endpoint ? `${ctx.endpoint.address}/32` : retag.id;
    await ctx.executor.execute({ kind: 'tag-ip', id: retag.id, tags: retag.tags, label });
    io.progress.status(retag.tags.join(', '));
  },
};

/**
 * Finds or creates the cluster's project API key (description `loko:cluster=<name>`), the
 * credentials of the cloud controller manager, so the user's own token never lands in the
 * cluster. Only when components are installed.
 */
export const apiKeyPhase: Phase<ApplyContext> = {
  title: "Ensure the cluster's Metal API key",
  skip: (ctx) => kubeSkip(ctx) || (!ctx.options.components ? 'no components to install' : false),
  async run(ctx, io) {
    const key = await ensureClusterApiKey({
      api: ctx.api,
      executor: apiKeyExecutor(ctx.executor),
      projectId: ctx.desired.projectId,
      clusterName: ctx.desired.clusterName,
    });
    ctx.metalApiKey = key.token;
    const removed = key.deleted.length > 0 ? `; removed ${key.deleted.length} stale` : '';
    io.progress.status(`${key.created ? 'created' : 'found'} ${key.id}${removed}`);
  },
};

/** Loads (or, on the first run, creates) `<asset_dir>/pki`; the command holds the asset-dir lock. */
export const pkiPhase: Phase<ApplyContext> = {
  title: 'Load the cluster PKI',
  skip: (ctx) =>
    ctx.executor.dryRun
      ? 'dry run'
      : createsOf(ctx).length === 0 && ctx.options.kubernetes.mode === 'skip'
        ? 'no new machines'
        : false,
  async run(ctx, io) {
    ctx.pki = await ensureClusterPki(ctx.cluster.assetDir);
    io.progress.status(
      ctx.pki.written.length > 0 ? `created ${ctx.pki.written.join(', ')}` : ctx.pki.dir,
    );
  },
};

/**
 * Renders the userdata of the machines this apply creates: finds their bootstrap token (see
 * {@link bootstrapToken}) and puts the cluster's endpoint, PKI and token into each one.
 */
export const machineBootstrapPhase: Phase<ApplyContext> = {
  title: 'Prepare the userdata of new machines',
  skip: (ctx) =>
    ctx.executor.dryRun ? 'dry run' : createsOf(ctx).length === 0 ? 'no new machines' : false,
  async run(ctx, io) {
    const endpoint = requireEndpoint(ctx);
    const pki = requirePki(ctx);
    const token = await bootstrapToken(ctx, io);
    const bootstrap = clusterBootstrapFor(ctx.cluster, { endpoint: endpoint.address, pki, token });
    ctx.desired = desiredState(ctx.cluster, bootstrap);
    // The plan's actions carry the desired devices; give them their userdata (nothing else
    // changes: userdata is never compared).
    const byHostname = new Map(ctx.desired.devices.map((d) => [d.hostname, d]));
    const p = requirePlan(ctx);
    ctx.plan = {
      ...p,
      actions: p.actions.map((a) =>
        a.type === 'delete' ? a : { ...a, desired: byHostname.get(a.hostname) ?? a.desired },
      ),
    };
    const n = createsOf(ctx).length;
    io.progress.status(
      `${n} machine${n === 1 ? '' : 's'}; bootstrap token: ${describeTokenSource(ctx.tokenSource)}`,
    );
  },
};

/** Applies updates, deletes, replacements and creates. */
export const devicesPhase: Phase<ApplyContext> = {
  title: 'Create, update and delete devices',
  skip: (ctx) => (ctx.plan && !ctx.plan.deviceChanges ? 'no device changes' : false),
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

/**
 * Puts the control-plane Elastic IP on controller 0 (first removing it from a device being
 * replaced or removed); leaves it where it is when a kept controller holds it.
 */
export const endpointAssignPhase: Phase<ApplyContext> = {
  title: 'Assign the control-plane Elastic IP',
  skip: (ctx) => {
    const e = ctx.plan?.endpoint;
    if (!e) return 'not planned';
    return !e.assign && e.unassign.length === 0 ? `on ${e.heldBy}` : false;
  },
  async run(ctx, io) {
    const e = ctx.plan!.endpoint!;
    for (const u of e.unassign) {
      await ctx.executor.execute({ kind: 'unassign-ip', id: u.id, from: u.from });
    }
    if (!e.assign) return;
    const hostname = e.assign.hostname;
    const deviceId =
      e.assign.deviceId ??
      ctx.devices?.get(hostname)?.id ??
      (ctx.executor.dryRun ? `dry-run:${hostname}` : undefined);
    if (!deviceId) throw new Error(`internal: no device for ${hostname}`);
    const address = requireEndpoint(ctx).address;
    await ctx.executor.execute({
      kind: 'assign-ip',
      deviceId,
      hostname,
      address: `${address}/32`,
    });
    io.progress.status(`${address} on ${hostname}`);
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
      ctx.endpoint?.address,
    );
    if (ctx.options.writeSummary) {
      ctx.summaryFile = await writeSummary(ctx.summary);
      io.progress.status(ctx.summaryFile);
    }
  },
};

/** Why a Kubernetes phase does not run, or false. */
function kubeSkip(ctx: ApplyContext): string | false {
  if (ctx.executor.dryRun) return 'dry run';
  const k = ctx.options.kubernetes;
  return k.mode === 'skip' ? k.reason : false;
}

/**
 * Waits until the API at the endpoint serves loko's admin: retries connection refused, timeouts,
 * 5xx and the 403 right after `kubeadm init`, until the Kubernetes poll timeout.
 */
export const waitApiPhase: Phase<ApplyContext> = {
  title: 'Wait for the Kubernetes API',
  skip: kubeSkip,
  async run(ctx, io) {
    const api = await connect(ctx);
    io.progress.status(api.server);
    await waitForApi(ctx, io, api);
    io.progress.status(`${api.server} answers`);
  },
};

/** Writes `<asset_dir>/auth/kubeconfig` (0600): the endpoint, the CA, loko's admin certificate. */
export const kubeconfigPhase: Phase<ApplyContext> = {
  title: 'Write the admin kubeconfig',
  skip: kubeSkip,
  async run(ctx, io) {
    const { writeKubeconfig } = await import('../../kube/kubeconfig.js');
    const file = kubeconfigPath(ctx.cluster.assetDir);
    await writeKubeconfig(file, kubeconfigSpec(ctx));
    ctx.kubeconfig = file;
    io.progress.status(file);
  },
};

/** Waits until every machine of the configuration is a Node (names are hostnames). */
export const nodesRegisteredPhase: Phase<ApplyContext> = {
  title: 'Wait for the nodes to register',
  skip: kubeSkip,
  items: (ctx) => ctx.desired.devices.map((d) => ({ key: d.hostname, title: d.hostname })),
  async run(ctx, io) {
    await waitForNodes(ctx, io, 'registered');
  },
};

/**
 * Applies the bootstrap components (the Equinix Metal CCM and the CNI) right after the nodes
 * register: the CCM initialises the nodes (they keep the `uninitialized` taint until then) and the
 * CNI makes them Ready, so both must come before the Ready wait. A `component` block only tunes
 * them; `--skip-components` does not skip them.
 */
export const bootstrapComponentsPhase: Phase<ApplyContext> = {
  title: 'Apply the bootstrap components',
  skip: (ctx) =>
    kubeSkip(ctx) ||
    (!ctx.options.components ? 'no component installer (machines and Kubernetes only)' : false),
  items: (ctx) => componentItems(ctx, 'bootstrap'),
  async run(ctx, io) {
    await applyStage(ctx, io, 'bootstrap');
  },
};

/** Applies the configured components that are not bootstrap ones (MetalLB, ...), once nodes are Ready. */
export const otherComponentsPhase: Phase<ApplyContext> = {
  title: 'Apply the components',
  skip: (ctx) =>
    kubeSkip(ctx) ||
    (!ctx.options.components ? 'no component installer (machines and Kubernetes only)' : false) ||
    (ctx.options.skipComponents ? '--skip-components' : false) ||
    (ctx.options.components?.names('other').length === 0 ? 'none configured' : false),
  items: (ctx) => componentItems(ctx, 'other'),
  async run(ctx, io) {
    await applyStage(ctx, io, 'other');
  },
};

function componentItems(ctx: ApplyContext, stage: ComponentStage): PhaseItem[] {
  return (ctx.options.components?.names(stage) ?? []).map((n) => ({ key: n, title: n }));
}

async function applyStage(ctx: ApplyContext, io: PhaseIO, stage: ComponentStage): Promise<void> {
  const installer = ctx.options.components;
  if (!installer || !ctx.kubeconfig) return;
  const applied = await installer.apply(
    stage,
    {
      kubeconfig: ctx.kubeconfig,
      metalApiKey: ctx.metalApiKey,
      endpoint: ctx.endpoint
        ? {
            address: ctx.endpoint.address,
            port: ENDPOINT_PORT,
            eipTag: controlPlaneEipTag(ctx.desired.clusterName),
          }
        : undefined,
    },
    (name, state, detail) => io.progress.item(name, state, detail),
    io.signal,
  );
  (ctx.components ??= []).push(...applied);
  io.progress.status(applied.map((a) => `${a.name}: ${a.detail}`).join(', '));
}

/** Waits until every node of the configuration is Ready. */
export const nodesReadyPhase: Phase<ApplyContext> = {
  title: 'Wait for the nodes to be Ready',
  skip: kubeSkip,
  items: (ctx) => ctx.desired.devices.map((d) => ({ key: d.hostname, title: d.hostname })),
  async run(ctx, io) {
    await waitForNodes(ctx, io, 'ready');
  },
};

/** Phases before confirmation: read state and plan, then preflight. */
export const planPhases: Phase<ApplyContext>[] = [readStatePhase, preflightPhase];

/** Phases that make the machines (after confirmation). */
export const machinePhases: Phase<ApplyContext>[] = [
  endpointReservePhase,
  endpointTagPhase,
  pkiPhase,
  machineBootstrapPhase,
  devicesPhase,
  waitActivePhase,
  endpointAssignPhase,
  summaryPhase,
];

/** Phases that wait for Kubernetes on the machines (skipped in a dry run or when asked). */
export const kubernetesPhases: Phase<ApplyContext>[] = [
  waitApiPhase,
  kubeconfigPhase,
  nodesRegisteredPhase,
  apiKeyPhase,
  bootstrapComponentsPhase,
  nodesReadyPhase,
  otherComponentsPhase,
];

/** Phases after confirmation. */
export const applyPhases: Phase<ApplyContext>[] = [...machinePhases, ...kubernetesPhases];

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

/** Desired devices this apply creates (new or replacing a device). */
export function createsOf(ctx: ApplyContext): DesiredDevice[] {
  return (ctx.plan?.actions ?? []).flatMap((a) =>
    a.type === 'create' || a.type === 'replace' ? [a.desired] : [],
  );
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
    // A replaced device's item stays open: its create follows.
    deleteDevices(target, replaced(false), 'deprovisioning', { keepOpen: true }),
    deleteDevices(target, replaced(true), 'gone', { keepOpen: true }),
  ]);
  const left = lefts.flat();
  if (left.length > 0) {
    throw new LokoError(
      `timed out deleting ${left.map((x) => `${x.hostname} (${x.state})`).join(', ')}`,
      { hint: 'Run `loko cluster apply` again to continue.' },
    );
  }

  const creates = createsOf(ctx);
  if (!executor.dryRun && creates.some((d) => d.userdata === undefined)) {
    throw new Error('internal: a device would be created without userdata');
  }
  for (const wave of [0, 1] as const) {
    const batch = creates.filter((d) => createWave(d) === wave);
    await settleAll(
      batch.map((d) =>
        limit(async () => {
          io.progress.item(d.hostname, 'running', 'creating');
          let created: Device;
          try {
            created = await executor.execute({
              kind: 'create-device',
              projectId: ctx.desired.projectId,
              tag: ctx.desired.clusterTag,
              input: createInput(d),
            });
          } catch (err) {
            if (!isUnprocessable(err)) throw err;
            const e = createRefused(d, err, ctx.sources);
            io.progress.item(d.hostname, 'failed', e.message);
            throw e;
          }
          io.progress.item(d.hostname, 'done', `created (${created.state})`);
        }),
      ),
    );
  }
}

/**
 * The error for a create Metal refused (422): the hostname, the API's message, and the config
 * file:line of the value the message is about (plan, metro, OS or hardware reservation).
 */
export function createRefused(d: DesiredDevice, err: unknown, sources: SourceIndex): LokoError {
  const message = String((err as Error).message);
  const about: Array<[RegExp, string, string[]]> = [
    [
      /reservation/i,
      `hardware reservation ${d.hardwareReservationId ?? ''}`.trim(),
      reservationSources(
        d,
        d.hardwareReservationId === NEXT_AVAILABLE ? 'reservation_ids_default' : 'reservation_ids',
      ),
    ],
    [/\bplan\b/i, `plan ${d.plan}`, d.sources.plan],
    [/\bmetro\b|\bfacility\b/i, `metro ${d.metro}`, d.sources.metro],
    [/operating.system|\bos\b/i, `operating system ${d.os}`, d.sources.os],
  ];
  const where: string[] = [];
  for (const [re, what, keys] of about) {
    if (!re.test(message)) continue;
    const key = keys.find((k) => sources.has(k));
    const r = key ? sources.get(key) : undefined;
    where.push(r ? `${what} at ${r.file}:${r.start.line}:${r.start.column}` : what);
  }
  return new LokoError(
    `creating ${d.hostname} was refused: ${message}${where.length > 0 ? ` (${where.join('; ')})` : ''}`,
    {
      hint: 'Fix the configuration value named above (`loko cluster plan` checks plans, metros, operating systems and reservations), then run `loko cluster apply` again; devices already created are kept.',
    },
  );
}

/** DeviceCreateInMetroInput for a desired device. */
export function createInput(d: DesiredDevice): DeviceCreateInput {
  return {
    metro: d.metro,
    plan: d.plan,
    operating_system: d.os,
    hostname: d.hostname,
    billing_cycle: d.billingCycle,
    ...(d.userdata !== undefined ? { userdata: d.userdata } : {}),
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

function requireEndpoint(ctx: ApplyContext): { id: string; address: string } {
  if (!ctx.endpoint) throw new Error('internal: the Elastic IP phase has not run');
  return ctx.endpoint;
}

function requirePki(ctx: ApplyContext): ClusterPki {
  if (!ctx.pki) throw new Error('internal: the PKI phase has not run');
  return ctx.pki;
}

function kubeconfigSpec(ctx: ApplyContext) {
  return adminKubeconfig(ctx.cluster.clusterName, requireEndpoint(ctx).address, requirePki(ctx));
}

async function connect(ctx: ApplyContext): Promise<ClusterApi> {
  ctx.kube ??= await ctx.options.connect(kubeconfigSpec(ctx));
  return ctx.kube;
}

function kubePoll(ctx: ApplyContext, io: PhaseIO): PollOptions {
  return { ...ctx.options.kubePoll, clock: ctx.options.clock, signal: io.signal };
}

function minutes(ms: number): string {
  const m = ms / 60_000;
  return m >= 1 && Number.isInteger(m) ? `${m} min` : `${Math.round(ms / 1000)} s`;
}

/** Waits until `api.probe()` says ready; LokoError naming the API and its last state on timeout. */
async function waitForApi(ctx: ApplyContext, io: PhaseIO, api: ClusterApi): Promise<void> {
  let last = 'not checked yet';
  const poll = kubePoll(ctx, io);
  await pollUntil(
    poll,
    async () => {
      const r = await api.probe(io.signal);
      if (r.ready) return true;
      if (r.state !== last) io.progress.status(r.state);
      last = r.state;
      return undefined;
    },
    () =>
      new LokoError(
        `timed out after ${minutes(poll.timeoutMs)} waiting for the Kubernetes API at ${api.server}: ${last}`,
        {
          hint:
            `Controller 0 (${controllerHostname(ctx.cluster.clusterName, 0)}) runs kubeadm init from its userdata; ` +
            'check its console or /var/log/cloud-init-output.log. Run `loko cluster apply` again to keep waiting.',
        },
      ),
  );
}

/** Waits until every desired hostname is a Node (`registered`) or a Ready Node (`ready`). */
async function waitForNodes(
  ctx: ApplyContext,
  io: PhaseIO,
  until: 'registered' | 'ready',
): Promise<void> {
  const api = await connect(ctx);
  const hostnames = ctx.desired.devices.map((d) => d.hostname);
  const shown = new Map<string, string>();
  const show = (h: string, state: 'running' | 'done', detail: string): void => {
    if (shown.get(h) === `${state}:${detail}`) return;
    shown.set(h, `${state}:${detail}`);
    io.progress.item(h, state, detail);
  };
  const poll = kubePoll(ctx, io);
  let waiting: string[] = [];
  await pollUntil(
    poll,
    async () => {
      const nodes = await api.listNodes();
      ctx.nodes = nodes;
      const byName = new Map(nodes.map((n) => [n.name, n]));
      waiting = [];
      for (const h of hostnames) {
        const n = byName.get(h);
        if (!n) {
          show(h, 'running', 'not registered');
          waiting.push(`${h} (not registered)`);
        } else if (until === 'registered' || n.ready) {
          show(h, 'done', n.ready ? 'Ready' : 'registered');
        } else {
          show(h, 'running', `NotReady: ${n.detail ?? ''}`.trim());
          waiting.push(`${h} (NotReady: ${n.detail ?? 'not Ready'})`);
        }
      }
      const done = hostnames.length - waiting.length;
      io.progress.status(
        `${done}/${hostnames.length} ${until === 'ready' ? 'Ready' : 'registered'}`,
      );
      return waiting.length === 0 ? true : undefined;
    },
    () =>
      new LokoError(
        `timed out after ${minutes(poll.timeoutMs)} waiting for nodes to ${
          until === 'ready' ? 'be Ready' : 'register'
        }: ${waiting.join(', ')}`,
        {
          hint:
            until === 'ready'
              ? 'Nodes turn Ready once the CNI runs on them (a bootstrap component); check its pods with `kubectl -n kube-flannel get pods` and run `loko health` to see each node.'
              : "A machine registers when kubeadm join succeeds; check the machine's /var/log/cloud-init-output.log. Run `loko cluster apply` again to keep waiting.",
        },
      ),
  );
}

/**
 * The token for the machines this apply creates:
 * - when it creates controller 0, a new one (`kubeadm init` creates it); kept in the asset dir;
 * - else, when the cluster's API answers, a fresh one minted through it;
 * - else the kept one while it has an hour left;
 * - else, when no API can exist (the emulator without its Kubernetes twin), a new, unregistered
 *   one: there is no cluster to join;
 * - else it waits for the API and mints one.
 */
async function bootstrapToken(ctx: ApplyContext, io: PhaseIO): Promise<BootstrapToken> {
  const now = new Date(ctx.options.clock.now());
  const ttlMs = DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS * 1000;
  const c0 = controllerHostname(ctx.cluster.clusterName, 0);
  if (createsOf(ctx).some((d) => d.hostname === c0)) {
    const token = BootstrapToken.generate();
    await saveToken(ctx.cluster.assetDir, { token, expires: new Date(now.getTime() + ttlMs) });
    ctx.tokenSource = 'new cluster';
    return token;
  }
  const k = ctx.options.kubernetes;
  const apiExpected = k.mode === 'wait' || k.apiExpected;
  const mint = async (api: ClusterApi): Promise<BootstrapToken> => {
    const token = BootstrapToken.generate();
    await api.createBootstrapToken(token, new Date(now.getTime() + ttlMs));
    ctx.tokenSource = 'minted';
    return token;
  };
  let api: ClusterApi | undefined;
  if (apiExpected) {
    api = await connect(ctx);
    if ((await api.probe(io.signal)).ready) return mint(api);
  }
  const saved = await loadToken(ctx.cluster.assetDir);
  if (tokenUsable(saved, now)) {
    ctx.tokenSource = 'saved';
    return saved.token;
  }
  if (!api) {
    io.progress.warn(
      'no Kubernetes API to mint a bootstrap token: the new machines get one no cluster knows',
    );
    ctx.tokenSource = 'unregistered';
    return BootstrapToken.generate();
  }
  io.progress.status(`waiting for the Kubernetes API at ${api.server} to mint a bootstrap token`);
  await waitForApi(ctx, io, api);
  return mint(api);
}

function describeTokenSource(s: ApplyContext['tokenSource']): string {
  switch (s) {
    case 'new cluster':
      return 'new (kubeadm init creates it)';
    case 'minted':
      return 'minted through the Kubernetes API';
    case 'saved':
      return 'the one of the first apply, still valid';
    case 'unregistered':
      return 'new, unregistered (no Kubernetes API)';
    default:
      return 'none';
  }
}

/** `https://<endpoint>:6443` once the endpoint is known. */
export function apiServerUrl(ctx: ApplyContext): string | undefined {
  return ctx.endpoint ? endpointUrl(ctx.endpoint.address) : undefined;
}
