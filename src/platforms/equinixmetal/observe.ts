/**
 * Observed state: what the Metal API says this cluster owns, found by tag (DESIGN.md §3).
 */
import type { MetalApi } from '../../metal/api.js';
import type { Device, IPReservation } from '../../metal/types.js';
import { isEndpointReservation } from './endpoint.js';

/** What the API holds for the cluster. */
export interface ObservedState {
  /** The cluster's devices as listed by the API (every state, including `deprovisioning`). */
  devices: Device[];
  /**
   * The cluster's control-plane Elastic IP reservations (both endpoint tags), assignments
   * embedded; absent when not read.
   */
  reservations?: IPReservation[];
}

/**
 * Lists the devices of `projectId` tagged `tag` with one paginated list call (never per-device
 * GETs). Devices without the exact tag are dropped in case a server matches tags loosely.
 * Rejects with the client's MetalApiError / MetalTransportError.
 */
export async function observe(
  api: MetalApi,
  projectId: string,
  tag: string,
): Promise<ObservedState> {
  const devices = await api.listDevices(projectId, { tag });
  return { devices: devices.filter((d) => d.tags?.includes(tag)) };
}

/**
 * The control-plane Elastic IP reservations of `clusterName` (one list call, assignments
 * embedded). Rejects with the client's errors.
 */
export async function observeEndpoint(
  api: MetalApi,
  projectId: string,
  clusterName: string,
): Promise<IPReservation[]> {
  const all = await api.listIPReservations(projectId, {
    types: ['public_ipv4'],
    include: ['assignments'],
  });
  return all.filter((r) => isEndpointReservation(r, clusterName));
}

/**
 * The device's public IPv4 management address, if assigned yet (not an Elastic IP such as the
 * control-plane endpoint on controller 0).
 */
export function publicIPv4(device: Device): string | undefined {
  const v4 = (device.ip_addresses ?? []).filter((a) => a.address_family === 4 && a.public);
  return (v4.find((a) => a.management !== false) ?? v4[0])?.address;
}

/** The device's metro code, lowercase, from `metro` or the legacy facility code (`sv15` -> `sv`). */
export function deviceMetro(device: Device): string | undefined {
  if (device.metro?.code) return device.metro.code.toLowerCase();
  const fac = device.facility?.code;
  return typeof fac === 'string' ? fac.replace(/\d+$/, '').toLowerCase() : undefined;
}
