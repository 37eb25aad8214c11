/**
 * Rollout waiters for Deployments, DaemonSets and StatefulSets: the same conditions as
 * `kubectl rollout status`, as a pure function of the object (`rolloutStatus`) and a poller
 * around it (`waitForRollout`).
 */
import type { KubeClient } from './client.js';
import { describeObject, RolloutFailedError } from './errors.js';
import type { KubeObject, ObjectRef } from './objects.js';
import { waitUntil, type WaitOptions } from './wait.js';

/** Kinds a rollout can be awaited for. */
export const ROLLOUT_KINDS = ['Deployment', 'DaemonSet', 'StatefulSet'] as const;

/** Where a rollout stands. */
export interface RolloutStatus {
  /** The controller has observed the latest spec and every replica is updated and available. */
  done: boolean;
  /** The state in words, e.g. `2 of 3 updated replicas are available`. */
  message: string;
  /** Set when the rollout will not finish by waiting (e.g. `ProgressDeadlineExceeded`). */
  failed?: string;
}

/** True when `kind` is one of `ROLLOUT_KINDS`. */
export function isRolloutKind(kind: string): kind is (typeof ROLLOUT_KINDS)[number] {
  return (ROLLOUT_KINDS as readonly string[]).includes(kind);
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

type Rec = Record<string, unknown>;
const num = (v: unknown, dflt = 0): number => (typeof v === 'number' ? v : dflt);
const rec = (v: unknown): Rec => (typeof v === 'object' && v !== null ? (v as Rec) : {});

function observed(obj: KubeObject, status: Rec): RolloutStatus | undefined {
  const generation = num(obj.metadata.generation);
  const seen = num(status.observedGeneration, -1);
  if (seen < generation) {
    return {
      done: false,
      message: `waiting for the controller to observe generation ${generation} (at ${seen < 0 ? 'none' : seen})`,
    };
  }
  return undefined;
}

function deploymentStatus(obj: KubeObject): RolloutStatus {
  const spec = rec(obj.spec);
  const status = rec(obj.status);
  const conds = (Array.isArray(status.conditions) ? status.conditions : []) as Condition[];
  const progressing = conds.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return {
      done: false,
      message: 'progress deadline exceeded',
      failed: `ProgressDeadlineExceeded: ${progressing.message ?? ''}`.trim(),
    };
  }
  const pending = observed(obj, status);
  if (pending) return pending;
  const want = num(spec.replicas, 1);
  const updated = num(status.updatedReplicas);
  const total = num(status.replicas);
  const available = num(status.availableReplicas);
  if (updated < want) {
    return { done: false, message: `${updated} of ${want} new replicas have been updated` };
  }
  if (total > updated) {
    return { done: false, message: `${total - updated} old replicas are pending termination` };
  }
  if (available < updated) {
    return { done: false, message: `${available} of ${updated} updated replicas are available` };
  }
  return { done: true, message: `${available} of ${want} replicas updated and available` };
}

function daemonSetStatus(obj: KubeObject): RolloutStatus {
  const spec = rec(obj.spec);
  const status = rec(obj.status);
  const strategy = rec(spec.updateStrategy).type ?? 'RollingUpdate';
  if (strategy !== 'RollingUpdate') {
    return { done: true, message: `update strategy ${String(strategy)}: no rollout to wait for` };
  }
  const pending = observed(obj, status);
  if (pending) return pending;
  const desired = num(status.desiredNumberScheduled);
  const updated = num(status.updatedNumberScheduled);
  const available = num(status.numberAvailable);
  if (updated < desired) {
    return { done: false, message: `${updated} of ${desired} updated pods are scheduled` };
  }
  if (available < desired) {
    return { done: false, message: `${available} of ${desired} updated pods are available` };
  }
  return { done: true, message: `${available} of ${desired} pods updated and available` };
}

function statefulSetStatus(obj: KubeObject): RolloutStatus {
  const spec = rec(obj.spec);
  const status = rec(obj.status);
  const strategy = rec(spec.updateStrategy);
  if ((strategy.type ?? 'RollingUpdate') !== 'RollingUpdate') {
    return {
      done: true,
      message: `update strategy ${String(strategy.type)}: no rollout to wait for`,
    };
  }
  const pending = observed(obj, status);
  if (pending) return pending;
  const want = num(spec.replicas, 1);
  const ready = num(status.readyReplicas);
  const available = num(status.availableReplicas, ready);
  const updated = num(status.updatedReplicas);
  if (ready < want) return { done: false, message: `${ready} of ${want} pods are ready` };
  if (available < want)
    return { done: false, message: `${available} of ${want} pods are available` };
  const partition = num(rec(strategy.rollingUpdate).partition);
  if (partition > 0) {
    const need = Math.max(want - partition, 0);
    if (updated < need) {
      return { done: false, message: `${updated} of ${need} pods above the partition updated` };
    }
    return { done: true, message: `partitioned rollout: ${updated} of ${need} pods updated` };
  }
  if (status.updateRevision !== status.currentRevision || updated < want) {
    return {
      done: false,
      message: `${updated} of ${want} pods updated to revision ${String(status.updateRevision ?? '?')}`,
    };
  }
  return { done: true, message: `${ready} of ${want} pods updated and ready` };
}

/** Where the rollout of a Deployment, DaemonSet or StatefulSet stands. */
export function rolloutStatus(obj: KubeObject): RolloutStatus {
  switch (obj.kind) {
    case 'Deployment':
      return deploymentStatus(obj);
    case 'DaemonSet':
      return daemonSetStatus(obj);
    case 'StatefulSet':
      return statefulSetStatus(obj);
    default:
      throw new Error(`no rollout to wait for on kind ${obj.kind}`);
  }
}

/**
 * Waits until the rollout of `ref` is complete; returns the object as last read. Throws
 * `RolloutFailedError` when it cannot complete (e.g. `ProgressDeadlineExceeded`, or the object
 * is gone) and `KubeTimeoutError` with the last state after `timeoutMs`.
 */
export async function waitForRollout(
  client: KubeClient,
  ref: ObjectRef,
  opts: WaitOptions,
): Promise<KubeObject> {
  const id = { kind: ref.kind, name: ref.name, namespace: ref.namespace };
  return waitUntil(
    `rollout of ${describeObject(id)}`,
    async () => {
      const obj = await client.get(ref);
      if (!obj) throw new RolloutFailedError(id, 'the object does not exist');
      const s = rolloutStatus(obj);
      if (s.failed) throw new RolloutFailedError(id, s.failed);
      return s.done ? { done: true, value: obj } : { done: false, state: s.message };
    },
    opts,
  );
}

/** Waits for the rollouts of every Deployment, DaemonSet and StatefulSet among `refs`. */
export async function waitForRollouts(
  client: KubeClient,
  refs: ObjectRef[],
  opts: WaitOptions,
): Promise<void> {
  await Promise.all(
    refs.filter((r) => isRolloutKind(r.kind)).map((r) => waitForRollout(client, r, opts)),
  );
}
