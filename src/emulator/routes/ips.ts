import type { FastifyInstance } from 'fastify';
import { contains, overlaps, parseV4Cidr, v4Size } from '../addressing.js';
import { findMetro } from '../catalog.js';
import { requireDevice, requireProject, type EmulatorContext } from '../context.js';
import { notFound, unprocessable } from '../errors.js';
import { API_PREFIX, isUuid } from '../ids.js';
import { assignElastic, reserveElastic, v4RangeOf } from '../ipam.js';
import { stateAt } from '../lifecycle.js';
import { listParam, paginate, parsePageParams, type QueryValue } from '../pagination.js';
import { addressesVisible, expandOf, renderAssignment, renderReservation } from '../render.js';
import type { AssignmentRecord, ReservationRecord } from '../state.js';
import { bodyObject, Fields } from '../validate.js';

type Query = Record<string, QueryValue>;
type IdParams = { Params: { id: string }; Querystring: Query };

const RESERVATION_TYPES = [
  'global_ipv4',
  'private_ipv4',
  'public_ipv4',
  'public_ipv6',
  'vrf',
] as const;
/** Default cap of public IPv4 addresses per project (more needs a review: `pending`). */
export const PUBLIC_IPV4_QUOTA = 256;

/** IP reservations and assignments: project ips, /ips/{id}, device ips. */
export function registerIpRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  api.get<IdParams>('/projects/:id/ips', async (req) => {
    const project = requireProject(ctx, req.params.id);
    const params = parsePageParams(req.query, 250);
    const types = listParam(req.query.types ?? req.query.type);
    const list = ctx.state.reservations.filter(
      (r) => r.projectId === project.id && (types.length === 0 || types.includes(r.type)),
    );
    const { items, meta } = paginate(
      list,
      params,
      `${API_PREFIX}/projects/${project.id}/ips`,
      req.query,
    );
    const expand = expandOf(req.query);
    return { ip_addresses: items.map((r) => renderReservation(ctx.state, r, expand)), meta };
  });

  api.post<IdParams>('/projects/:id/ips', async (req, reply) => {
    const project = requireProject(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const type = f.oneOf('type', RESERVATION_TYPES, { required: true });
    const quantity = f.int('quantity', { required: type !== 'vrf', min: 1 });
    const metroCode = f.string('metro');
    const facility = f.string('facility');
    const tags = f.stringArray('tags') ?? [];
    const details = f.string('details');
    const customdata = f.object('customdata') ?? {};
    f.string('comments');
    const failOnApproval = f.bool('fail_on_approval_required') ?? false;
    f.check();
    if (type !== 'public_ipv4' && type !== 'global_ipv4') {
      throw unprocessable(`Requesting ${type} reservations is not supported by the emulator`);
    }
    const q = quantity!;
    if ((q & (q - 1)) !== 0) f.add('quantity must be a power of 2');
    let metro;
    if (type === 'public_ipv4') {
      if (q > 256) f.add('quantity must be at most 256 for public_ipv4');
      if (metroCode === undefined && facility === undefined)
        f.add('metro is required for public_ipv4');
      const code =
        metroCode ?? ctx.state.catalog.facilities.find((x) => x.code === facility)?.metro.code;
      metro = code !== undefined ? findMetro(ctx.state.catalog, code) : undefined;
      if ((metroCode ?? facility) !== undefined && !metro) {
        f.add(`metro "${metroCode ?? facility}" is not a valid metro`);
      }
    } else {
      if (q > 4) f.add('quantity must be at most 4 for global_ipv4');
      if (metroCode !== undefined || facility !== undefined) {
        f.add('global_ipv4 reservations must not have a metro or facility');
      }
    }
    f.check();
    const used = ctx.state.reservations
      .filter((r) => r.projectId === project.id && !r.management && r.type === 'public_ipv4')
      .reduce((n, r) => n + v4Size(r.cidr), 0);
    const overQuota = type === 'public_ipv4' && used + q > PUBLIC_IPV4_QUOTA;
    if (overQuota && failOnApproval) {
      throw unprocessable(
        `This request exceeds the project's quota of ${PUBLIC_IPV4_QUOTA} public IPv4 addresses and requires approval`,
      );
    }
    const r = reserveElastic(
      ctx.state,
      {
        projectId: project.id,
        type,
        quantity: q,
        ...(metro ? { metro: metro.code } : {}),
        ...(details !== undefined ? { details } : {}),
        tags,
        customdata,
        state: overQuota ? 'pending' : 'created',
      },
      ctx.clock.now(),
    );
    ctx.changed();
    return reply.code(201).send(renderReservation(ctx.state, r, expandOf(req.query)));
  });

  api.get<IdParams>('/ips/:id', async (req) => {
    const found = findIp(ctx, req.params.id);
    return found.kind === 'reservation'
      ? renderReservation(ctx.state, found.reservation, expandOf(req.query))
      : renderAssignment(ctx.state, found.assignment);
  });

  api.patch<IdParams>('/ips/:id', async (req) => {
    const found = findIp(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const details = f.string('details');
    const tags = f.stringArray('tags');
    const customdata = f.object('customdata');
    f.check();
    if (found.kind === 'reservation') {
      const r = found.reservation;
      if (details !== undefined) r.details = details;
      if (tags !== undefined) r.tags = tags;
      if (customdata !== undefined) r.customdata = customdata;
      ctx.changed();
      return renderReservation(ctx.state, r, expandOf(req.query));
    }
    if (customdata !== undefined) found.assignment.customdata = customdata;
    ctx.changed();
    return renderAssignment(ctx.state, found.assignment);
  });

  api.delete<IdParams>('/ips/:id', async (req, reply) => {
    const found = findIp(ctx, req.params.id);
    if (found.kind === 'assignment') {
      ctx.state.assignments = ctx.state.assignments.filter((a) => a.id !== found.assignment.id);
    } else {
      const r = found.reservation;
      if (r.management) throw unprocessable('Management IP blocks cannot be deleted');
      const n = ctx.state.assignments.filter((a) => a.reservationId === r.id).length;
      if (n > 0) {
        throw unprocessable(
          `IP reservation ${r.network}/${r.cidr} still has ${n} assignment(s); unassign them first`,
        );
      }
      ctx.state.reservations = ctx.state.reservations.filter((x) => x.id !== r.id);
    }
    ctx.changed();
    return reply.code(204).send();
  });

  api.get<IdParams>('/devices/:id/ips', async (req) => {
    const d = requireDevice(ctx, req.params.id);
    const visible = addressesVisible(d, ctx.clock.now());
    const list = ctx.state.assignments.filter(
      (a) => a.deviceId === d.id && (visible || !a.management),
    );
    return { ip_addresses: list.map((a) => renderAssignment(ctx.state, a)) };
  });

  api.post<IdParams>('/devices/:id/ips', async (req, reply) => {
    const d = requireDevice(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const address = f.string('address', { required: true });
    const customdata = f.object('customdata') ?? {};
    f.check();
    const parsed = parseV4Cidr(address!);
    if (!parsed)
      throw unprocessable(
        `address "${address}" is not a valid IPv4 CIDR block (e.g. 198.51.100.4/32)`,
      );
    const now = ctx.clock.now();
    if (stateAt(d, now) === 'deprovisioning') {
      throw unprocessable('Cannot assign an IP address to a device that is being deprovisioned');
    }
    const block = { start: parsed.network, size: v4Size(parsed.cidr) };
    const reservation = ctx.state.reservations.find(
      (r) =>
        r.projectId === d.projectId &&
        !r.management &&
        r.addressFamily === 4 &&
        contains(v4RangeOf(r), block),
    );
    if (!reservation)
      throw unprocessable(`Address ${address} is not within any IP reservation of this project`);
    checkAssignable(reservation, d.metro, address!);
    const clash = ctx.state.assignments.find(
      (a) => a.reservationId === reservation.id && overlaps(v4RangeOf(a), block),
    );
    if (clash) throw unprocessable(`Address ${address} is already assigned`);
    const a = assignElastic(ctx.state, reservation, d, block, parsed.cidr, now, customdata);
    ctx.changed();
    return reply.code(201).send(renderAssignment(ctx.state, a));
  });
}

function checkAssignable(r: ReservationRecord, deviceMetro: string, address: string): void {
  if (r.state !== 'created') {
    throw unprocessable(
      `IP reservation ${r.network}/${r.cidr} is ${r.state} and cannot be assigned yet`,
    );
  }
  if (!r.global && r.metro !== deviceMetro) {
    throw unprocessable(
      `Address ${address} belongs to a reservation in metro ${r.metro}, but the device is in ${deviceMetro}`,
    );
  }
}

type FoundIp =
  | { kind: 'reservation'; reservation: ReservationRecord }
  | { kind: 'assignment'; assignment: AssignmentRecord };

// Reservations and assignments share one id space under /ips/{id}.
function findIp(ctx: EmulatorContext, id: string): FoundIp {
  if (!isUuid(id)) throw notFound();
  const key = id.toLowerCase();
  const reservation = ctx.state.reservations.find((r) => r.id === key);
  if (reservation) {
    requireProject(ctx, reservation.projectId);
    return { kind: 'reservation', reservation };
  }
  const assignment = ctx.state.assignments.find((a) => a.id === key);
  if (assignment) {
    requireDevice(ctx, assignment.deviceId);
    return { kind: 'assignment', assignment };
  }
  throw notFound();
}
