/**
 * IP address management against the state: management addresses of devices (public /31,
 * private /31 from a per-metro /25, IPv6 /127 from a per-metro /56) and Elastic IP blocks.
 * All IPv4 comes from the instance's loopback block (see addressing.ts).
 */
import {
  firstFreeAligned,
  intToIpv4,
  ipv4ToInt,
  rangesOf,
  v4Size,
  v6MetroNetwork,
  v6Pair,
  type V4Range,
} from './addressing.js';
import { unprocessable } from './errors.js';
import { newId } from './ids.js';
import type {
  AssignmentRecord,
  DeviceRecord,
  EmulatorState,
  ReservationRecord,
  ReservationType,
} from './state.js';

/** Which management addresses a device asked for (`ip_addresses` of the create request). */
export interface AddressRequest {
  /** Prefix length of the public IPv4 block, or null for none. */
  publicV4: number | null;
  publicV6: boolean;
}

/** The IPv4 range a reservation covers. */
export function v4RangeOf(r: { network: string; cidr: number }): V4Range {
  return { start: ipv4ToInt(r.network), size: v4Size(r.cidr) };
}

/** 1-based slot of a metro, used in its IPv6 /56 prefix. */
export function metroSlot(state: EmulatorState, metroCode: string): number {
  return state.catalog.metros.findIndex((m) => m.code === metroCode) + 1;
}

function newReservation(
  state: EmulatorState,
  fields: Omit<ReservationRecord, 'id' | 'state' | 'tags' | 'customdata'> &
    Partial<Pick<ReservationRecord, 'state' | 'tags' | 'customdata'>>,
): ReservationRecord {
  const r: ReservationRecord = {
    id: newId(),
    state: 'created',
    tags: [],
    customdata: {},
    ...fields,
  };
  state.reservations.push(r);
  return r;
}

function newAssignment(
  state: EmulatorState,
  fields: Omit<AssignmentRecord, 'id' | 'customdata'> & { customdata?: Record<string, unknown> },
): AssignmentRecord {
  const a: AssignmentRecord = { id: newId(), customdata: {}, ...fields };
  state.assignments.push(a);
  return a;
}

const exhausted = (what: string) =>
  unprocessable(`No ${what} addresses are available in this emulator instance`);

/** Assigns the management addresses of a new device (called at create time). */
export function assignManagementAddresses(
  state: EmulatorState,
  device: DeviceRecord,
  req: AddressRequest,
  now: number,
): void {
  const ranges = rangesOf(state.addressing);
  const base = { deviceId: device.id, createdAt: now, management: true, global: false };

  if (req.publicV4 !== null) {
    const cidr = req.publicV4;
    const size = v4Size(cidr);
    const used = state.reservations
      .filter((r) => r.management && r.type === 'public_ipv4')
      .map(v4RangeOf);
    const start = firstFreeAligned(ranges.publicManagement, size, used);
    if (start === undefined) throw exhausted('public IPv4 management');
    const r = newReservation(state, {
      projectId: device.projectId,
      type: 'public_ipv4',
      addressFamily: 4,
      network: intToIpv4(start),
      cidr,
      management: true,
      public: true,
      global: false,
      metro: device.metro,
      createdAt: now,
      deviceId: device.id,
    });
    // /31: gateway = network, address = network + 1; larger blocks: gateway = first host.
    const gateway = cidr >= 31 ? start : start + 1;
    newAssignment(state, {
      ...base,
      reservationId: r.id,
      addressFamily: 4,
      address: intToIpv4(gateway + 1),
      network: intToIpv4(start),
      gateway: intToIpv4(gateway),
      cidr,
      public: true,
    });
  }

  const priv = allocatePrivatePair(state, device, now);
  newAssignment(state, {
    ...base,
    reservationId: priv.reservation.id,
    addressFamily: 4,
    address: intToIpv4(priv.start + 1),
    network: intToIpv4(priv.start),
    gateway: intToIpv4(priv.start),
    cidr: 31,
    public: false,
  });

  if (req.publicV6) {
    const block = metroV6Block(state, device, now);
    const used = new Set(
      state.assignments.filter((a) => a.reservationId === block.id).map((a) => a.address),
    );
    let n = 1;
    while (used.has(v6Pair(state.addressing, block.v6Slot!, n).address)) n++;
    const pair = v6Pair(state.addressing, block.v6Slot!, n);
    newAssignment(state, {
      ...base,
      reservationId: block.id,
      addressFamily: 6,
      address: pair.address,
      network: pair.network,
      gateway: pair.gateway,
      cidr: 127,
      public: true,
    });
  }
}

// A free /31 in one of the project's /25s in the device's metro; adds a /25 when all are full.
function allocatePrivatePair(
  state: EmulatorState,
  device: DeviceRecord,
  now: number,
): { reservation: ReservationRecord; start: number } {
  const blocks = state.reservations.filter(
    (r) =>
      r.management &&
      r.type === 'private_ipv4' &&
      r.projectId === device.projectId &&
      r.metro === device.metro,
  );
  for (const r of blocks) {
    const used = state.assignments.filter((a) => a.reservationId === r.id).map(v4RangeOf);
    const start = firstFreeAligned(v4RangeOf(r), 2, used);
    if (start !== undefined) return { reservation: r, start };
  }
  const allPrivate = state.reservations
    .filter((r) => r.management && r.type === 'private_ipv4')
    .map(v4RangeOf);
  const start = firstFreeAligned(rangesOf(state.addressing).privateManagement, 128, allPrivate);
  if (start === undefined) throw exhausted('private IPv4 management');
  const reservation = newReservation(state, {
    projectId: device.projectId,
    type: 'private_ipv4',
    addressFamily: 4,
    network: intToIpv4(start),
    cidr: 25,
    management: true,
    public: false,
    global: false,
    metro: device.metro,
    createdAt: now,
  });
  return { reservation, start };
}

function metroV6Block(state: EmulatorState, device: DeviceRecord, now: number): ReservationRecord {
  const existing = state.reservations.find(
    (r) =>
      r.management &&
      r.type === 'public_ipv6' &&
      r.projectId === device.projectId &&
      r.metro === device.metro,
  );
  if (existing) return existing;
  const slot = metroSlot(state, device.metro);
  return newReservation(state, {
    projectId: device.projectId,
    type: 'public_ipv6',
    addressFamily: 6,
    network: v6MetroNetwork(state.addressing, slot),
    cidr: 56,
    management: true,
    public: true,
    global: false,
    metro: device.metro,
    createdAt: now,
    v6Slot: slot,
  });
}

/** Removes a device's assignments and its own public management block (delete finished). */
export function releaseDeviceAddresses(state: EmulatorState, deviceId: string): void {
  state.assignments = state.assignments.filter((a) => a.deviceId !== deviceId);
  state.reservations = state.reservations.filter((r) => r.deviceId !== deviceId);
}

/** Reserves an Elastic IP block of `quantity` addresses (a power of two). */
export function reserveElastic(
  state: EmulatorState,
  fields: {
    projectId: string;
    type: Extract<ReservationType, 'public_ipv4' | 'global_ipv4'>;
    quantity: number;
    metro?: string;
    details?: string;
    tags: string[];
    customdata: Record<string, unknown>;
    state: ReservationRecord['state'];
  },
  now: number,
): ReservationRecord {
  const used = state.reservations
    .filter((r) => !r.management && r.addressFamily === 4)
    .map(v4RangeOf);
  const start = firstFreeAligned(rangesOf(state.addressing).elastic, fields.quantity, used);
  if (start === undefined) throw exhausted('Elastic IP');
  return newReservation(state, {
    projectId: fields.projectId,
    type: fields.type,
    addressFamily: 4,
    network: intToIpv4(start),
    cidr: 32 - Math.log2(fields.quantity),
    management: false,
    public: true,
    global: fields.type === 'global_ipv4',
    ...(fields.metro !== undefined ? { metro: fields.metro } : {}),
    ...(fields.details !== undefined ? { details: fields.details } : {}),
    state: fields.state,
    tags: fields.tags,
    customdata: fields.customdata,
    createdAt: now,
  });
}

/** Assigns `network/cidr` (inside `reservation`) to a device. */
export function assignElastic(
  state: EmulatorState,
  reservation: ReservationRecord,
  device: DeviceRecord,
  block: V4Range,
  cidr: number,
  now: number,
  customdata: Record<string, unknown>,
): AssignmentRecord {
  const gateway = reservationGatewayInt(reservation);
  return newAssignment(state, {
    reservationId: reservation.id,
    deviceId: device.id,
    addressFamily: 4,
    address: intToIpv4(block.start),
    network: intToIpv4(block.start),
    gateway: intToIpv4(gateway),
    cidr,
    management: false,
    public: true,
    global: reservation.global,
    createdAt: now,
    customdata,
  });
}

function reservationGatewayInt(r: ReservationRecord): number {
  const start = ipv4ToInt(r.network);
  return r.cidr >= 31 ? start : start + 1;
}
