/**
 * The pure planner: desired devices vs observed devices -> typed actions (DESIGN.md §2.3).
 * `cluster plan` prints these actions and `cluster apply` executes exactly these actions.
 */
import type { Device } from '../../metal/types.js';
import type { DesiredDevice, DesiredState } from './desired.js';
import { endpointChanges, planEndpoint, type EndpointPlan } from './endpoint.js';
import { deviceMetro, type ObservedState } from './observe.js';
import { parseHostname } from './tags.js';

/** A device field whose change needs a new machine. */
export type ReplaceField = 'plan' | 'operating_system' | 'metro';

/** One field that differs between the config and the device. */
export interface FieldChange {
  field: ReplaceField;
  from: string;
  to: string;
}

/** Create the device; its hostname has no live device. */
export interface CreateAction {
  type: 'create';
  hostname: string;
  desired: DesiredDevice;
}

/** Only tags drifted: PUT /devices/{id} with the desired tag set. */
export interface UpdateAction {
  type: 'update';
  hostname: string;
  deviceId: string;
  desired: DesiredDevice;
  tagsFrom: string[];
  tagsTo: string[];
}

/**
 * Delete the device and create it again. `reason: 'changed'` (plan, OS or metro differ) needs
 * `--allow-replace`; `reason: 'failed'` (provisioning failed, it never worked) is always allowed.
 */
export interface ReplaceAction {
  type: 'replace';
  hostname: string;
  deviceId: string;
  desired: DesiredDevice;
  state: string;
  reason: 'changed' | 'failed';
  changes: FieldChange[];
  requiresAllowReplace: boolean;
}

/** Why a device is deleted. */
export type DeleteReason = 'scale-down' | 'not-desired' | 'duplicate';

/** Delete a device the config no longer asks for. */
export interface DeleteAction {
  type: 'delete';
  hostname: string;
  deviceId: string;
  state: string;
  reason: DeleteReason;
  /** One sentence for the user, e.g. `pool "general" now has 2 devices`. */
  detail: string;
}

/** The device matches the config; `state` may still be `provisioning` (apply then waits). */
export interface NoopAction {
  type: 'noop';
  hostname: string;
  deviceId: string;
  desired: DesiredDevice;
  state: string;
}

export type Action = CreateAction | UpdateAction | ReplaceAction | DeleteAction | NoopAction;
export type ActionType = Action['type'];

/** Result of {@link plan}. `actions` are in display order: desired order, then deletes. */
export interface Plan {
  clusterName: string;
  actions: Action[];
  counts: Record<ActionType, number>;
  /**
   * The control-plane Elastic IP: reserve, (un)assign, or nothing. Absent when the observed state
   * holds no reservation listing (unit tests of device planning).
   */
  endpoint?: EndpointPlan;
  /** True when any device action other than `noop` is present. */
  deviceChanges: boolean;
  /** True when apply would change anything: a device action or an endpoint change. */
  changes: boolean;
}

/** States in which a device is on its way out and is no longer counted as existing. */
const GONE_STATES = new Set(['deprovisioning', 'deleted']);

/**
 * Plans the changes that turn `observed` into `desired`. Pure.
 *
 * Rules: a desired hostname without a live device is created; a `failed` device is replaced; a
 * device whose plan, OS or metro differs is replaced (apply refuses unless allowed); tags-only drift
 * is an update; userdata is never compared (create-only). Devices with the cluster tag that match no
 * desired hostname (scaled-down indexes, removed pools, unknown names) and extra devices sharing a
 * hostname are deleted. `deprovisioning` devices are ignored. With `observed.reservations`, the
 * control-plane Elastic IP is planned too ({@link planEndpoint}); it throws LokoError when the
 * existing reservation cannot serve.
 */
export function plan(desired: DesiredState, observed: ObservedState): Plan {
  const live = observed.devices.filter((d) => !GONE_STATES.has(d.state));
  const byHostname = new Map<string, Device[]>();
  for (const d of live) {
    const list = byHostname.get(d.hostname) ?? [];
    list.push(d);
    byHostname.set(d.hostname, list);
  }

  const actions: Action[] = [];
  const deletes: DeleteAction[] = [];
  const desiredHostnames = new Set(desired.devices.map((d) => d.hostname));

  for (const want of desired.devices) {
    const candidates = byHostname.get(want.hostname) ?? [];
    const [keep, ...extra] = rankDuplicates(candidates);
    for (const dup of extra) {
      deletes.push(
        deleteAction(dup, 'duplicate', `another device already has hostname ${dup.hostname}`),
      );
    }
    if (!keep) {
      actions.push({ type: 'create', hostname: want.hostname, desired: want });
      continue;
    }
    actions.push(compare(want, keep));
  }

  for (const d of live) {
    if (desiredHostnames.has(d.hostname)) continue;
    deletes.push(undesired(desired, d));
  }
  deletes.sort((a, b) => compareHostnames(desired.clusterName, a.hostname, b.hostname));
  actions.push(...deletes);

  const counts: Record<ActionType, number> = {
    create: 0,
    update: 0,
    replace: 0,
    delete: 0,
    noop: 0,
  };
  for (const a of actions) counts[a.type]++;
  const deviceChanges = actions.some((a) => a.type !== 'noop');
  const endpoint = observed.reservations
    ? planEndpoint(desired, observed.reservations, {
        keptControllers: new Map(
          actions.flatMap((a) =>
            (a.type === 'noop' || a.type === 'update') && a.desired.role === 'controller'
              ? [[a.deviceId, a.hostname] as const]
              : [],
          ),
        ),
        hostnames: new Map(live.map((d) => [d.id, d.hostname])),
      })
    : undefined;
  return {
    clusterName: desired.clusterName,
    actions,
    counts,
    ...(endpoint ? { endpoint } : {}),
    deviceChanges,
    changes: deviceChanges || endpointChanges(endpoint),
  };
}

/** Replace actions that apply must refuse when `allowReplace` is false. */
export function refusedReplacements(p: Plan, allowReplace: boolean): ReplaceAction[] {
  if (allowReplace) return [];
  return p.actions.filter(
    (a): a is ReplaceAction => a.type === 'replace' && a.requiresAllowReplace,
  );
}

function compare(want: DesiredDevice, have: Device): Action {
  const base = { hostname: want.hostname, deviceId: have.id, desired: want, state: have.state };
  if (have.state === 'failed') {
    return {
      type: 'replace',
      ...base,
      reason: 'failed',
      changes: replaceChanges(want, have),
      requiresAllowReplace: false,
    };
  }
  const changes = replaceChanges(want, have);
  if (changes.length > 0) {
    return { type: 'replace', ...base, reason: 'changed', changes, requiresAllowReplace: true };
  }
  if (!sameSet(want.tags, have.tags ?? [])) {
    return {
      type: 'update',
      hostname: want.hostname,
      deviceId: have.id,
      desired: want,
      tagsFrom: [...(have.tags ?? [])],
      tagsTo: [...want.tags],
    };
  }
  return { type: 'noop', ...base };
}

/** Fields that force a new machine. Unknown observed values (field absent) are not a change. */
function replaceChanges(want: DesiredDevice, have: Device): FieldChange[] {
  const changes: FieldChange[] = [];
  const plan = have.plan?.slug;
  if (plan && plan !== want.plan) changes.push({ field: 'plan', from: plan, to: want.plan });
  const os = have.operating_system?.slug;
  if (os && os !== want.os) changes.push({ field: 'operating_system', from: os, to: want.os });
  const metro = deviceMetro(have);
  if (metro && metro !== want.metro) changes.push({ field: 'metro', from: metro, to: want.metro });
  return changes;
}

/** Keeps the best device for a hostname first: not failed, active, oldest, then by id. */
function rankDuplicates(devices: Device[]): Device[] {
  const score = (d: Device): number => (d.state === 'failed' ? 2 : d.state === 'active' ? 0 : 1);
  return [...devices].sort(
    (a, b) =>
      score(a) - score(b) ||
      (a.created_at ?? '').localeCompare(b.created_at ?? '') ||
      a.id.localeCompare(b.id),
  );
}

function undesired(desired: DesiredState, d: Device): DeleteAction {
  const parsed = parseHostname(desired.clusterName, d.hostname);
  const count = parsed ? desired.groupCounts[parsed.group] : undefined;
  if (parsed && count !== undefined) {
    const what =
      parsed.group === 'controller' ? 'controller_count' : `pool "${parsed.group}" count`;
    return deleteAction(d, 'scale-down', `${what} is now ${count}`);
  }
  if (parsed && d.tags?.includes('loko:role=worker')) {
    return deleteAction(
      d,
      'not-desired',
      `pool "${parsed.group}" is no longer in the configuration`,
    );
  }
  return deleteAction(d, 'not-desired', 'its hostname matches no device of the configuration');
}

function deleteAction(d: Device, reason: DeleteReason, detail: string): DeleteAction {
  return { type: 'delete', hostname: d.hostname, deviceId: d.id, state: d.state, reason, detail };
}

/** Orders by group, then by numeric index (so `-10` sorts after `-9`), then lexically. */
function compareHostnames(cluster: string, a: string, b: string): number {
  const pa = parseHostname(cluster, a);
  const pb = parseHostname(cluster, b);
  if (pa && pb) return pa.group.localeCompare(pb.group) || pa.index - pb.index;
  return a.localeCompare(b);
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const x of sa) if (!sb.has(x)) return false;
  return true;
}
