/** IP reservations and assignments (reference/metal-api.md §6). */
import type { MetalTransport } from './transport.js';
import type {
  IncludeOptions,
  IPAssignment,
  IPReservation,
  IPReservationRequestInput,
} from './types.js';
import { deleted, seg } from './util.js';

/**
 * `GET /projects/{id}/ips?types=…&per_page=100`, following `meta` pages → the project's IP
 * reservations. `types` goes out as repeated keys (`types=public_ipv4&types=global_ipv4`, the
 * spec's form/explode style). `include: ['assignments']` embeds each reservation's assignments
 * (otherwise they are hrefs).
 */
export function listIPReservations(
  t: MetalTransport,
  projectId: string,
  opts: { types?: string[] } & IncludeOptions = {},
): Promise<IPReservation[]> {
  return t.list<IPReservation>(
    {
      path: `/projects/${seg(projectId)}/ips`,
      query: { types: opts.types && opts.types.length > 0 ? opts.types : undefined },
      include: opts.include,
      exclude: opts.exclude,
    },
    'ip_addresses',
  );
}

/**
 * `POST /projects/{id}/ips` (IPReservationRequestInput) → 201 IPReservation (`state` may be
 * `pending` when over quota). Not resent when no answer arrives.
 */
export function createIPReservation(
  t: MetalTransport,
  projectId: string,
  input: IPReservationRequestInput,
): Promise<IPReservation> {
  return t.json<IPReservation>({
    method: 'POST',
    path: `/projects/${seg(projectId)}/ips`,
    body: input,
  });
}

/**
 * `GET /ips/{id}` → an IPReservation or an IPAssignment (they share one id space).
 */
export function getIP(t: MetalTransport, id: string): Promise<IPReservation | IPAssignment> {
  return t.json<IPReservation | IPAssignment>({ method: 'GET', path: `/ips/${seg(id)}` });
}

/**
 * `DELETE /ips/{id}` → 204 `'deleted'`, 404 `'absent'`. An assignment id un-assigns the address;
 * a reservation id deletes the block.
 */
export function deleteIP(t: MetalTransport, id: string): Promise<'deleted' | 'absent'> {
  return deleted(t.request({ method: 'DELETE', path: `/ips/${seg(id)}` }));
}

/** `GET /devices/{id}/ips` → `{ip_addresses}` (unpaginated) → the device's assignments. */
export function listDeviceIPs(t: MetalTransport, deviceId: string): Promise<IPAssignment[]> {
  return t.envelope<IPAssignment>({ path: `/devices/${seg(deviceId)}/ips` }, 'ip_addresses');
}

/**
 * `POST /devices/{id}/ips` `{address: "<ip>/<cidr>"}` (IPAssignmentInput) → 201 IPAssignment.
 * Not resent when no answer arrives (a second assign of the same address answers 422).
 */
export function assignIP(
  t: MetalTransport,
  deviceId: string,
  address: string,
): Promise<IPAssignment> {
  return t.json<IPAssignment>({
    method: 'POST',
    path: `/devices/${seg(deviceId)}/ips`,
    body: { address },
  });
}
