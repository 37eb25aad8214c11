import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  CAPACITY_LIMITS,
  facilityOf,
  findMetro,
  findOperatingSystem,
  findPlan,
  nicCount,
  planOfferedIn,
  type Catalog,
  type MetroRecord,
  type OperatingSystemRecord,
  type PlanRecord,
} from '../catalog.js';
import { requireDevice, requireProject, type EmulatorContext } from '../context.js';
import { unprocessable } from '../errors.js';
import { reservationOfDevice, resolveHardwareReservation } from '../hardware.js';
import { API_PREFIX, newId, shortId } from '../ids.js';
import { assignManagementAddresses, type AddressRequest } from '../ipam.js';
import {
  ACTION_TYPES,
  actionRefusal,
  isProvisioning,
  provisioningEvents,
  provisioningTimeline,
  scheduleAction,
  scheduleDelete,
  stateAt,
  type ActionType,
} from '../lifecycle.js';
import { first, listParam, paginate, parsePageParams, type QueryValue } from '../pagination.js';
import { expandOf, renderDevice } from '../render.js';
import type {
  DeviceRecord,
  EmulatorState,
  HardwareReservationRecord,
  PortRecord,
} from '../state.js';
import { bodyObject, Fields } from '../validate.js';

type Query = Record<string, QueryValue>;
type IdParams = { Params: { id: string }; Querystring: Query };

const BILLING_CYCLES = ['hourly', 'daily', 'monthly', 'yearly'] as const;
// RFC 1123 hostname: dot-separated labels of letters, digits and inner hyphens.
const HOSTNAME_RE =
  /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Devices: create, list, get, update, delete, actions, userdata. */
export function registerDeviceRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  api.post<IdParams>('/projects/:id/devices', async (req, reply) => {
    const project = requireProject(ctx, req.params.id);
    const input = parseCreate(ctx.state, project.id, bodyObject(req.body));
    const now = ctx.clock.now();
    const device = createDevice(ctx.state, project.id, input, now);
    ctx.changed();
    ctx.logger.info(
      `device ${device.hostname} (${device.id}) created: ${device.plan} in ${device.metro}`,
    );
    return reply.code(201).send(renderDevice(ctx.state, device, now, expandOf(req.query)));
  });

  api.get<IdParams>('/projects/:id/devices', async (req) => {
    const project = requireProject(ctx, req.params.id);
    const params = parsePageParams(req.query);
    const now = ctx.clock.now();
    const matches = ctx.state.devices.filter(
      (d) => d.projectId === project.id && matchesFilters(ctx.state, d, req.query),
    );
    const { items, meta } = paginate(
      matches,
      params,
      `${API_PREFIX}/projects/${project.id}/devices`,
      req.query,
    );
    const expand = expandOf(req.query);
    return { devices: items.map((d) => renderDevice(ctx.state, d, now, expand)), meta };
  });

  api.get<IdParams>('/devices/:id', async (req) => {
    const d = requireDevice(ctx, req.params.id);
    return renderDevice(ctx.state, d, ctx.clock.now(), expandOf(req.query));
  });

  api.put<IdParams>('/devices/:id', async (req) => {
    const d = requireDevice(ctx, req.params.id);
    applyUpdate(d, bodyObject(req.body));
    const now = ctx.clock.now();
    d.updatedAt = now;
    ctx.changed();
    return renderDevice(ctx.state, d, now, expandOf(req.query));
  });

  api.delete<IdParams>('/devices/:id', async (req, reply) => {
    const d = requireDevice(ctx, req.params.id);
    const now = ctx.clock.now();
    const state = stateAt(d, now);
    if (isProvisioning(state))
      throw unprocessable('Cannot delete a device while it is provisioning');
    if (state === 'reinstalling')
      throw unprocessable('Cannot delete a device while it is reinstalling');
    if (d.locked) throw unprocessable('Cannot delete a locked device. Unlock it first.');
    // A repeated DELETE while deprovisioning changes nothing (clients retry after timeouts).
    if (state !== 'deprovisioning') {
      scheduleDelete(d, now);
      d.updatedAt = now;
      ctx.changed();
      ctx.logger.info(`device ${d.hostname} (${d.id}) deprovisioning`);
    }
    return reply.code(204).send();
  });

  api.post<IdParams>('/devices/:id/actions', async (req, reply) => {
    const d = requireDevice(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const type = f.oneOf('type', ACTION_TYPES, { required: true });
    const osSlug = f.string('operating_system');
    const ipxe = f.string('ipxe_script_url');
    f.bool('force_delete');
    f.bool('deprovision_fast');
    f.bool('preserve_data');
    f.check();
    const now = ctx.clock.now();
    const refusal = actionRefusal(d, type as ActionType, now);
    if (refusal) throw unprocessable(refusal);
    if (type === 'reinstall') {
      if (osSlug !== undefined) {
        const plan = findPlan(ctx.state.catalog, d.plan)!;
        const os = requireOs(ctx.state.catalog, osSlug, plan);
        d.operatingSystem = os.slug;
      }
      if (ipxe !== undefined) d.ipxeScriptUrl = ipxe;
      d.failureReason = undefined;
    }
    scheduleAction(d, type as ActionType, now);
    d.updatedAt = now;
    ctx.changed();
    return reply.code(202).send();
  });

  api.get<IdParams>('/devices/:id/userdata', async (req) => {
    const d = requireDevice(ctx, req.params.id);
    return { userdata: d.userdata };
  });
}

/** A validated create request. */
interface CreateInput {
  hostname: string;
  description?: string;
  plan: PlanRecord;
  metro: MetroRecord;
  os: OperatingSystemRecord;
  tags: string[];
  userdata: string;
  customdata: Record<string, unknown>;
  billingCycle: string;
  locked: boolean;
  alwaysPxe: boolean;
  ipxeScriptUrl?: string;
  networkFrozen: boolean;
  spotInstance: boolean;
  spotPriceMax?: number;
  terminationTime?: string;
  addresses: AddressRequest;
  /** The hardware reservation the device lands on. */
  reservation?: HardwareReservationRecord;
}

function parseCreate(
  state: EmulatorState,
  projectId: string,
  body: Record<string, unknown>,
): CreateInput {
  const cat = state.catalog;
  const f = new Fields(body);
  const planSlug = f.string('plan', { required: true });
  const osSlug = f.string('operating_system', { required: true });
  const metroCode = f.string('metro');
  const facility = parseFacility(f, body.facility);
  let hostname = f.string('hostname');
  const description = f.string('description');
  const tags = f.stringArray('tags') ?? [];
  const userdata = f.string('userdata') ?? '';
  const customdata = f.object('customdata') ?? {};
  const billingCycle = f.oneOf('billing_cycle', BILLING_CYCLES) ?? 'hourly';
  const locked = f.bool('locked') ?? false;
  const alwaysPxe = f.bool('always_pxe') ?? false;
  const ipxeScriptUrl = f.string('ipxe_script_url');
  const networkFrozen = f.bool('network_frozen') ?? false;
  const spotInstance = f.bool('spot_instance') ?? false;
  const spotPriceMax = f.number('spot_price_max');
  const terminationTime = f.dateTime('termination_time');
  const hwReservation = f.string('hardware_reservation_id');
  f.bool('no_ssh_keys');
  f.stringArray('project_ssh_keys');
  f.stringArray('user_ssh_keys');
  const addresses = parseAddressRequest(f, body.ip_addresses);
  f.check();

  if (hostname !== undefined && !HOSTNAME_RE.test(hostname)) {
    f.add(`hostname "${hostname}" is invalid: use letters, digits, hyphens and dots`);
  }
  if (metroCode === undefined && facility === undefined) f.add('metro is required');
  if (metroCode !== undefined && facility !== undefined)
    f.add('Specify either metro or facility, not both');
  const plan = planSlug !== undefined ? findPlan(cat, planSlug) : undefined;
  if (planSlug !== undefined && !plan) f.add(`plan "${planSlug}" is not a valid plan`);
  const os = osSlug !== undefined ? findOperatingSystem(cat, osSlug) : undefined;
  if (osSlug !== undefined && !os)
    f.add(`operating_system "${osSlug}" is not a valid operating system`);
  f.check();

  let metro: MetroRecord | undefined;
  if (metroCode !== undefined) {
    metro = metroCode.toLowerCase() === 'any' ? anyMetro(state, plan!) : findMetro(cat, metroCode);
    if (!metro) f.add(`metro "${metroCode}" is not a valid metro`);
  } else {
    metro = facilityMetro(state, facility!, plan!);
    if (!metro) f.add(`facility "${facility!.join(', ')}" is not a valid facility`);
  }
  f.check();

  if (!planOfferedIn(plan!, metro!)) {
    f.add(`plan ${plan!.slug} is not available in metro ${metro!.code}`);
  }
  if (!os!.provisionable_on.includes(plan!.slug)) {
    f.add(`operating_system ${os!.slug} is not provisionable on plan ${plan!.slug}`);
  }
  if (os!.slug === 'custom_ipxe' && !ipxeScriptUrl && !userdata.startsWith('#!ipxe')) {
    f.add('custom_ipxe requires ipxe_script_url, or userdata that starts with #!ipxe');
  }
  f.check();

  // Reserved hardware is the project's already: it takes no on-demand capacity.
  const reservation =
    hwReservation !== undefined
      ? resolveHardwareReservation(state, projectId, hwReservation, plan!, metro!)
      : undefined;
  if (!reservation) {
    const level = state.catalog.capacity[metro!.code]?.[plan!.slug] ?? 'unavailable';
    const inUse = state.devices.filter(
      (d) =>
        d.projectId === projectId &&
        d.plan === plan!.slug &&
        d.metro === metro!.code &&
        !reservationOfDevice(state, d.id),
    ).length;
    if (inUse + 1 > CAPACITY_LIMITS[level]) {
      throw unprocessable(
        `Not enough capacity: ${plan!.slug} is ${level === 'unavailable' ? 'not available' : 'limited'} in metro ${metro!.code} right now`,
      );
    }
  }

  hostname ??= `${plan!.slug.split('.').slice(0, 2).join('-')}-${randomBytes(3).toString('hex')}`;
  return {
    hostname,
    ...(description !== undefined ? { description } : {}),
    plan: plan!,
    metro: metro!,
    os: os!,
    tags,
    userdata,
    customdata,
    billingCycle,
    locked,
    alwaysPxe,
    ...(ipxeScriptUrl !== undefined ? { ipxeScriptUrl } : {}),
    networkFrozen,
    spotInstance,
    ...(spotPriceMax !== undefined ? { spotPriceMax } : {}),
    ...(terminationTime !== undefined ? { terminationTime } : {}),
    addresses,
    ...(reservation ? { reservation } : {}),
  };
}

function parseFacility(f: Fields, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'))
    return v as string[];
  f.add('facility must be a facility code or a list of facility codes');
  return undefined;
}

// The deprecated facility variant: the first listed facility that offers the plan ("any" = any).
function facilityMetro(
  state: EmulatorState,
  codes: string[],
  plan: PlanRecord,
): MetroRecord | undefined {
  for (const code of codes) {
    if (code === 'any') return anyMetro(state, plan);
    const fac = state.catalog.facilities.find(
      (x) => x.code === code.toLowerCase() || x.id === code,
    );
    if (fac && planOfferedIn(plan, fac.metro)) return fac.metro;
  }
  const known = state.catalog.facilities.find((x) => codes.includes(x.code));
  return known?.metro;
}

function anyMetro(state: EmulatorState, plan: PlanRecord): MetroRecord | undefined {
  return (
    state.catalog.metros.find(
      (m) => planOfferedIn(plan, m) && state.catalog.capacity[m.code]?.[plan.slug] === 'normal',
    ) ?? state.catalog.metros[0]
  );
}

function parseAddressRequest(f: Fields, v: unknown): AddressRequest {
  if (v === undefined || v === null) return { publicV4: 31, publicV6: true };
  if (!Array.isArray(v)) {
    f.add('ip_addresses must be an array');
    return { publicV4: 31, publicV6: true };
  }
  const req: AddressRequest = { publicV4: null, publicV6: false };
  let privateV4 = false;
  const seen = new Set<string>();
  v.forEach((item: unknown, i) => {
    const at = `ip_addresses[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      f.add(`${at} must be an object`);
      return;
    }
    const o = item as Record<string, unknown>;
    const family = o.address_family;
    const isPublic = o.public === undefined ? true : o.public;
    if (family !== 4 && family !== 6) return f.add(`${at}.address_family must be 4 or 6`);
    if (typeof isPublic !== 'boolean') return f.add(`${at}.public must be a boolean`);
    const cidr = o.cidr;
    const [min, max] = family === 4 ? [28, 32] : [124, 127];
    if (
      cidr !== undefined &&
      (!Number.isInteger(cidr) || (cidr as number) < min || (cidr as number) > max)
    ) {
      return f.add(`${at}.cidr must be between ${min} and ${max} for IPv${family}`);
    }
    if (Array.isArray(o.ip_reservations) && o.ip_reservations.length > 0) {
      return f.add(
        `${at}.ip_reservations is not supported by the emulator; assign Elastic IPs with POST /devices/{id}/ips`,
      );
    }
    const key = `${family}/${isPublic}`;
    if (seen.has(key))
      return f.add(`Only one ip_addresses entry per address family and type (${at})`);
    seen.add(key);
    if (family === 4 && !isPublic) privateV4 = true;
    else if (family === 4) {
      // The smallest public management block the API hands a Linux server is a /31.
      req.publicV4 = Math.min((cidr as number | undefined) ?? 31, 31);
    } else if (isPublic) req.publicV6 = true;
    else f.add(`${at}: private IPv6 addresses are not supported`);
  });
  if (!privateV4) f.add('Private IPv4 address is required');
  return req;
}

function requireOs(cat: Catalog, slug: string, plan: PlanRecord): OperatingSystemRecord {
  const os = findOperatingSystem(cat, slug);
  if (!os) throw unprocessable(`operating_system "${slug}" is not a valid operating system`);
  if (!os.provisionable_on.includes(plan.slug)) {
    throw unprocessable(`operating_system ${os.slug} is not provisionable on plan ${plan.slug}`);
  }
  return os;
}

function createDevice(
  state: EmulatorState,
  projectId: string,
  input: CreateInput,
  now: number,
): DeviceRecord {
  const ruleIndex = state.provisionFailures.findIndex((r) => r.hostname === input.hostname);
  const rule = ruleIndex >= 0 ? state.provisionFailures.splice(ruleIndex, 1)[0] : undefined;
  const timeline = provisioningTimeline(now, rule !== undefined);
  const id = newId();
  const device: DeviceRecord = {
    id,
    projectId,
    hostname: input.hostname,
    ...(input.description !== undefined ? { description: input.description } : {}),
    plan: input.plan.slug,
    metro: input.metro.code,
    facility: facilityOf(state.catalog, input.metro.code).code,
    operatingSystem: input.os.slug,
    tags: input.tags,
    userdata: input.userdata,
    customdata: input.customdata,
    billingCycle: input.billingCycle,
    locked: input.locked,
    alwaysPxe: input.alwaysPxe,
    ...(input.ipxeScriptUrl !== undefined ? { ipxeScriptUrl: input.ipxeScriptUrl } : {}),
    networkFrozen: input.networkFrozen,
    spotInstance: input.spotInstance,
    ...(input.spotPriceMax !== undefined ? { spotPriceMax: input.spotPriceMax } : {}),
    ...(input.terminationTime !== undefined ? { terminationTime: input.terminationTime } : {}),
    createdAt: now,
    updatedAt: now,
    timeline,
    ...(rule ? { failureReason: rule.reason } : {}),
    events: provisioningEvents(timeline, rule?.reason),
    ports: defaultPorts(nicCount(input.plan)),
    rootPassword: randomBytes(12).toString('base64url'),
    // The reserved server hangs off the reservation's switch.
    switchUuid: input.reservation?.switchUuid ?? randomBytes(4).toString('hex'),
  };
  state.devices.push(device);
  try {
    assignManagementAddresses(state, device, input.addresses, now);
  } catch (err) {
    state.devices.pop();
    throw err;
  }
  if (input.reservation) input.reservation.deviceId = device.id;
  return device;
}

/** Default ports: eth pairs bonded into bond0 (bond1 on 4-NIC plans), all layer3. */
export function defaultPorts(nics: number): PortRecord[] {
  const bonds: PortRecord[] = [];
  const eths: PortRecord[] = [];
  for (let i = 0; i < nics; i++) {
    const bond = `bond${Math.floor(i / 2)}`;
    if (i % 2 === 0) {
      bonds.push({
        id: newId(),
        name: bond,
        type: 'NetworkBondPort',
        bonded: true,
        networkType: 'layer3',
      });
    }
    eths.push({
      id: newId(),
      name: `eth${i}`,
      type: 'NetworkPort',
      mac: randomMac(),
      bond,
      bonded: true,
    });
  }
  return [...bonds, ...eths];
}

// Locally administered unicast MACs: never collide with real hardware.
function randomMac(): string {
  const b = randomBytes(6);
  b[0] = (b[0]! & 0xfc) | 0x02;
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}

function matchesFilters(state: EmulatorState, d: DeviceRecord, q: Query): boolean {
  const tag = first(q.tag);
  if (tag !== undefined && !d.tags.includes(tag)) return false;
  const hostname = first(q.hostname);
  if (hostname !== undefined && !d.hostname.toLowerCase().includes(hostname.toLowerCase()))
    return false;
  const metro = first(q.metro);
  if (metro !== undefined) {
    const m = findMetro(state.catalog, metro);
    if (!m || m.code !== d.metro) return false;
  }
  const facility = first(q.facility);
  if (facility !== undefined && facility.toLowerCase() !== d.facility) return false;
  const type = first(q.type);
  if (type === 'spot' && !d.spotInstance) return false;
  if (type === 'ondemand' && d.spotInstance) return false;
  const reserved = reservationOfDevice(state, d.id) !== undefined;
  if (type === 'reserved' && !reserved) return false;
  if (type === 'ondemand' && reserved) return false;
  const reservedParam = first(q.reserved);
  if (reservedParam !== undefined && (reservedParam === 'true') !== reserved) return false;
  const hasTermination = first(q.has_termination_time);
  if (
    hasTermination !== undefined &&
    (hasTermination === 'true') !== (d.terminationTime !== undefined)
  ) {
    return false;
  }
  const mac = first(q.mac_address)?.toLowerCase();
  if (mac !== undefined && !d.ports.some((p) => p.mac === mac)) return false;
  const categories = listParam(q.categories ?? q['categories[]']);
  if (categories.length > 0) {
    const plan = findPlan(state.catalog, d.plan);
    if (!plan || !categories.some((c) => plan.categories.includes(c))) return false;
  }
  const search = first(q.search)?.toLowerCase();
  if (search !== undefined) {
    const ips = state.assignments.filter((a) => a.deviceId === d.id).map((a) => a.address);
    const hay = [
      d.hostname,
      d.description ?? '',
      shortId(d.id),
      d.plan,
      d.operatingSystem,
      d.facility,
      ...d.tags,
      ...ips,
    ];
    if (!hay.some((h) => h.toLowerCase().includes(search))) return false;
  }
  return true;
}

function applyUpdate(d: DeviceRecord, body: Record<string, unknown>): void {
  const f = new Fields(body);
  const hostname = f.string('hostname');
  const description = f.string('description');
  const tags = f.stringArray('tags');
  const userdata = f.string('userdata');
  const customdata = f.object('customdata');
  const locked = f.bool('locked');
  const alwaysPxe = f.bool('always_pxe');
  const ipxe = f.string('ipxe_script_url');
  const billing = f.oneOf('billing_cycle', BILLING_CYCLES);
  const frozen = f.bool('network_frozen');
  const spot = f.bool('spot_instance');
  f.string('firmware_set_id');
  if (hostname !== undefined && !HOSTNAME_RE.test(hostname)) {
    f.add(`hostname "${hostname}" is invalid: use letters, digits, hyphens and dots`);
  }
  if (spot === true && !d.spotInstance)
    f.add('spot_instance can only be set to false (spot to on-demand)');
  f.check();
  if (hostname !== undefined) d.hostname = hostname;
  if (description !== undefined) d.description = description;
  if (tags !== undefined) d.tags = tags;
  if (userdata !== undefined) d.userdata = userdata;
  if (customdata !== undefined) d.customdata = customdata;
  if (locked !== undefined) d.locked = locked;
  if (alwaysPxe !== undefined) d.alwaysPxe = alwaysPxe;
  if (ipxe !== undefined) d.ipxeScriptUrl = ipxe;
  if (billing !== undefined) d.billingCycle = billing;
  if (frozen !== undefined) d.networkFrozen = frozen;
  if (spot === false) d.spotInstance = false;
}
