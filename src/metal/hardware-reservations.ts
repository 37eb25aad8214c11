/** Hardware reservations (reference/metal-api.md §8). */
import type { MetalTransport } from './transport.js';
import type {
  HardwareReservation,
  IncludeOptions,
  ListHardwareReservationsOptions,
} from './types.js';
import { seg } from './util.js';

/**
 * `GET /projects/{id}/hardware-reservations[?provisionable=only]&per_page=100`, following `meta`
 * pages → the project's hardware reservations.
 */
export function listHardwareReservations(
  t: MetalTransport,
  projectId: string,
  opts: ListHardwareReservationsOptions = {},
): Promise<HardwareReservation[]> {
  return t.list<HardwareReservation>(
    {
      path: `/projects/${seg(projectId)}/hardware-reservations`,
      query: { provisionable: opts.provisionableOnly ? 'only' : undefined },
      include: opts.include,
      exclude: opts.exclude,
    },
    'hardware_reservations',
  );
}

/** `GET /hardware-reservations/{id}` → HardwareReservation. */
export function getHardwareReservation(
  t: MetalTransport,
  id: string,
  opts: IncludeOptions = {},
): Promise<HardwareReservation> {
  return t.json<HardwareReservation>({
    method: 'GET',
    path: `/hardware-reservations/${seg(id)}`,
    ...opts,
  });
}
