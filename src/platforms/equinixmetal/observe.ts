/**
 * Observed state: what the Metal API says this cluster owns, found by tag (DESIGN.md §3).
 */
import type { MetalApi } from '../../metal/api.js';
import type { Device } from '../../metal/types.js';

/** The cluster's devices as listed by the API (every state, including `deprovisioning`). */
export interface ObservedState {
  devices: Device[];
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

/** The device's first public IPv4 management address, if assigned yet. */
export function publicIPv4(device: Device): string | undefined {
  return device.ip_addresses?.find((a) => a.address_family === 4 && a.public)?.address;
}

/** The device's metro code, lowercase, from `metro` or the legacy facility code (`sv15` -> `sv`). */
export function deviceMetro(device: Device): string | undefined {
  if (device.metro?.code) return device.metro.code.toLowerCase();
  const fac = device.facility?.code;
  return typeof fac === 'string' ? fac.replace(/\d+$/, '').toLowerCase() : undefined;
}
