import type { AddressBlock } from './addressing.js';
import { seedCatalog, type Catalog } from './catalog.js';
import { seedHardwareReservations } from './hardware.js';
import { newId, newToken, stableId } from './ids.js';

/** Device states (DeviceState enum of the spec). */
export type DeviceState =
  | 'queued'
  | 'provisioning'
  | 'deprovisioning'
  | 'reinstalling'
  | 'active'
  | 'inactive'
  | 'failed'
  | 'powering_on'
  | 'powering_off'
  | 'deleted';

/** One step of a device's life: the device is in `state` from virtual time `at` on. */
export interface TimelineEntry {
  state: DeviceState;
  at: number;
}

/** One provisioning event of a device. */
export interface DeviceEventRecord {
  id: string;
  type: string;
  body: string;
  state: 'success' | 'failed';
  at: number;
}

/** A network port of a device (physical `NetworkPort` or `NetworkBondPort`). */
export interface PortRecord {
  id: string;
  name: string;
  type: 'NetworkPort' | 'NetworkBondPort';
  /** MAC address (physical ports only). */
  mac?: string;
  /** Name of the owning bond (physical ports only). */
  bond?: string;
  bonded: boolean;
  networkType?: 'layer3' | 'hybrid' | 'hybrid-bonded' | 'layer2-bonded' | 'layer2-individual';
}

/** A device as stored; rendered to the API's Device object by `render.ts`. */
export interface DeviceRecord {
  id: string;
  projectId: string;
  hostname: string;
  description?: string;
  plan: string;
  metro: string;
  facility: string;
  operatingSystem: string;
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
  createdAt: number;
  updatedAt: number;
  /** Ordered transitions; the state at time t is the last entry with `at <= t`. */
  timeline: TimelineEntry[];
  /** Why provisioning fails (set when a provision failure was injected). */
  failureReason?: string;
  /** Provisioning events (`provisioning_events`); each is visible once its time has come. */
  events: DeviceEventRecord[];
  ports: PortRecord[];
  rootPassword: string;
  switchUuid: string;
}

/** IP reservation types of the spec (VRF reservations are not emulated). */
export type ReservationType = 'public_ipv4' | 'private_ipv4' | 'global_ipv4' | 'public_ipv6';

/** An IP block of the project: management blocks and Elastic IP reservations. */
export interface ReservationRecord {
  id: string;
  projectId: string;
  type: ReservationType;
  addressFamily: 4 | 6;
  /** Network address (IPv4 dotted quad or IPv6 text). */
  network: string;
  cidr: number;
  management: boolean;
  public: boolean;
  global: boolean;
  /** Metro code; absent for global_ipv4. */
  metro?: string;
  state: 'pending' | 'created' | 'denied';
  details?: string;
  tags: string[];
  customdata: Record<string, unknown>;
  createdAt: number;
  /** Per-device public management /31s belong to (and die with) their device. */
  deviceId?: string;
  /** IPv6 /56: the metro slot used in the prefix. */
  v6Slot?: number;
}

/** An address (block) assigned to a device, carved from a reservation. */
export interface AssignmentRecord {
  id: string;
  reservationId: string;
  deviceId: string;
  addressFamily: 4 | 6;
  address: string;
  network: string;
  gateway: string;
  cidr: number;
  management: boolean;
  public: boolean;
  global: boolean;
  createdAt: number;
  customdata: Record<string, unknown>;
}

/** Project BGP configuration (one per project). */
export interface BgpConfigRecord {
  id: string;
  projectId: string;
  deploymentType: 'local' | 'global';
  asn: number;
  md5: string | null;
  status: 'requested' | 'enabled' | 'disabled';
  createdAt: number;
}

/** A project; `access: 'foreign'` projects exist but the token may not see them (403). */
export interface ProjectRecord {
  id: string;
  name: string;
  organizationId: string;
  createdAt: number;
  updatedAt: number;
  tags: string[];
  customdata: Record<string, unknown>;
  access: 'own' | 'foreign';
}

/** The organization owning the projects. */
export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: number;
}

/** The user behind the token (shown as `created_by`). */
export interface UserRecord {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: number;
}

/**
 * A hardware reservation: a server of `plan` in `metro` kept for the project. It is provisionable
 * while it is not a spare, needs no service and carries no device.
 */
export interface HardwareReservationRecord {
  id: string;
  projectId: string;
  /** Plan slug. */
  plan: string;
  /** Metro code. */
  metro: string;
  /** Facility code (the metro's facility). */
  facility: string;
  /** The device provisioned on it, until that device is gone. */
  deviceId?: string;
  spare: boolean;
  needOfService: boolean;
  /** Switch short id; devices on this reservation show it as their `switch_uuid`. */
  switchUuid: string;
  /** Amount charged per billing cycle. */
  customRate: number;
  createdAt: number;
}

/**
 * A project API key (`POST /projects/{id}/api-keys`): its token authenticates API requests for
 * that project only (routes/api-keys.ts).
 */
export interface ApiKeyRecord {
  id: string;
  projectId: string;
  /** The secret sent as `X-Auth-Token`. */
  token: string;
  description: string;
  readOnly: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A pending "make this hostname's provisioning fail" request (control API). */
export interface ProvisionFailureRule {
  hostname: string;
  reason: string;
}

/** Everything the emulator persists. Times are virtual epoch milliseconds. */
export interface EmulatorState {
  version: 1;
  token: string;
  addressing: AddressBlock;
  catalog: Catalog;
  organization: OrganizationRecord;
  user: UserRecord;
  projects: ProjectRecord[];
  devices: DeviceRecord[];
  reservations: ReservationRecord[];
  assignments: AssignmentRecord[];
  bgpConfigs: BgpConfigRecord[];
  hardwareReservations: HardwareReservationRecord[];
  provisionFailures: ProvisionFailureRule[];
  /** Project API keys (absent in state files written before they were emulated). */
  apiKeys?: ApiKeyRecord[];
}

/**
 * Id of the second, "foreign" project: it exists, but the emulator's token has no access to it,
 * so requests for it answer 403. The same in every instance.
 */
export const FOREIGN_PROJECT_ID = stableId('project:foreign');

/** A fresh state: catalog, organization, the user's project, a foreign project, a token. */
export function createInitialState(opts: {
  now: number;
  addressing: AddressBlock;
  projectId?: string;
  token?: string;
}): EmulatorState {
  const orgId = newId();
  const projectId = opts.projectId ?? newId();
  const catalog = seedCatalog();
  return {
    version: 1,
    token: opts.token ?? newToken(),
    addressing: opts.addressing,
    catalog,
    organization: { id: orgId, name: 'loko emulator', createdAt: opts.now },
    user: {
      id: newId(),
      email: 'operator@emulator.invalid',
      firstName: 'Emulator',
      lastName: 'Operator',
      createdAt: opts.now,
    },
    projects: [
      {
        id: projectId,
        name: 'loko',
        organizationId: orgId,
        createdAt: opts.now,
        updatedAt: opts.now,
        tags: [],
        customdata: {},
        access: 'own',
      },
      {
        id: FOREIGN_PROJECT_ID,
        name: 'someone else',
        organizationId: newId(),
        createdAt: opts.now,
        updatedAt: opts.now,
        tags: [],
        customdata: {},
        access: 'foreign',
      },
    ],
    devices: [],
    reservations: [],
    assignments: [],
    bgpConfigs: [],
    hardwareReservations: seedHardwareReservations(catalog, projectId, opts.now),
    provisionFailures: [],
  };
}

/** The project the token owns. */
export function ownProject(state: EmulatorState): ProjectRecord {
  return state.projects.find((p) => p.access === 'own')!;
}

/**
 * Fills in what state files of earlier versions lack: those predate hardware reservations, so
 * the own project gets the seeded ones.
 */
export function upgradeState(state: EmulatorState, now: number): void {
  const s = state as Omit<EmulatorState, 'hardwareReservations'> & {
    hardwareReservations?: HardwareReservationRecord[];
  };
  s.hardwareReservations ??= seedHardwareReservations(state.catalog, ownProject(state).id, now);
}
