import type {
  BgpConfig,
  BgpConfigRequestInput,
  CapacityCheck,
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
import type { AuthToken, AuthTokenInput } from './api-keys.js';

/**
 * The Metal API operations loko uses, one method per API call (paths in the doc comment of each
 * implementation). Platform code depends on this interface so unit tests can put an in-memory
 * fake behind it; everything else talks HTTP through `MetalClient`.
 *
 * Every method rejects with `MetalApiError` for API errors (status, API messages, method, path)
 * and `MetalTransportError` when no HTTP answer could be obtained.
 */
export interface MetalApi {
  getProject(projectId: string): Promise<Project>;
  listProjects(): Promise<Project[]>;

  /** All devices of the project carrying `tag` (follows pagination). */
  listDevices(projectId: string, opts?: ListDevicesOptions): Promise<Device[]>;
  getDevice(deviceId: string, opts?: IncludeOptions): Promise<Device>;
  createDevice(projectId: string, input: DeviceCreateInput): Promise<Device>;
  updateDevice(deviceId: string, input: DeviceUpdateInput): Promise<Device>;
  /** Resolves `'deleted'`, or `'absent'` when the API answered 404. */
  deleteDevice(deviceId: string, opts?: { forceDelete?: boolean }): Promise<'deleted' | 'absent'>;
  deviceAction(deviceId: string, type: DeviceActionType, opts?: DeviceActionOptions): Promise<void>;
  getUserdata(deviceId: string): Promise<string>;

  listIPReservations(
    projectId: string,
    opts?: { types?: string[] } & IncludeOptions,
  ): Promise<IPReservation[]>;
  createIPReservation(projectId: string, input: IPReservationRequestInput): Promise<IPReservation>;
  deleteIP(id: string): Promise<'deleted' | 'absent'>;
  listDeviceIPs(deviceId: string): Promise<IPAssignment[]>;
  assignIP(deviceId: string, address: string): Promise<IPAssignment>;

  /** All hardware reservations of the project (follows pagination). */
  listHardwareReservations(
    projectId: string,
    opts?: ListHardwareReservationsOptions,
  ): Promise<HardwareReservation[]>;
  getHardwareReservation(id: string, opts?: IncludeOptions): Promise<HardwareReservation>;

  listMetros(): Promise<Metro[]>;
  listPlans(): Promise<Plan[]>;
  listOperatingSystems(): Promise<OperatingSystem[]>;
  getMetroCapacity(): Promise<MetroCapacity>;
  checkMetroCapacity(
    servers: CapacityCheck[],
  ): Promise<Array<CapacityCheck & { available: boolean }>>;

  getBgpConfig(projectId: string): Promise<BgpConfig>;
  requestBgpConfig(projectId: string, input: BgpConfigRequestInput): Promise<void>;

  /** Replaces the tags of an IP reservation (`PATCH /ips/{id}`). */
  updateIPTags(id: string, tags: string[]): Promise<IPReservation>;

  /** All API keys of the project (follows pagination). */
  listProjectApiKeys(projectId: string): Promise<AuthToken[]>;
  createProjectApiKey(projectId: string, input: AuthTokenInput): Promise<AuthToken>;
  /** Resolves `'deleted'`, or `'absent'` when the API answered 404. */
  deleteApiKey(id: string): Promise<'deleted' | 'absent'>;
}
