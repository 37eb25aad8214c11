/** Updating an IP reservation's tags (OpenAPI `paths/ips/id.yaml` `updateIPAddress`). */
import type { MetalTransport } from './transport.js';
import type { IPReservation } from './types.js';
import { seg } from './util.js';

/**
 * `PATCH /ips/{id}` `{tags}` (IPAssignmentUpdateInput) → 200 the reservation. `tags` replaces the
 * whole list, so pass the tags to keep as well. Idempotent: resending the same list is harmless.
 * 401, 403, 404 (`MetalApiError`).
 */
export function updateIPTags(
  t: MetalTransport,
  id: string,
  tags: string[],
): Promise<IPReservation> {
  return t.json<IPReservation>({ method: 'PATCH', path: `/ips/${seg(id)}`, body: { tags } });
}
