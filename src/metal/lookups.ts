/** Metros, plans, operating systems and capacity (reference/metal-api.md §8). */
import type { MetalTransport } from './transport.js';
import type {
  CapacityCheck,
  CapacityCheckResult,
  Metro,
  MetroCapacity,
  OperatingSystem,
  Plan,
} from './types.js';

/** `GET /locations/metros` → `{metros}` (unpaginated). */
export function listMetros(t: MetalTransport): Promise<Metro[]> {
  return t.envelope<Metro>({ path: '/locations/metros' }, 'metros');
}

/** `GET /plans` → `{plans}` (unpaginated). */
export function listPlans(t: MetalTransport): Promise<Plan[]> {
  return t.envelope<Plan>({ path: '/plans' }, 'plans');
}

/** `GET /operating-systems` → `{operating_systems}` (unpaginated). */
export function listOperatingSystems(t: MetalTransport): Promise<OperatingSystem[]> {
  return t.envelope<OperatingSystem>({ path: '/operating-systems' }, 'operating_systems');
}

/** `GET /capacity/metros` → `{capacity: {<metro>: {<plan>: {level}}}}`; resolves `capacity`. */
export async function getMetroCapacity(t: MetalTransport): Promise<MetroCapacity> {
  const body = await t.json<{ capacity?: MetroCapacity }>({
    method: 'GET',
    path: '/capacity/metros',
  });
  return body.capacity ?? {};
}

/**
 * `POST /capacity/metros` `{servers: [{metro, plan, quantity}]}` → `{servers: [{…, available}]}`.
 * `quantity` is sent as a string (the spec's type) and read back as a number. Read-only, so it
 * is resent when no answer arrives.
 */
export async function checkMetroCapacity(
  t: MetalTransport,
  servers: CapacityCheck[],
): Promise<CapacityCheckResult[]> {
  const body = await t.json<{
    servers?: Array<{
      metro?: string;
      plan?: string;
      quantity?: string | number;
      available?: boolean;
    }>;
  }>({
    method: 'POST',
    path: '/capacity/metros',
    body: {
      servers: servers.map((s) => ({ metro: s.metro, plan: s.plan, quantity: String(s.quantity) })),
    },
    retryPostOnNoAnswer: true,
  });
  return (body.servers ?? []).map((s, i) => ({
    metro: s.metro ?? servers[i]?.metro ?? '',
    plan: s.plan ?? servers[i]?.plan ?? '',
    quantity: s.quantity === undefined ? (servers[i]?.quantity ?? 0) : Number(s.quantity),
    available: s.available === true,
  }));
}
