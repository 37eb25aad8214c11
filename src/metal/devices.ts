/** Devices (reference/metal-api.md §3). */
import type { MetalTransport } from './transport.js';
import type {
  Device,
  DeviceActionOptions,
  DeviceActionType,
  DeviceCreateInput,
  DeviceUpdateInput,
  IncludeOptions,
  ListDevicesOptions,
} from './types.js';
import { deleted, seg } from './util.js';

/**
 * `GET /projects/{id}/devices?tag=…&hostname=…&per_page=100`, following `meta` pages → all
 * matching devices of the project.
 */
export function listDevices(
  t: MetalTransport,
  projectId: string,
  opts: ListDevicesOptions = {},
): Promise<Device[]> {
  return t.list<Device>(
    {
      path: `/projects/${seg(projectId)}/devices`,
      query: { tag: opts.tag, hostname: opts.hostname },
      include: opts.include,
      exclude: opts.exclude,
    },
    'devices',
  );
}

/** `GET /devices/{id}` → Device. */
export function getDevice(
  t: MetalTransport,
  deviceId: string,
  opts: IncludeOptions = {},
): Promise<Device> {
  return t.json<Device>({ method: 'GET', path: `/devices/${seg(deviceId)}`, ...opts });
}

/**
 * `POST /projects/{id}/devices` (DeviceCreateInMetroInput) → 201 Device. Not resent when no answer
 * arrives (the device may exist); callers reconcile by listing devices by tag.
 */
export function createDevice(
  t: MetalTransport,
  projectId: string,
  input: DeviceCreateInput,
): Promise<Device> {
  return t.json<Device>({
    method: 'POST',
    path: `/projects/${seg(projectId)}/devices`,
    body: input,
  });
}

/** `PUT /devices/{id}` (DeviceUpdateInput) → 200 Device. */
export function updateDevice(
  t: MetalTransport,
  deviceId: string,
  input: DeviceUpdateInput,
): Promise<Device> {
  return t.json<Device>({ method: 'PUT', path: `/devices/${seg(deviceId)}`, body: input });
}

/** `DELETE /devices/{id}[?force_delete=…]` → 204 `'deleted'`, 404 `'absent'`. */
export function deleteDevice(
  t: MetalTransport,
  deviceId: string,
  opts: { forceDelete?: boolean } = {},
): Promise<'deleted' | 'absent'> {
  return deleted(
    t.request({
      method: 'DELETE',
      path: `/devices/${seg(deviceId)}`,
      query: { force_delete: opts.forceDelete },
    }),
  );
}

/** `POST /devices/{id}/actions` `{type, …}` (DeviceActionInput) → 202, no body. */
export async function deviceAction(
  t: MetalTransport,
  deviceId: string,
  type: DeviceActionType,
  opts: DeviceActionOptions = {},
): Promise<void> {
  await t.request({
    method: 'POST',
    path: `/devices/${seg(deviceId)}/actions`,
    body: { ...opts, type },
  });
}

/** `GET /devices/{id}/userdata` → `{userdata}`; resolves the userdata string ('' when unset). */
export async function getUserdata(t: MetalTransport, deviceId: string): Promise<string> {
  const body = await t.json<{ userdata?: string | null }>({
    method: 'GET',
    path: `/devices/${seg(deviceId)}/userdata`,
  });
  return body.userdata ?? '';
}
