/**
 * `MetalClient`: the `MetalApi` over HTTP. Each method is one API call (see the resource module
 * it delegates to); transport concerns (auth, retries, rate limit, errors) live in
 * `transport.ts`.
 */
import type { MetalApi } from './api.js';
import * as apiKeys from './api-keys.js';
import type { AuthToken, AuthTokenInput } from './api-keys.js';
import * as bgp from './bgp.js';
import * as devices from './devices.js';
import * as hardwareReservations from './hardware-reservations.js';
import * as ips from './ips.js';
import * as lookups from './lookups.js';
import * as projects from './projects.js';
import { updateIPTags } from './ip-update.js';
import { MetalTransport, type MetalClientOptions } from './transport.js';
import type {
  BgpConfig,
  BgpConfigRequestInput,
  CapacityCheck,
  CapacityCheckResult,
  Device,
  DeviceActionOptions,
  DeviceActionType,
  DeviceCreateInput,
  DeviceUpdateInput,
  HardwareReservation,
  IPAssignment,
  IPReservation,
  IPReservationRequestInput,
  IncludeOptions,
  ListDevicesOptions,
  ListHardwareReservationsOptions,
  Metro,
  MetroCapacity,
  OperatingSystem,
  Plan,
  Project,
} from './types.js';

export class MetalClient implements MetalApi {
  /** The shared transport (rate limit, retries); resource modules added later take it too. */
  readonly transport: MetalTransport;

  /** Throws a `LokoError` for an empty or unsendable token or a non-http(s) base URL. */
  constructor(opts: MetalClientOptions) {
    this.transport = new MetalTransport(opts);
  }

  /** Base URL requests go to (no trailing slash). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  // Projects

  /** `GET /projects/{id}` */
  getProject(projectId: string, opts?: IncludeOptions): Promise<Project> {
    return projects.getProject(this.transport, projectId, opts);
  }

  /** `GET /projects` (all pages) */
  listProjects(opts?: IncludeOptions): Promise<Project[]> {
    return projects.listProjects(this.transport, opts);
  }

  // Devices

  /** `GET /projects/{id}/devices?tag=…&per_page=100` (all pages) */
  listDevices(projectId: string, opts?: ListDevicesOptions): Promise<Device[]> {
    return devices.listDevices(this.transport, projectId, opts);
  }

  /** `GET /devices/{id}` */
  getDevice(deviceId: string, opts?: IncludeOptions): Promise<Device> {
    return devices.getDevice(this.transport, deviceId, opts);
  }

  /** `POST /projects/{id}/devices` → 201; never resent after a lost answer (reconcile by tag). */
  createDevice(projectId: string, input: DeviceCreateInput): Promise<Device> {
    return devices.createDevice(this.transport, projectId, input);
  }

  /** `PUT /devices/{id}` */
  updateDevice(deviceId: string, input: DeviceUpdateInput): Promise<Device> {
    return devices.updateDevice(this.transport, deviceId, input);
  }

  /** `DELETE /devices/{id}` → 204 `'deleted'`, 404 `'absent'` */
  deleteDevice(deviceId: string, opts?: { forceDelete?: boolean }): Promise<'deleted' | 'absent'> {
    return devices.deleteDevice(this.transport, deviceId, opts);
  }

  /** `POST /devices/{id}/actions` → 202 */
  deviceAction(
    deviceId: string,
    type: DeviceActionType,
    opts?: DeviceActionOptions,
  ): Promise<void> {
    return devices.deviceAction(this.transport, deviceId, type, opts);
  }

  /** `GET /devices/{id}/userdata` → the `userdata` string */
  getUserdata(deviceId: string): Promise<string> {
    return devices.getUserdata(this.transport, deviceId);
  }

  // IP addresses

  /** `GET /projects/{id}/ips?types=…` (all pages) */
  listIPReservations(
    projectId: string,
    opts?: { types?: string[] } & IncludeOptions,
  ): Promise<IPReservation[]> {
    return ips.listIPReservations(this.transport, projectId, opts);
  }

  /** `POST /projects/{id}/ips` → 201 */
  createIPReservation(projectId: string, input: IPReservationRequestInput): Promise<IPReservation> {
    return ips.createIPReservation(this.transport, projectId, input);
  }

  /** `GET /ips/{id}` → reservation or assignment */
  getIP(id: string): Promise<IPReservation | IPAssignment> {
    return ips.getIP(this.transport, id);
  }

  /** `DELETE /ips/{id}` → 204 `'deleted'`, 404 `'absent'` */
  deleteIP(id: string): Promise<'deleted' | 'absent'> {
    return ips.deleteIP(this.transport, id);
  }

  /** `GET /devices/{id}/ips` */
  listDeviceIPs(deviceId: string): Promise<IPAssignment[]> {
    return ips.listDeviceIPs(this.transport, deviceId);
  }

  /** `POST /devices/{id}/ips` `{address}` → 201 */
  assignIP(deviceId: string, address: string): Promise<IPAssignment> {
    return ips.assignIP(this.transport, deviceId, address);
  }

  /** `PATCH /ips/{id}` `{tags}` → 200 */
  updateIPTags(id: string, tags: string[]): Promise<IPReservation> {
    return updateIPTags(this.transport, id, tags);
  }

  // API keys

  /** `GET /projects/{id}/api-keys` (all pages) */
  listProjectApiKeys(projectId: string): Promise<AuthToken[]> {
    return apiKeys.listProjectApiKeys(this.transport, projectId);
  }

  /** `POST /projects/{id}/api-keys` → 201 */
  createProjectApiKey(projectId: string, input: AuthTokenInput): Promise<AuthToken> {
    return apiKeys.createProjectApiKey(this.transport, projectId, input);
  }

  /** `DELETE /api-keys/{id}` → 204; 404 resolves `'absent'` */
  deleteApiKey(id: string): Promise<'deleted' | 'absent'> {
    return apiKeys.deleteApiKey(this.transport, id);
  }

  // Hardware reservations

  /** `GET /projects/{id}/hardware-reservations[?provisionable=only]` (all pages) */
  listHardwareReservations(
    projectId: string,
    opts?: ListHardwareReservationsOptions,
  ): Promise<HardwareReservation[]> {
    return hardwareReservations.listHardwareReservations(this.transport, projectId, opts);
  }

  /** `GET /hardware-reservations/{id}` */
  getHardwareReservation(id: string, opts?: IncludeOptions): Promise<HardwareReservation> {
    return hardwareReservations.getHardwareReservation(this.transport, id, opts);
  }

  // Lookups

  /** `GET /locations/metros` */
  listMetros(): Promise<Metro[]> {
    return lookups.listMetros(this.transport);
  }

  /** `GET /plans` */
  listPlans(): Promise<Plan[]> {
    return lookups.listPlans(this.transport);
  }

  /** `GET /operating-systems` */
  listOperatingSystems(): Promise<OperatingSystem[]> {
    return lookups.listOperatingSystems(this.transport);
  }

  /** `GET /capacity/metros` */
  getMetroCapacity(): Promise<MetroCapacity> {
    return lookups.getMetroCapacity(this.transport);
  }

  /** `POST /capacity/metros` `{servers}` */
  checkMetroCapacity(servers: CapacityCheck[]): Promise<CapacityCheckResult[]> {
    return lookups.checkMetroCapacity(this.transport, servers);
  }

  // BGP

  /** `GET /projects/{id}/bgp-config` → `{}` when never enabled */
  getBgpConfig(projectId: string): Promise<BgpConfig> {
    return bgp.getBgpConfig(this.transport, projectId);
  }

  /** `POST /projects/{id}/bgp-configs` → 204 */
  requestBgpConfig(projectId: string, input: BgpConfigRequestInput): Promise<void> {
    return bgp.requestBgpConfig(this.transport, projectId, input);
  }
}

/** A `MetalClient` for `opts` (see `MetalClientOptions` for defaults). */
export function createMetalClient(opts: MetalClientOptions): MetalClient {
  return new MetalClient(opts);
}
