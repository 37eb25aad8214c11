/**
 * Wire views: stored records -> the API's JSON objects (snake_case, `href`s, RFC 3339 times).
 * Shapes follow the spec's schemas (Device, IPReservation, IPAssignment, Project, BgpConfig…).
 */
import { v4Netmask, v6Netmask } from './addressing.js';
import {
  facilityOf,
  findMetro,
  findOperatingSystem,
  findPlan,
  type FacilityRecord,
  type MetroRecord,
} from './catalog.js';
import { isProvisionable, reservationOfDevice } from './hardware.js';
import { API_PREFIX, href, iso, shortId } from './ids.js';
import { actionList, lastTransitionAt, provisioningPercentage, stateAt } from './lifecycle.js';
import { listParam, type QueryValue } from './pagination.js';
import type {
  AssignmentRecord,
  BgpConfigRecord,
  DeviceRecord,
  EmulatorState,
  HardwareReservationRecord,
  PortRecord,
  ProjectRecord,
  ReservationRecord,
} from './state.js';

/** `include` / `exclude` of a request. */
export interface Expand {
  include: Set<string>;
  exclude: Set<string>;
}

/** Parses `include` / `exclude` (comma-joined or repeated). */
export function expandOf(query: Record<string, QueryValue>): Expand {
  return {
    include: new Set(listParam(query.include)),
    exclude: new Set(listParam(query.exclude)),
  };
}

const NO_EXPAND: Expand = { include: new Set(), exclude: new Set() };

type Json = Record<string, unknown>;

/** Metro object. */
export function renderMetro(m: MetroRecord): Json {
  return { id: m.id, code: m.code, name: m.name, country: m.country };
}

/** Facility object (as embedded in devices). */
export function renderFacility(f: FacilityRecord): Json {
  return {
    id: f.id,
    code: f.code,
    name: f.name,
    features: f.features,
    ip_ranges: f.ip_ranges,
    metro: renderMetro(f.metro),
  };
}

/** Organization object. */
export function renderOrganization(state: EmulatorState, id: string): Json {
  const o = state.organization;
  if (o.id !== id) return href('organizations', id);
  return {
    id: o.id,
    href: href('organizations', o.id).href,
    name: o.name,
    description: '',
    created_at: iso(o.createdAt),
    updated_at: iso(o.createdAt),
    customdata: {},
    projects: state.projects
      .filter((p) => p.organizationId === o.id)
      .map((p) => href('projects', p.id)),
    members: [href('users', state.user.id)],
    memberships: [],
  };
}

/** Project object; `include=organization` expands the organization. */
export function renderProject(state: EmulatorState, p: ProjectRecord, expand = NO_EXPAND): Json {
  return {
    id: p.id,
    href: href('projects', p.id).href,
    name: p.name,
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
    organization: expand.include.has('organization')
      ? renderOrganization(state, p.organizationId)
      : href('organizations', p.organizationId),
    payment_method: href('payment-methods', p.organizationId),
    bgp_config: { href: `${API_PREFIX}/projects/${p.id}/bgp-config` },
    devices: state.devices.filter((d) => d.projectId === p.id).map((d) => href('devices', d.id)),
    members: [href('users', state.user.id)],
    memberships: [],
    invitations: [],
    ssh_keys: [],
    volumes: [],
    max_devices: {},
    network_status: {},
    backend_transfer_enabled: false,
    customdata: p.customdata,
    type: 'default',
    tags: p.tags,
  };
}

/** True once the API shows a device's addresses (they are assigned during provisioning). */
export function addressesVisible(device: DeviceRecord, now: number): boolean {
  return stateAt(device, now) !== 'queued';
}

/**
 * Device object. Plan, metro, facility and OS are expanded unless excluded; project and
 * hardware_reservation on include. `hardware_reservation` is left out for devices on none.
 */
export function renderDevice(
  state: EmulatorState,
  d: DeviceRecord,
  now: number,
  expand = NO_EXPAND,
): Json {
  const cat = state.catalog;
  const plan = findPlan(cat, d.plan)!;
  const metro = findMetro(cat, d.metro)!;
  const facility = cat.facilities.find((f) => f.code === d.facility) ?? facilityOf(cat, metro.code);
  const os = findOperatingSystem(cat, d.operatingSystem)!;
  const project = state.projects.find((p) => p.id === d.projectId)!;
  const reservation = reservationOfDevice(state, d.id);
  const devState = stateAt(d, now);
  const pct = provisioningPercentage(d, now);
  const pick = (name: string, full: Json, ref: { href: string }): Json =>
    expand.exclude.has(name) ? ref : full;
  const ips = addressesVisible(d, now)
    ? state.assignments.filter((a) => a.deviceId === d.id).map((a) => renderAssignment(state, a))
    : [];
  const events = d.events
    .filter((e) => e.at <= now)
    .map((e) => ({
      id: e.id,
      href: href('events', e.id).href,
      type: e.type,
      body: e.body,
      interpolated: e.body,
      state: e.state,
      created_at: iso(e.at),
      relationships: [href('devices', d.id)],
    }));
  const out: Json = {
    id: d.id,
    short_id: shortId(d.id),
    href: href('devices', d.id).href,
    hostname: d.hostname,
    ...(d.description !== undefined ? { description: d.description } : {}),
    state: devState,
    tags: d.tags,
    billing_cycle: d.billingCycle,
    plan: pick('plan', plan as unknown as Json, href('plans', plan.id)),
    metro: pick('metro', renderMetro(metro), href('locations/metros', metro.id)),
    facility: pick('facility', renderFacility(facility), href('facilities', facility.id)),
    operating_system: pick(
      'operating_system',
      os as unknown as Json,
      href('operating-systems', os.id),
    ),
    project: expand.include.has('project')
      ? renderProject(state, project)
      : href('projects', project.id),
    project_lite: href('projects', project.id),
    ...(reservation
      ? {
          hardware_reservation: expand.include.has('hardware_reservation')
            ? renderHardwareReservation(state, reservation, now)
            : href('hardware-reservations', reservation.id),
        }
      : {}),
    ip_addresses: ips,
    network_ports: d.ports.map((p) => renderPort(d, p)),
    provisioning_events: events,
    ...(pct !== undefined ? { provisioning_percentage: pct } : {}),
    actions: actionList(devState),
    userdata: d.userdata,
    customdata: d.customdata,
    locked: d.locked,
    always_pxe: d.alwaysPxe,
    ...(d.ipxeScriptUrl !== undefined ? { ipxe_script_url: d.ipxeScriptUrl } : {}),
    network_frozen: d.networkFrozen,
    spot_instance: d.spotInstance,
    ...(d.spotPriceMax !== undefined ? { spot_price_max: d.spotPriceMax } : {}),
    ...(d.terminationTime !== undefined ? { termination_time: d.terminationTime } : {}),
    bonding_mode: 5,
    switch_uuid: d.switchUuid,
    sos: `sos.${facility.code}.platformequinix.com`,
    iqn: `iqn.${iso(d.createdAt).slice(0, 7)}.net.packet:device.${shortId(d.id)}`,
    user: 'root',
    ...(devState === 'active' ? { root_password: d.rootPassword } : {}),
    ssh_keys: [],
    volumes: [],
    created_by: {
      id: state.user.id,
      short_id: shortId(state.user.id),
      href: href('users', state.user.id).href,
      email: state.user.email,
      first_name: state.user.firstName,
      last_name: state.user.lastName,
      full_name: `${state.user.firstName} ${state.user.lastName}`,
    },
    created_at: iso(d.createdAt),
    updated_at: iso(Math.max(d.updatedAt, lastTransitionAt(d, now))),
  };
  return out;
}

/** Port object. */
export function renderPort(device: DeviceRecord, p: PortRecord): Json {
  const bond = p.bond ? device.ports.find((x) => x.name === p.bond) : undefined;
  return {
    id: p.id,
    href: href('ports', p.id).href,
    name: p.name,
    type: p.type,
    data: p.type === 'NetworkPort' ? { mac: p.mac, bonded: p.bonded } : { bonded: p.bonded },
    ...(bond ? { bond: { id: bond.id, name: bond.name } } : {}),
    ...(p.networkType ? { network_type: p.networkType } : {}),
    virtual_networks: [],
    disbond_operation_supported: true,
  };
}

function netmaskOf(family: 4 | 6, cidr: number): string {
  return family === 4 ? v4Netmask(cidr) : v6Netmask(cidr);
}

/** IPAssignment object. */
export function renderAssignment(state: EmulatorState, a: AssignmentRecord): Json {
  const parent = state.reservations.find((r) => r.id === a.reservationId);
  const device = state.devices.find((d) => d.id === a.deviceId);
  const metro = device ? findMetro(state.catalog, device.metro) : undefined;
  return {
    id: a.id,
    href: href('ips', a.id).href,
    type: 'IPAssignment',
    address_family: a.addressFamily,
    address: a.address,
    network: a.network,
    gateway: a.gateway,
    netmask: netmaskOf(a.addressFamily, a.cidr),
    cidr: a.cidr,
    public: a.public,
    management: a.management,
    manageable: true,
    global_ip: a.global,
    enabled: true,
    assigned_to: href('devices', a.deviceId),
    ...(parent
      ? {
          parent_block: {
            network: parent.network,
            netmask: netmaskOf(parent.addressFamily, parent.cidr),
            cidr: parent.cidr,
            href: href('ips', parent.id).href,
          },
        }
      : {}),
    ...(metro ? { metro: renderMetro(metro) } : {}),
    created_at: iso(a.createdAt),
  };
}

/** Gateway of a reservation: the network address for /31s, the first host otherwise. */
export function reservationGateway(r: ReservationRecord): string {
  if (r.addressFamily === 6 || r.cidr >= 31) return r.network;
  const [a, b, c, d] = r.network.split('.').map(Number) as [number, number, number, number];
  return `${a}.${b}.${c}.${d + 1}`;
}

/** IPReservation object; assignments are hrefs unless `include=assignments`. */
export function renderReservation(
  state: EmulatorState,
  r: ReservationRecord,
  expand = NO_EXPAND,
): Json {
  const metro = r.metro ? findMetro(state.catalog, r.metro) : undefined;
  const assignments = state.assignments.filter((a) => a.reservationId === r.id);
  return {
    id: r.id,
    href: href('ips', r.id).href,
    type: r.type,
    address_family: r.addressFamily,
    address: r.network,
    network: r.network,
    gateway: reservationGateway(r),
    netmask: netmaskOf(r.addressFamily, r.cidr),
    cidr: r.cidr,
    public: r.public,
    management: r.management,
    manageable: true,
    global_ip: r.global,
    addon: !r.management,
    bill: !r.management,
    enabled: true,
    state: r.state,
    ...(r.details !== undefined ? { details: r.details } : {}),
    tags: r.tags,
    customdata: r.customdata,
    ...(metro ? { metro: renderMetro(metro) } : {}),
    project: href('projects', r.projectId),
    project_lite: href('projects', r.projectId),
    requested_by: href('users', state.user.id),
    assignments: expand.include.has('assignments')
      ? assignments.map((a) => renderAssignment(state, a))
      : assignments.map((a) => href('ips', a.id)),
    created_at: iso(r.createdAt),
  };
}

/** BgpConfig object. */
export function renderBgpConfig(c: BgpConfigRecord): Json {
  return {
    id: c.id,
    href: href('bgp-configs', c.id).href,
    project: href('projects', c.projectId),
    deployment_type: c.deploymentType,
    asn: c.asn,
    md5: c.md5,
    max_prefix: 10,
    ranges: [],
    sessions: [],
    status: c.status,
    created_at: iso(c.createdAt),
    requested_at: iso(c.createdAt),
  };
}

/**
 * HardwareReservation object. Plan and facility (with its metro) are expanded unless excluded;
 * project and device are hrefs unless included. `device` is left out while no device sits on it
 * (the spec's Device is not nullable).
 */
export function renderHardwareReservation(
  state: EmulatorState,
  r: HardwareReservationRecord,
  now: number,
  expand = NO_EXPAND,
): Json {
  const cat = state.catalog;
  const plan = findPlan(cat, r.plan)!;
  const facility = cat.facilities.find((f) => f.code === r.facility) ?? facilityOf(cat, r.metro);
  const project = state.projects.find((p) => p.id === r.projectId)!;
  const device =
    r.deviceId !== undefined ? state.devices.find((d) => d.id === r.deviceId) : undefined;
  const pick = (name: string, full: () => Json, ref: { href: string }): Json =>
    expand.exclude.has(name) ? ref : full();
  return {
    id: r.id,
    short_id: shortId(r.id),
    href: href('hardware-reservations', r.id).href,
    plan: pick('plan', () => plan as unknown as Json, href('plans', plan.id)),
    facility: pick('facility', () => renderFacility(facility), href('facilities', facility.id)),
    project: expand.include.has('project')
      ? renderProject(state, project)
      : href('projects', project.id),
    ...(device
      ? {
          device: expand.include.has('device')
            ? renderDevice(state, device, now)
            : href('devices', device.id),
        }
      : {}),
    provisionable: isProvisionable(r),
    spare: r.spare,
    need_of_service: r.needOfService,
    switch_uuid: r.switchUuid,
    custom_rate: r.customRate,
    created_at: iso(r.createdAt),
  };
}
