/**
 * Desired state: the devices a {@link ClusterConfig} asks for, computed purely from the config and,
 * once apply knows them, the cluster's bootstrap material (for the userdata of new devices).
 */
import type { BillingCycle, ClusterConfig } from '../../config/types.js';
import {
  clusterTag,
  controllerHostname,
  poolTag,
  roleTag,
  workerHostname,
  type DeviceRole,
} from './tags.js';
import {
  controllerNode,
  renderUserdata,
  workerNode,
  type ClusterBootstrap,
  type NodeBootstrap,
} from './userdata/index.js';

/** `next-available` asks Metal for any free hardware reservation of the plan in the metro. */
export const NEXT_AVAILABLE = 'next-available';

/**
 * Config paths (keys of `LoadResult.sources`) that explain a device's values, most specific first;
 * preflight uses the first one present to name file:line.
 */
export interface DesiredSources {
  plan: string[];
  metro: string[];
  os: string[];
  count: string[];
}

/** One device the config asks for. Field names follow DeviceCreateInput where they map to it. */
export interface DesiredDevice {
  hostname: string;
  role: DeviceRole;
  /** Worker pool name; absent for controllers. */
  pool?: string;
  /** 0-based index within the controllers or the pool. */
  index: number;
  /** Plan slug, e.g. `c3.small.x86`. */
  plan: string;
  /** Metro code, lowercase. */
  metro: string;
  /** Operating-system slug. */
  os: string;
  billingCycle: BillingCycle;
  /** Ownership tags first, then the cluster's user tags, then the pool's; no duplicates. */
  tags: string[];
  /** Reservation UUID, {@link NEXT_AVAILABLE}, or absent for on-demand hardware. */
  hardwareReservationId?: string;
  /** The machine as its userdata describes it: hostname, role, node labels and taints. */
  node: NodeBootstrap;
  /**
   * Create-only `#cloud-config` (holds secrets: never print it): rendered when the bootstrap
   * material is known (apply, after the endpoint and PKI phases), never compared with existing
   * devices. Absent in a plan.
   */
  userdata?: string;
  sshKeys: Array<{ key: string; label: string }>;
  sources: DesiredSources;
}

/** Every device of the cluster, controllers first, then pools in config order, by index. */
export interface DesiredState {
  clusterName: string;
  projectId: string;
  /** `loko:cluster=<name>`: the tag that finds everything this cluster owns. */
  clusterTag: string;
  /** Device count per group: `controller` and every pool name (also pools with count 0). */
  groupCounts: Record<string, number>;
  /** Metro of the control-plane Elastic IP: the cluster's (controllers') metro, lowercase. */
  endpointMetro: string;
  devices: DesiredDevice[];
}

/**
 * Computes the desired devices of `cluster`. With `bootstrap` (the cluster's endpoint, PKI and
 * token), every device carries its rendered userdata. Pure; never throws on a validated config.
 */
export function desiredState(cluster: ClusterConfig, bootstrap?: ClusterBootstrap): DesiredState {
  const name = cluster.clusterName;
  const userdata = (node: NodeBootstrap): { userdata?: string } =>
    bootstrap ? { userdata: renderUserdata(bootstrap, node) } : {};
  const sshKeys = cluster.sshPubkeys.map((key, i) => ({ key, label: sshKeyLabel(name, key, i) }));
  const devices: DesiredDevice[] = [];

  for (let i = 0; i < cluster.controllerCount; i++) {
    const hostname = controllerHostname(name, i);
    const node = controllerNode(name, i);
    devices.push({
      hostname,
      role: 'controller',
      index: i,
      plan: cluster.controllerType,
      metro: cluster.metro.toLowerCase(),
      os: cluster.os,
      billingCycle: cluster.billingCycle,
      tags: uniq([clusterTag(name), roleTag('controller'), ...cluster.tags]),
      hardwareReservationId: reservationFor(
        cluster.reservationIds,
        cluster.reservationIdsDefault,
        i,
      ),
      node,
      ...userdata(node),
      sshKeys,
      sources: {
        plan: ['cluster.controller_type', 'cluster'],
        metro: ['cluster.metro', 'cluster.facility', 'cluster'],
        os: ['cluster.os', 'cluster'],
        count: ['cluster.controller_count', 'cluster'],
      },
    });
  }

  for (const pool of cluster.workerPools) {
    const p = `cluster.worker_pool.${pool.name}`;
    for (let i = 0; i < pool.count; i++) {
      const hostname = workerHostname(name, pool.name, i);
      const node = workerNode(name, pool, i);
      devices.push({
        hostname,
        role: 'worker',
        pool: pool.name,
        index: i,
        plan: pool.nodeType,
        metro: pool.metro.toLowerCase(),
        os: pool.os,
        billingCycle: cluster.billingCycle,
        tags: uniq([
          clusterTag(name),
          roleTag('worker'),
          poolTag(pool.name),
          ...overrideTags(cluster.tags, pool.tags),
        ]),
        hardwareReservationId: reservationFor(pool.reservationIds, pool.reservationIdsDefault, i),
        node,
        ...userdata(node),
        sshKeys,
        sources: {
          plan: [`${p}.node_type`, p],
          metro: [`${p}.metro`, 'cluster.metro', 'cluster.facility', p],
          os: [`${p}.os`, 'cluster.os', p],
          count: [`${p}.count`, p],
        },
      });
    }
  }

  const groupCounts: Record<string, number> = { controller: cluster.controllerCount };
  for (const pool of cluster.workerPools) groupCounts[pool.name] = pool.count;
  return {
    clusterName: name,
    projectId: cluster.projectId,
    clusterTag: clusterTag(name),
    groupCounts,
    endpointMetro: cluster.metro.toLowerCase(),
    devices,
  };
}

/**
 * Explicit reservations are created before `next-available` ones, so Metal cannot hand a
 * reservation the config names explicitly to a `next-available` device (lokoctl's
 * `nodes_depend_on`, terraform-provider-packet#176). Returns 0 for the first wave, 1 for the second.
 */
export function createWave(device: Pick<DesiredDevice, 'hardwareReservationId'>): 0 | 1 {
  return device.hardwareReservationId === NEXT_AVAILABLE ? 1 : 0;
}

function reservationFor(
  ids: Record<number, string>,
  fallback: '' | 'next-available',
  index: number,
): string | undefined {
  const explicit = ids[index];
  if (explicit) return explicit;
  return fallback === NEXT_AVAILABLE ? NEXT_AVAILABLE : undefined;
}

/** The key's own comment when it has one (`ssh-ed25519 AAAA… alice@laptop`), else a stable label. */
function sshKeyLabel(clusterName: string, key: string, index: number): string {
  const comment = key.trim().split(/\s+/).slice(2).join(' ');
  return comment || `${clusterName}-key-${index}`;
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * User tags of a pool's devices: the cluster's `key:value` tags with the pool's tags overriding
 * the same key, so `team = "a"` on the cluster and `team = "b"` on a pool gives `team:b` only.
 */
export function overrideTags(clusterTags: string[], poolTags: string[]): string[] {
  const key = (t: string) => t.split(':', 1)[0];
  const poolKeys = new Set(poolTags.map(key));
  return [...clusterTags.filter((t) => !poolKeys.has(key(t))), ...poolTags].sort();
}
