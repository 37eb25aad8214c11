/**
 * Applying components to a cluster: render each (pure), then server-side apply through
 * src/kube's `applyComponent` (labels, Namespaces/CRDs first, webhook retries, prune by label,
 * rollouts), in the order of the set (dependency order from resolve.ts). Components with
 * `customResourceGroups` go in two steps: everything else, their readiness checks, then their
 * custom resources; pruning runs once at the end over both steps. Never prints: progress goes
 * through `onProgress`.
 */
import {
  applyComponent,
  componentSelector,
  groupOf,
  pruneComponent,
  type ApplyProgress,
  type ApplyResult,
  type KubeClient,
  type KubeObject,
  type ObjectRef,
} from '../kube/index.js';
import { InterruptedError, LokoError } from '../util/errors.js';
import type { ConfiguredComponent } from './resolve.js';
import { BUILTIN_KINDS } from './kinds.js';
import { missingDependencies } from './resolve.js';
import {
  PLACEHOLDER_ANNOTATION,
  type ComponentContext,
  type ComponentDefinition,
} from './types.js';

export { PLACEHOLDER_ANNOTATION } from './types.js';

/** Default budget of each readiness check (5 minutes). */
export const DEFAULT_READY_TIMEOUT_MS = 5 * 60_000;

/** What applying one component did. */
export interface ComponentReport {
  name: string;
  namespace: string;
  /** Objects rendered (both steps). */
  objects: number;
  created: number;
  configured: number;
  unchanged: number;
  /** Objects of the component deleted because it no longer renders them. */
  pruned: number;
  prunedRefs: ObjectRef[];
  /**
   * Objects not sent in a dry run because their namespace or their CRD (both rendered by the
   * component) do not exist on the server yet.
   */
  skipped: number;
  dryRun: boolean;
}

/** Progress of {@link applyComponents}, for the caller to display. */
export type ComponentProgress =
  | { type: 'start'; component: string; index: number; total: number }
  | { type: 'rendered'; component: string; objects: number }
  | { type: 'object'; component: string; event: ApplyProgress }
  | { type: 'ready'; component: string; check: string }
  | { type: 'custom-resources'; component: string; objects: number }
  | { type: 'done'; component: string; report: ComponentReport };

/** Options of {@link applyComponents}. */
export interface ApplyComponentsOptions {
  /** Server-side dry run: nothing is stored, nothing pruned, no waits. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Wait this long for each component's Deployments/DaemonSets/StatefulSets (unset: no wait). */
  rolloutTimeoutMs?: number;
  /** Retry budget per object while an admission webhook does not answer (kube default 120 s). */
  webhookTimeoutMs?: number;
  /** Budget of each readiness check (default {@link DEFAULT_READY_TIMEOUT_MS}). */
  readyTimeoutMs?: number;
  /** Skip the check that dependencies outside the set are installed (cluster apply passes all). */
  skipDependencyCheck?: boolean;
  onProgress?: (e: ComponentProgress) => void;
}

/** Applying a component failed: names the component and keeps the Kubernetes error as cause. */
export class ComponentApplyError extends LokoError {
  readonly component: string;
  constructor(component: string, err: unknown) {
    const e = err instanceof Error ? err : new Error(String(err));
    const prefix = `component "${component}": `;
    // Errors raised for this component already name it.
    super(e.message.startsWith(prefix) ? e.message : `${prefix}${e.message}`, {
      hint: hintFor(e),
      cause: e,
    });
    this.name = 'ComponentApplyError';
    this.component = component;
  }
}

function hintFor(e: Error): string | undefined {
  if (e instanceof LokoError) return e.hint;
  // The twin's apiserver reaches webhooks through a socket of the emulator process: gone when
  // no --emulator command runs (docs/emulator.md).
  if (/loko-twin-egress/.test(e.message))
    return "This cluster runs on the embedded emulator's Kubernetes twin, whose webhooks are served only while a loko command with --emulator runs: add --emulator.";
  switch (e.name) {
    case 'FieldConflictError':
      return 'Another tool manages these fields; loko does not take them over. Remove them from the other tool, or delete the object and apply again.';
    case 'WebhookUnavailableError':
      return "The webhook's pods are not serving; check them (kubectl -n <namespace> get pods), then apply again.";
    case 'KubeConnectionError':
      return 'Check that the cluster is up (loko health) and the kubeconfig (--kubeconfig).';
    case 'KubeTimeoutError':
    case 'RolloutFailedError':
      return 'Check the pods of the component (kubectl describe); apply again once the cause is fixed: it changes nothing that is already right.';
    case 'UnknownKindError':
      return 'A CustomResourceDefinition the component needs is missing; apply the component it comes with first.';
    default:
      return undefined;
  }
}

/** `objects` split into custom resources of `groups` and the rest (input order kept). */
export function splitCustomResources(
  objects: KubeObject[],
  groups: readonly string[] | undefined,
): { base: KubeObject[]; custom: KubeObject[] } {
  if (!groups || groups.length === 0) return { base: objects, custom: [] };
  const set = new Set(groups);
  return {
    base: objects.filter((o) => !set.has(groupOf(o.apiVersion))),
    custom: objects.filter((o) => set.has(groupOf(o.apiVersion))),
  };
}

/** Kinds to look for a component's objects in: a few that every component has, when installed. */
const PRESENCE_KINDS = [
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
];

/** True when the cluster holds objects loko applied for `component`. */
export async function isInstalled(client: KubeClient, component: string): Promise<boolean> {
  for (const k of PRESENCE_KINDS) {
    const items = await client.list(k.apiVersion, k.kind, {
      labelSelector: componentSelector(component),
    });
    if (items.length > 0) return true;
  }
  return false;
}

/**
 * Checks that every dependency of the set that is not itself in the set is installed on the
 * cluster; throws a LokoError naming the missing ones and the command that installs them.
 */
export async function checkDependencies(
  client: KubeClient,
  set: readonly ConfiguredComponent[],
): Promise<void> {
  const missing: { component: string; dependency: string }[] = [];
  const known = new Map<string, boolean>();
  for (const m of missingDependencies(set)) {
    if (!known.has(m.dependency)) known.set(m.dependency, await isInstalled(client, m.dependency));
    if (!known.get(m.dependency)) missing.push(m);
  }
  if (missing.length === 0) return;
  const deps = [...new Set(missing.map((m) => m.dependency))];
  throw new LokoError(
    `${missing.map((m) => `component "${m.component}" needs "${m.dependency}"`).join(', ')}, which is not installed on the cluster`,
    {
      hint: `Apply it in the same run: loko component apply ${[...deps, ...set.map((c) => c.def.name)].join(' ')}`,
    },
  );
}

/**
 * Renders and applies each component of `set` in order (see the module comment) and returns a
 * report per component. Re-applying an unchanged set changes nothing on the API server (every
 * object `unchanged`, resourceVersions kept). Stops at the first failure with a
 * {@link ComponentApplyError} naming the component (the cause is the src/kube error), or
 * InterruptedError when `signal` aborts between objects.
 */
export async function applyComponents(
  client: KubeClient,
  set: readonly ConfiguredComponent[],
  ctx: ComponentContext,
  opts: ApplyComponentsOptions = {},
): Promise<ComponentReport[]> {
  if (!opts.skipDependencyCheck) await checkDependencies(client, set);
  const reports: ComponentReport[] = [];
  for (const [index, c] of set.entries()) {
    if (opts.signal?.aborted) throw new InterruptedError();
    const name = c.def.name;
    opts.onProgress?.({ type: 'start', component: name, index, total: set.length });
    try {
      const report = await applyOne(client, c, ctx, opts);
      reports.push(report);
      opts.onProgress?.({ type: 'done', component: name, report });
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      // A request cut by Ctrl-C fails with whatever the transport says; report the interrupt.
      if (opts.signal?.aborted) throw new InterruptedError();
      throw new ComponentApplyError(name, err);
    }
  }
  return reports;
}

async function applyOne(
  client: KubeClient,
  c: ConfiguredComponent,
  ctx: ComponentContext,
  opts: ApplyComponentsOptions,
): Promise<ComponentReport> {
  const def = c.def as ComponentDefinition;
  const name = def.name;
  const objects = def.render(c.config, ctx);
  opts.onProgress?.({ type: 'rendered', component: name, objects: objects.length });
  if (!opts.dryRun) refusePlaceholders(name, objects);
  const { base, custom } = splitCustomResources(objects, def.customResourceGroups);
  const kubeOpts = {
    ...(opts.dryRun ? { dryRun: true } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.webhookTimeoutMs !== undefined ? { webhookTimeoutMs: opts.webhookTimeoutMs } : {}),
    onProgress: (event: ApplyProgress) =>
      opts.onProgress?.({ type: 'object', component: name, event }),
  };
  const rollout =
    opts.rolloutTimeoutMs !== undefined ? { rolloutTimeoutMs: opts.rolloutTimeoutMs } : {};
  const results: ApplyResult[] = [];
  let skipped = 0;
  // A dry run stores nothing: objects in a namespace or of a kind that this very apply would
  // create cannot be sent yet, so they are counted as skipped instead of failing the run.
  const sendable = async (list: KubeObject[]): Promise<KubeObject[]> => {
    if (!opts.dryRun) return list;
    const { send, skip } = await dryRunFilter(client, list, objects);
    skipped += skip;
    return send;
  };
  // Prune also looks in every built-in kind a component may have used (not only the kinds this
  // render has), so an object whose whole kind the component dropped is found. Never Namespaces
  // or CRDs that the render lacks: those go only with `component delete`. (Custom resource kinds
  // the render lacks are not listed: a CRD's storage answers 429 "(re)initializing" for a while
  // after every change to the CRD, e.g. a caBundle injected by its webhook's cert rotator.)
  const extraKinds = opts.dryRun
    ? []
    : BUILTIN_KINDS.filter((k) => k.kind !== 'Namespace' && k.kind !== 'CustomResourceDefinition');
  if (custom.length === 0) {
    results.push(
      await applyComponent(client, name, await sendable(base), {
        ...kubeOpts,
        ...rollout,
        pruneKinds: extraKinds,
      }),
    );
    if (!opts.dryRun) await runReadiness(client, def, opts);
  } else {
    // Step 1 must not prune the custom resources of step 2 (they are not in its set).
    results.push(
      await applyComponent(client, name, await sendable(base), {
        ...kubeOpts,
        ...rollout,
        prune: false,
      }),
    );
    if (!opts.dryRun) await runReadiness(client, def, opts);
    const step2 = await sendable(custom);
    opts.onProgress?.({ type: 'custom-resources', component: name, objects: step2.length });
    results.push(await applyComponent(client, name, step2, { ...kubeOpts, prune: false }));
    if (!opts.dryRun) {
      const applied = results.flatMap((r) => r.applied.map((a) => a.ref));
      results[results.length - 1]!.pruned = await pruneComponent(
        client,
        name,
        applied,
        uniqueKinds([...objects, ...extraKinds]),
        { ...(opts.signal ? { signal: opts.signal } : {}), onProgress: kubeOpts.onProgress },
      );
    }
  }
  const applied = results.flatMap((r) => r.applied);
  const pruned = results.flatMap((r) => r.pruned);
  const count = (a: string) => applied.filter((x) => x.action === a).length;
  return {
    name,
    namespace: def.namespace,
    objects: objects.length,
    created: count('created'),
    configured: count('configured'),
    unchanged: count('unchanged'),
    pruned: pruned.length,
    prunedRefs: pruned,
    skipped,
    dryRun: opts.dryRun ?? false,
  };
}

/** Throws when a rendered object carries placeholder values (see PLACEHOLDER_ANNOTATION). */
function refusePlaceholders(component: string, objects: readonly KubeObject[]): void {
  for (const o of objects) {
    const keys = o.metadata.annotations?.[PLACEHOLDER_ANNOTATION];
    if (!keys) continue;
    const where = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    throw new LokoError(
      `component "${component}": ${where} holds placeholders for ${keys.split(',').join(', ')}; not applying it, as it would overwrite the live values`,
      {
        hint: "Run it with the cluster's configuration (-c <dir>) and its Metal API (--emulator, --api-url or METAL_API_URL), so loko reads the cluster's API key; `loko cluster apply` creates the key when it is missing.",
      },
    );
  }
}

/**
 * For a dry run: the objects of `list` that can be sent now, and how many cannot because their
 * namespace does not exist yet or their kind is served by a CRD of `all` that is not installed.
 */
async function dryRunFilter(
  client: KubeClient,
  list: KubeObject[],
  all: KubeObject[],
): Promise<{ send: KubeObject[]; skip: number }> {
  const newKinds = new Set(
    all
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => {
        const spec = o.spec as { group?: string; names?: { kind?: string } } | undefined;
        return `${spec?.group ?? ''}/${spec?.names?.kind ?? ''}`;
      }),
  );
  const namespaces = new Map<string, boolean>();
  const send: KubeObject[] = [];
  let skip = 0;
  for (const o of list) {
    if (newKinds.has(`${groupOf(o.apiVersion)}/${o.kind}`)) {
      const served = await client.resourceInfo(o.apiVersion, o.kind);
      if (!served) {
        skip++;
        continue;
      }
    }
    const ns = o.metadata.namespace;
    if (ns !== undefined) {
      if (!namespaces.has(ns)) {
        const found = await client.get({ apiVersion: 'v1', kind: 'Namespace', name: ns });
        namespaces.set(ns, found !== undefined);
      }
      if (!namespaces.get(ns)) {
        skip++;
        continue;
      }
    }
    send.push(o);
  }
  return { send, skip };
}

async function runReadiness(
  client: KubeClient,
  def: ComponentDefinition,
  opts: ApplyComponentsOptions,
): Promise<void> {
  for (const check of def.ready ?? []) {
    if (opts.signal?.aborted) throw new InterruptedError();
    opts.onProgress?.({ type: 'ready', component: def.name, check: check.description });
    await check.wait({
      client,
      timeoutMs: opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  }
}

/** Distinct `apiVersion`/`kind` pairs of `objects` (by group and kind). */
export function uniqueKinds(objects: readonly { apiVersion: string; kind: string }[]): {
  apiVersion: string;
  kind: string;
}[] {
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const o of objects) {
    const key = `${groupOf(o.apiVersion)}/${o.kind}`;
    if (!seen.has(key)) seen.set(key, { apiVersion: o.apiVersion, kind: o.kind });
  }
  return [...seen.values()];
}
