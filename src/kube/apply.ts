/**
 * Applying a set of objects: server-side apply (field manager `loko`, no force unless asked) in a
 * safe order, and pruning of what a component no longer renders.
 *
 * Order: Namespaces and CustomResourceDefinitions first, then a wait until every CRD of the set
 * is `Established`, then the rest by kind (RBAC and config before workloads, webhook
 * configurations after them, custom resources last; the order of the input within a kind).
 * Webhooks that are not reachable yet are retried (./retry.ts); everything else fails at once.
 */
import type { ApplyRequestOptions, KubeClient } from './client.js';
import { UnknownKindError } from './errors.js';
import {
  componentSelector,
  groupOf,
  objectKey,
  refOf,
  withComponentLabels,
  type KubeObject,
  type ObjectRef,
} from './objects.js';
import { retryTransient } from './retry.js';
import { waitForRollouts } from './rollout.js';
import { sleep, waitUntil } from './wait.js';

/** What applying one object did. */
export type ApplyAction = 'created' | 'configured' | 'unchanged';

/** One applied object. */
export interface AppliedObject {
  ref: ObjectRef;
  action: ApplyAction;
  /** The object as the API stored it (with managedFields, resourceVersion, status). */
  object: KubeObject;
}

/** What an apply did. */
export interface ApplyResult {
  applied: AppliedObject[];
  /** Objects deleted by pruning (`applyComponent` only). */
  pruned: ObjectRef[];
}

/** Progress of an apply, for the caller to display (this layer never prints). */
export type ApplyProgress =
  | { type: 'applied'; ref: ObjectRef; action: ApplyAction }
  | { type: 'waiting'; what: string }
  | { type: 'retrying'; ref: ObjectRef; webhook: string; message: string }
  | { type: 'pruned'; ref: ObjectRef };

/** Options of `applyObjects`. */
export interface ApplyOptions extends ApplyRequestOptions {
  /** Budget for waiting on CRDs to become Established (default 60 s). */
  establishTimeoutMs?: number;
  /** Budget for retrying unreachable webhooks, per object (default 120 s). */
  webhookTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (event: ApplyProgress) => void;
}

/** Options of `applyComponent`. */
export interface ComponentApplyOptions extends ApplyOptions {
  /** Delete the component's objects that are not in the set (default true). */
  prune?: boolean;
  /**
   * Kinds to look for leftovers in besides the kinds of the set (e.g. a kind the component
   * rendered in an earlier version and no longer does).
   */
  pruneKinds?: { apiVersion: string; kind: string }[];
  /** After applying, wait for the rollouts of Deployments, DaemonSets and StatefulSets. */
  rolloutTimeoutMs?: number;
}

/**
 * Apply order of kinds (after Namespaces and CRDs): as Helm installs them, with webhook and
 * admission-policy configurations after the workloads that serve them. Kinds not listed (custom
 * resources) go last.
 */
export const KIND_ORDER = [
  'Namespace',
  'CustomResourceDefinition',
  'PriorityClass',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
] as const;

const CRD = 'CustomResourceDefinition';
const isCrd = (o: { apiVersion: string; kind: string }) =>
  o.kind === CRD && groupOf(o.apiVersion) === 'apiextensions.k8s.io';
const isNamespace = (o: { apiVersion: string; kind: string }) =>
  o.kind === 'Namespace' && o.apiVersion === 'v1';

/** Rank of a kind in `KIND_ORDER` (custom resources after every listed kind). */
export function kindRank(kind: string): number {
  const i = (KIND_ORDER as readonly string[]).indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
}

/**
 * Splits `objects` into the two apply phases: Namespaces and CRDs, then the rest, each sorted by
 * `kindRank` (stable: the input order within a kind is kept).
 */
export function orderForApply(objects: KubeObject[]): { first: KubeObject[]; rest: KubeObject[] } {
  const sorted = objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => kindRank(a.o.kind) - kindRank(b.o.kind) || a.i - b.i)
    .map((x) => x.o);
  return {
    first: sorted.filter((o) => isNamespace(o) || isCrd(o)),
    rest: sorted.filter((o) => !isNamespace(o) && !isCrd(o)),
  };
}

/** Checks that every object has apiVersion, kind and name, and that none appears twice. */
export function validateObjects(objects: KubeObject[]): void {
  const seen = new Set<string>();
  objects.forEach((o, i) => {
    if (!o || typeof o !== 'object') throw new Error(`object #${i + 1} is not an object`);
    if (typeof o.apiVersion !== 'string' || !o.apiVersion) {
      throw new Error(`object #${i + 1} (${o.kind ?? '?'}) has no apiVersion`);
    }
    if (typeof o.kind !== 'string' || !o.kind) throw new Error(`object #${i + 1} has no kind`);
    if (typeof o.metadata?.name !== 'string' || !o.metadata.name) {
      throw new Error(`object #${i + 1} (${o.kind}) has no metadata.name`);
    }
    const key = objectKey(refOf(o));
    if (seen.has(key)) throw new Error(`${o.kind} ${o.metadata.name} appears twice in the set`);
    seen.add(key);
  });
}

/** Where a CRD stands: Established and NamesAccepted, or why not. */
export function crdState(crd: KubeObject): { established: boolean; state: string } {
  const conds = ((crd.status as { conditions?: unknown[] } | undefined)?.conditions ?? []) as {
    type?: string;
    status?: string;
    reason?: string;
    message?: string;
  }[];
  const get = (t: string) => conds.find((c) => c.type === t);
  const names = get('NamesAccepted');
  if (names?.status === 'False') {
    return { established: false, state: `names not accepted: ${names.message ?? names.reason}` };
  }
  const est = get('Established');
  if (est?.status === 'True') return { established: true, state: 'Established' };
  return {
    established: false,
    state: est ? `Established=${est.status} (${est.reason ?? ''})` : 'no Established condition yet',
  };
}

/** Waits until the CRD `name` is Established; returns it. */
export async function waitForCrdEstablished(
  client: KubeClient,
  name: string,
  opts: { timeoutMs?: number; signal?: AbortSignal | undefined } = {},
): Promise<KubeObject> {
  return waitUntil(
    `CustomResourceDefinition ${name} to be Established`,
    async () => {
      const crd = await client.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: CRD,
        name,
      });
      if (!crd) return { done: false, state: 'not found' };
      const s = crdState(crd);
      return s.established ? { done: true, value: crd } : { done: false, state: s.state };
    },
    {
      timeoutMs: opts.timeoutMs ?? 60_000,
      intervalMs: 100,
      maxIntervalMs: 1000,
      signal: opts.signal,
    },
  );
}

/** Group/kind pairs served by the CRDs in `objects` (`example.com/Widget`). */
function crdKinds(objects: KubeObject[]): Set<string> {
  const out = new Set<string>();
  for (const o of objects.filter(isCrd)) {
    const spec = o.spec as { group?: string; names?: { kind?: string } } | undefined;
    if (spec?.group && spec.names?.kind) out.add(`${spec.group}/${spec.names.kind}`);
  }
  return out;
}

async function applyOne(
  client: KubeClient,
  obj: KubeObject,
  opts: ApplyOptions,
  newKinds: Set<string>,
  deadline: number,
): Promise<AppliedObject> {
  const ref = refOf(obj);
  const request = {
    ...(opts.fieldManager !== undefined ? { fieldManager: opts.fieldManager } : {}),
    ...(opts.force !== undefined ? { force: opts.force } : {}),
    ...(opts.dryRun !== undefined ? { dryRun: opts.dryRun } : {}),
    ...(opts.fieldValidation !== undefined ? { fieldValidation: opts.fieldValidation } : {}),
  };
  for (;;) {
    try {
      const before = await client.get(ref);
      const after = await retryTransient(() => client.apply(obj, request), {
        timeoutMs: opts.webhookTimeoutMs ?? 120_000,
        signal: opts.signal,
        onRetry: (webhook, err) =>
          opts.onProgress?.({ type: 'retrying', ref, webhook, message: err.apiMessage }),
      });
      // A server-side dry run never moves the resourceVersion: compare what it would store.
      const action: ApplyAction = !before
        ? 'created'
        : (
              opts.dryRun
                ? sameContent(before, after)
                : before.metadata.resourceVersion === after.metadata.resourceVersion
            )
          ? 'unchanged'
          : 'configured';
      const applied = { ref: refOf(after), action, object: after };
      opts.onProgress?.({ type: 'applied', ref: applied.ref, action });
      return applied;
    } catch (err) {
      // A kind served by a CRD of this set can take a moment to appear in discovery after the
      // CRD is Established.
      const fresh = newKinds.has(`${groupOf(obj.apiVersion)}/${obj.kind}`);
      if (!(err instanceof UnknownKindError) || !fresh || Date.now() > deadline) throw err;
      client.forgetDiscovery(obj.apiVersion);
      await sleep(200, opts.signal);
    }
  }
}

/** True when `a` and `b` are the same object content (key order and resourceVersion aside). */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v as object)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  const strip = (o: KubeObject) => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: undefined },
  });
  return JSON.stringify(canon(strip(a))) === JSON.stringify(canon(strip(b)));
}

/**
 * Applies `objects` with server-side apply in order (see the module comment) and returns what
 * each apply did. Stops at the first error: `FieldConflictError` (another manager owns a field;
 * re-run with `force`), `WebhookUnavailableError`, `KubeApiError`, `UnknownKindError`,
 * `KubeTimeoutError` (a CRD never became Established) or `KubeConnectionError`.
 */
export async function applyObjects(
  client: KubeClient,
  objects: KubeObject[],
  opts: ApplyOptions = {},
): Promise<ApplyResult> {
  validateObjects(objects);
  const { first, rest } = orderForApply(objects);
  const applied: AppliedObject[] = [];
  const establishMs = opts.establishTimeoutMs ?? 60_000;
  const newKinds = crdKinds(objects);
  for (const obj of first) applied.push(await applyOne(client, obj, opts, newKinds, 0));
  const crds = first.filter(isCrd);
  if (crds.length > 0 && !opts.dryRun) {
    opts.onProgress?.({
      type: 'waiting',
      what: `${crds.length} CustomResourceDefinition(s) to be Established`,
    });
    await Promise.all(
      crds.map((c) =>
        waitForCrdEstablished(client, c.metadata.name, {
          timeoutMs: establishMs,
          signal: opts.signal,
        }),
      ),
    );
    client.forgetDiscovery();
  }
  const deadline = Date.now() + establishMs;
  for (const obj of rest) applied.push(await applyOne(client, obj, opts, newKinds, deadline));
  return { applied, pruned: [] };
}

/**
 * Applies the objects of loko component `component`: labels each with
 * `app.kubernetes.io/managed-by=loko` and `loko.dev/component=<component>`, applies them like
 * `applyObjects`, then (unless `prune: false`) deletes the objects carrying both labels that are
 * not in the set, across the kinds of the set and `pruneKinds`. With `rolloutTimeoutMs`, waits
 * for the set's Deployments, DaemonSets and StatefulSets to roll out.
 */
export async function applyComponent(
  client: KubeClient,
  component: string,
  objects: KubeObject[],
  opts: ComponentApplyOptions = {},
): Promise<ApplyResult> {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(component) || component.length > 63) {
    throw new Error(`component name ${JSON.stringify(component)} is not a valid label value`);
  }
  const labelled = objects.map((o) => withComponentLabels(o, component));
  const result = await applyObjects(client, labelled, opts);
  if (opts.prune !== false && !opts.dryRun) {
    const kinds = [...labelled, ...(opts.pruneKinds ?? [])].map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
    }));
    result.pruned = await pruneComponent(
      client,
      component,
      result.applied.map((a) => a.ref),
      kinds,
      opts,
    );
  }
  if (opts.rolloutTimeoutMs !== undefined && !opts.dryRun) {
    opts.onProgress?.({ type: 'waiting', what: 'rollouts' });
    await waitForRollouts(
      client,
      result.applied.map((a) => a.ref),
      { timeoutMs: opts.rolloutTimeoutMs, signal: opts.signal },
    );
  }
  return result;
}

/**
 * Deletes the objects of `component` (both loko labels) of the given kinds that are not in
 * `keep`; returns what it deleted. Objects controlled by another object (an ownerReference with
 * `controller: true`) and objects already being deleted are left alone. Kinds the API no longer
 * serves are skipped. Custom resources go first, Namespaces and CRDs last. `keep: []` removes
 * the whole component.
 */
export async function pruneComponent(
  client: KubeClient,
  component: string,
  keep: ObjectRef[],
  kinds: { apiVersion: string; kind: string }[],
  opts: { signal?: AbortSignal; onProgress?: (event: ApplyProgress) => void } = {},
): Promise<ObjectRef[]> {
  const keepKeys = new Set(keep.map(objectKey));
  const selector = componentSelector(component);
  const seenKinds = new Set<string>();
  const doomed: ObjectRef[] = [];
  for (const k of kinds) {
    const gk = `${groupOf(k.apiVersion)}/${k.kind}`;
    if (seenKinds.has(gk)) continue;
    seenKinds.add(gk);
    if (!(await client.resourceInfo(k.apiVersion, k.kind))) continue;
    for (const item of await client.list(k.apiVersion, k.kind, { labelSelector: selector })) {
      const ref = refOf(item);
      if (keepKeys.has(objectKey(ref))) continue;
      if (item.metadata.deletionTimestamp) continue;
      if (item.metadata.ownerReferences?.some((o) => o.controller)) continue;
      doomed.push(ref);
    }
  }
  const rank = (r: ObjectRef) => (isNamespace(r) || isCrd(r) ? -1 : kindRank(r.kind));
  doomed.sort((a, b) => rank(b) - rank(a));
  const pruned: ObjectRef[] = [];
  for (const ref of doomed) {
    opts.signal?.throwIfAborted();
    if (await client.delete(ref)) {
      pruned.push(ref);
      opts.onProgress?.({ type: 'pruned', ref });
    }
  }
  return pruned;
}
