/**
 * Ownership tags and deterministic hostnames (DESIGN.md §3). loko has no state file for cloud
 * resources: it finds what it owns by these tags and hostnames, so they must never change shape.
 */

/** Role of a device in the cluster. */
export type DeviceRole = 'controller' | 'worker';

/** The tag every object of cluster `name` carries; the only filter used to list them. */
export function clusterTag(clusterName: string): string {
  return `loko:cluster=${clusterName}`;
}

/** `loko:role=controller|worker`. */
export function roleTag(role: DeviceRole): string {
  return `loko:role=${role}`;
}

/** `loko:pool=<pool>`, workers only. */
export function poolTag(pool: string): string {
  return `loko:pool=${pool}`;
}

/** `<cluster>-controller-<i>`. */
export function controllerHostname(clusterName: string, index: number): string {
  return `${clusterName}-controller-${index}`;
}

/** `<cluster>-<pool>-<i>`. */
export function workerHostname(clusterName: string, pool: string, index: number): string {
  return `${clusterName}-${pool}-${index}`;
}

/** What a hostname says about its device: `group` is `controller` or the pool name. */
export interface ParsedHostname {
  group: string;
  index: number;
}

/**
 * Splits `<cluster>-<group>-<i>` into group and index; `undefined` when the hostname does not
 * follow the scheme of this cluster (it may still carry the cluster tag, e.g. renamed by hand).
 */
export function parseHostname(clusterName: string, hostname: string): ParsedHostname | undefined {
  const prefix = `${clusterName}-`;
  if (!hostname.startsWith(prefix)) return undefined;
  const m = /^(.+)-(\d+)$/.exec(hostname.slice(prefix.length));
  if (!m?.[1] || m[2] === undefined) return undefined;
  return { group: m[1], index: Number(m[2]) };
}
