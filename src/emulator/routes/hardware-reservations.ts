import type { FastifyInstance } from 'fastify';
import { requireProject, type EmulatorContext } from '../context.js';
import { notFound, unprocessable } from '../errors.js';
import {
  HARDWARE_RESERVATION_STATES,
  isProvisionable,
  reservationState,
  type HardwareReservationState,
} from '../hardware.js';
import { API_PREFIX, isUuid, shortId } from '../ids.js';
import { first, paginate, parsePageParams, type QueryValue } from '../pagination.js';
import { expandOf, renderHardwareReservation } from '../render.js';
import type { EmulatorState, HardwareReservationRecord } from '../state.js';

type Query = Record<string, QueryValue>;
type IdParams = { Params: { id: string }; Querystring: Query };

/** GET /projects/{id}/hardware-reservations (paginated, filtered) and GET /hardware-reservations/{id}. */
export function registerHardwareReservationRoutes(
  api: FastifyInstance,
  ctx: EmulatorContext,
): void {
  api.get<IdParams>('/projects/:id/hardware-reservations', async (req) => {
    const project = requireProject(ctx, req.params.id);
    const params = parsePageParams(req.query);
    const wanted = first(req.query.state);
    if (
      wanted !== undefined &&
      !HARDWARE_RESERVATION_STATES.includes(wanted as HardwareReservationState)
    ) {
      throw unprocessable(`state must be one of: ${HARDWARE_RESERVATION_STATES.join(', ')}`);
    }
    const provisionable = first(req.query.provisionable);
    if (provisionable !== undefined && provisionable !== 'only') {
      throw unprocessable('provisionable must be "only"');
    }
    const search = first(req.query.query)?.toLowerCase();
    const matches = ctx.state.hardwareReservations.filter(
      (r) =>
        r.projectId === project.id &&
        (wanted === undefined || reservationState(r) === wanted) &&
        (provisionable === undefined || isProvisionable(r)) &&
        (search === undefined || searchable(ctx.state, r).some((s) => s.includes(search))),
    );
    const { items, meta } = paginate(
      matches,
      params,
      `${API_PREFIX}/projects/${project.id}/hardware-reservations`,
      req.query,
    );
    const now = ctx.clock.now();
    const expand = expandOf(req.query);
    return {
      hardware_reservations: items.map((r) => renderHardwareReservation(ctx.state, r, now, expand)),
      meta,
    };
  });

  api.get<IdParams>('/hardware-reservations/:id', async (req) => {
    const id = req.params.id.toLowerCase();
    const r = isUuid(id) ? ctx.state.hardwareReservations.find((x) => x.id === id) : undefined;
    if (!r) throw notFound();
    requireProject(ctx, r.projectId);
    return renderHardwareReservation(ctx.state, r, ctx.clock.now(), expandOf(req.query));
  });
}

// `query=` searches facility code, plan, project name, short id and device hostname (per the spec).
function searchable(state: EmulatorState, r: HardwareReservationRecord): string[] {
  const project = state.projects.find((p) => p.id === r.projectId);
  const device =
    r.deviceId !== undefined ? state.devices.find((d) => d.id === r.deviceId) : undefined;
  return [r.facility, r.plan, project?.name ?? '', shortId(r.id), device?.hostname ?? ''].map((s) =>
    s.toLowerCase(),
  );
}
