/**
 * Wire types of the Equinix Metal API v1, as loko uses them. Field names are the API's
 * (snake_case); see ../shared/metal-openapi (components/schemas) and reference/metal-api.md.
 * Only the fields loko reads or writes are typed; responses may carry more.
 */

/** `{href}` reference to a resource that was not expanded (`include`). */
export interface Href {
  href: string;
}

/** Pagination envelope (`meta`), API doc "Pagination". */
export interface Meta {
  first?: Href;
  previous?: Href | null;
  self?: Href;
  next?: Href | null;
  last?: Href;
  total?: number;
  current_page?: number;
  last_page?: number;
}

export interface Metro {
  id: string;
  code: string;
  name: string;
  country: string;
}

export interface Plan {
  id: string;
  slug: string;
  name?: string;
  class?: string;
  line?: string;
  type?: string;
  categories?: string[];
  deployment_types?: string[];
  available_in_metros?: Array<{ href: string; price?: { hour?: number } }>;
  specs?: {
    nics?: Array<{ count?: number; type?: string }>;
    [k: string]: unknown;
  };
}

export interface OperatingSystem {
  id: string;
  slug: string;
  name: string;
  distro: string;
  version: string;
  provisionable_on: string[];
}

export interface Project {
  id: string;
  name: string;
  href?: string;
  created_at?: string;
  updated_at?: string;
  tags?: string[];
}

/** Device states, DeviceState enum in the spec (plus tolerated unknown strings). */
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

/** IPAssignment as embedded in devices (`ip_addresses`). */
export interface IPAssignment {
  id: string;
  href?: string;
  address: string;
  address_family: 4 | 6;
  network: string;
  netmask?: string;
  gateway?: string;
  cidr: number;
  public: boolean;
  management: boolean;
  manageable?: boolean;
  global_ip?: boolean;
  enabled?: boolean;
  assigned_to?: Href;
  parent_block?: { network: string; netmask: string; cidr: number; href: string };
  created_at?: string;
}

export interface Port {
  id: string;
  href?: string;
  name: string;
  type: 'NetworkPort' | 'NetworkBondPort';
  network_type?: 'layer3' | 'hybrid' | 'hybrid-bonded' | 'layer2-bonded' | 'layer2-individual';
  data?: { mac?: string | null; bonded?: boolean };
  bond?: { id: string; name: string } | null;
  native_virtual_network?: unknown;
  virtual_networks?: unknown[];
  disbond_operation_supported?: boolean;
}

export interface Device {
  id: string;
  short_id?: string;
  href?: string;
  hostname: string;
  description?: string;
  state: DeviceState | string;
  tags: string[];
  billing_cycle?: string;
  plan: { id?: string; slug: string; [k: string]: unknown };
  metro?: Metro;
  facility?: { id?: string; code?: string; [k: string]: unknown };
  operating_system: { slug: string; [k: string]: unknown };
  project?: Href | Project;
  ip_addresses: IPAssignment[];
  network_ports?: Port[];
  hardware_reservation?: Href | HardwareReservation | null;
  provisioning_percentage?: number;
  locked?: boolean;
  created_at?: string;
  updated_at?: string;
  userdata?: string;
  customdata?: Record<string, unknown>;
}

/**
 * HardwareReservation (GET /projects/{id}/hardware-reservations, GET /hardware-reservations/{id}).
 * A device created with `hardware_reservation_id` lands on it; `provisionable` is false while a
 * device sits on it (`device` set) and for spares. The metro is `facility.metro`.
 */
export interface HardwareReservation {
  id: string;
  short_id?: string;
  href?: string;
  plan: { id?: string; slug: string; [k: string]: unknown };
  facility?: { id?: string; code?: string; metro?: Metro; [k: string]: unknown };
  project?: Href | Project;
  /** The device on it: `{href}`, or the Device with `include=device`; absent or null when none. */
  device?: Href | Device | null;
  provisionable: boolean;
  spare: boolean;
  need_of_service: boolean;
  switch_uuid?: string;
  custom_rate?: number;
  termination_time?: string;
  created_at?: string;
}

/** Options of GET /projects/{id}/hardware-reservations. */
export interface ListHardwareReservationsOptions extends IncludeOptions {
  /** Only reservations a device can be provisioned on now (`provisionable=only`). */
  provisionableOnly?: boolean;
}

/** DeviceCreateInMetroInput (POST /projects/{id}/devices). */
export interface DeviceCreateInput {
  metro: string;
  plan: string;
  operating_system: string;
  hostname: string;
  description?: string;
  billing_cycle?: string;
  userdata?: string;
  customdata?: Record<string, unknown>;
  tags?: string[];
  /** A hardware reservation UUID, or `"next-available"` (any provisionable one of plan and metro). */
  hardware_reservation_id?: string;
  ip_addresses?: Array<{
    address_family: 4 | 6;
    public: boolean;
    cidr?: number;
    ip_reservations?: string[];
  }>;
  ssh_keys?: Array<{ key?: string; label?: string }>;
  no_ssh_keys?: boolean;
  locked?: boolean;
}

/** DeviceUpdateInput (PUT /devices/{id}); all optional. */
export interface DeviceUpdateInput {
  hostname?: string;
  description?: string;
  tags?: string[];
  locked?: boolean;
  billing_cycle?: string;
  customdata?: Record<string, unknown>;
}

/** DeviceActionInput.type values. */
export type DeviceActionType = 'power_on' | 'power_off' | 'reboot' | 'rescue' | 'reinstall';

/** IPReservation (GET/POST /projects/{id}/ips). */
export interface IPReservation {
  id: string;
  href?: string;
  type: 'public_ipv4' | 'private_ipv4' | 'global_ipv4' | 'public_ipv6' | string;
  address_family: 4 | 6;
  address?: string;
  network: string;
  netmask?: string;
  gateway?: string;
  cidr: number;
  public: boolean;
  management: boolean;
  global_ip?: boolean;
  state?: 'pending' | 'created' | 'denied';
  details?: string;
  tags: string[];
  metro?: Metro | Href;
  assignments?: IPAssignment[] | Href[];
  created_at?: string;
}

/** IPReservationRequestInput (POST /projects/{id}/ips). */
export interface IPReservationRequestInput {
  type: 'public_ipv4' | 'global_ipv4' | 'private_ipv4';
  quantity: number;
  metro?: string;
  tags?: string[];
  details?: string;
  customdata?: Record<string, unknown>;
  fail_on_approval_required?: boolean;
}

/** BgpConfig (GET /projects/{id}/bgp-config); `{}` when never enabled. */
export interface BgpConfig {
  id?: string;
  deployment_type?: 'local' | 'global';
  asn?: number;
  md5?: string | null;
  max_prefix?: number;
  status?: 'requested' | 'enabled' | 'disabled';
  sessions?: unknown[];
}

/** BgpConfigRequestInput (POST /projects/{id}/bgp-configs). */
export interface BgpConfigRequestInput {
  deployment_type: 'local' | 'global';
  asn: number;
  md5?: string;
  use_case?: string;
}

/** `GET /capacity/metros` -> capacity[metro][plan].level. */
export type CapacityLevel = 'normal' | 'limited' | 'unavailable';
export type MetroCapacity = Record<string, Record<string, { level: CapacityLevel | string }>>;

/** One entry of POST /capacity/metros. */
export interface CapacityCheck {
  metro: string;
  plan: string;
  quantity: number;
}

/** `include` / `exclude` query parameters (comma-joined on the wire). */
export interface IncludeOptions {
  include?: string[];
  exclude?: string[];
}

/** Filters of GET /projects/{id}/devices that loko uses. */
export interface ListDevicesOptions extends IncludeOptions {
  tag?: string;
  /** Partial match, per the API. */
  hostname?: string;
}

/** DeviceActionInput (POST /devices/{id}/actions) besides `type`. */
export interface DeviceActionOptions {
  force_delete?: boolean;
  /** `reinstall` only. */
  deprovision_fast?: boolean;
  preserve_data?: boolean;
  operating_system?: string;
  ipxe_script_url?: string;
}

/** One entry of the POST /capacity/metros answer. */
export type CapacityCheckResult = CapacityCheck & { available: boolean };
