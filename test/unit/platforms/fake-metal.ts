/**
 * FakeMetal: an in-memory MetalApi for unit tests of the platform core. Behaviour (a small subset
 * of the real API, see reference/metal-api.md §3.4):
 * - devices advance on the fake clock: queued (1 s) -> provisioning (until `provisionMs`) -> active,
 *   or `failed` when their hostname is in `failHostnames` (with a provisioning event naming the reason);
 * - DELETE while queued/provisioning, or of a device seeded with `locked: true`, answers 422; otherwise the device is `deprovisioning` for
 *   `deprovisionMs` and then gone (404);
 * - list filters by exact tag and partial hostname; every call is counted in `calls`;
 * - a create on a hardware reservation that a listed device (in any state, deprovisioning too)
 *   still holds answers 422.
 * - IP reservations (`reservations`) and Elastic IP assignments (`assignments`): a /32 from
 *   127.1.0.0/16 per reservation; an assigned address shows in the device's `ip_addresses`
 *   (management false); assignments of a device that is gone disappear; deleting a reservation
 *   with assignments answers 422; assigning an assigned address answers 422.
 * Errors are shaped like MetalApiError (`name`, `status`).
 */
import type { MetalApi } from '../../../src/metal/api.js';
import type { AuthToken, AuthTokenInput } from '../../../src/metal/api-keys.js';
import type {
  CapacityCheck,
  Device,
  DeviceCreateInput,
  DeviceUpdateInput,
  HardwareReservation,
  Href,
  IPAssignment,
  IPReservation,
  IPReservationRequestInput,
  Metro,
  OperatingSystem,
  Plan,
} from '../../../src/metal/types.js';
import type { Clock } from '../../../src/platforms/equinixmetal/poll.js';

export class FakeApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'MetalApiError';
  }
}

interface FakeDevice {
  device: Device;
  createdAt: number;
  deletedAt?: number;
  failReason?: string;
}

export const METROS: Metro[] = [
  { id: 'm-sv', code: 'sv', name: 'Silicon Valley', country: 'US' },
  { id: 'm-da', code: 'da', name: 'Dallas', country: 'US' },
];
export const PLANS: Plan[] = [
  {
    id: 'p1',
    slug: 'c3.small.x86',
    class: 'c3.small.x86',
    available_in_metros: [
      { href: '/metal/v1/locations/metros/m-sv' },
      { href: '/metal/v1/locations/metros/m-da' },
    ],
  },
  {
    id: 'p2',
    slug: 'm3.large.x86',
    class: 'm3.large.x86',
    available_in_metros: [{ href: '/metal/v1/locations/metros/m-sv' }],
  },
  {
    id: 'p3',
    slug: 'n3.xlarge.x86',
    class: 'n3.xlarge.x86',
    available_in_metros: [{ href: '/metal/v1/locations/metros/m-da' }],
  },
];
export const OSES: OperatingSystem[] = [
  {
    id: 'o1',
    slug: 'ubuntu_22_04',
    name: 'Ubuntu 22.04',
    distro: 'ubuntu',
    version: '22.04',
    provisionable_on: ['c3.small.x86', 'm3.large.x86', 'n3.xlarge.x86'],
  },
  {
    id: 'o2',
    slug: 'ubuntu_24_04',
    name: 'Ubuntu 24.04',
    distro: 'ubuntu',
    version: '24.04',
    provisionable_on: ['c3.small.x86', 'm3.large.x86'],
  },
  {
    id: 'o3',
    slug: 'windows_2022',
    name: 'Windows',
    distro: 'windows',
    version: '2022',
    provisionable_on: ['m3.large.x86'],
  },
];

export class FakeMetal implements MetalApi {
  now = 0;
  provisionMs = 5_000;
  deprovisionMs = 2_000;
  readonly devicesById = new Map<string, FakeDevice>();
  readonly reservations: IPReservation[] = [];
  /** Hardware reservations of the project; one a live device sits on is listed as held by it. */
  readonly hardwareReservations: HardwareReservation[] = [];
  /** Elastic IP assignments: reservation, device and address. */
  readonly assignments: Array<{
    id: string;
    reservationId: string;
    deviceId: string;
    address: string;
  }> = [];
  /** Called before a reservation is stored; throw to inject failures (`after`: once stored). */
  reserveFault?: (
    input: IPReservationRequestInput,
  ) => { before?: Error; after?: Error } | undefined;
  readonly calls: string[] = [];
  readonly failHostnames = new Map<string, string>();
  /** hostname -> a state it takes instead of `active` once provisioned (e.g. `inactive`). */
  readonly stoppedHostnames = new Map<string, string>();
  /** metro/plan -> max quantity available (default unlimited). */
  readonly capacity = new Map<string, number>();
  /** Called before a create is stored; throw to inject failures. `after` runs after it is stored. */
  createFault?: (input: DeviceCreateInput) => { before?: Error; after?: Error } | undefined;
  private seq = 0;
  private ipSeq = 0;

  /** The clock shared with the code under test: sleeping advances fake time. */
  readonly clock: Clock = {
    now: () => this.now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) {
        const { InterruptedError } = await import('../../../src/util/errors.js');
        throw new InterruptedError();
      }
      this.now += ms;
    },
  };

  /** Adds a device directly (as if created earlier), optionally in a given state. */
  seed(
    partial: Partial<Device> & { hostname: string; tags: string[] },
    state: 'active' | 'failed' | 'provisioning' = 'active',
  ): Device {
    const id = `dev-${++this.seq}`;
    const device: Device = {
      id,
      state,
      plan: { slug: 'c3.small.x86' },
      operating_system: { slug: 'ubuntu_22_04' },
      metro: METROS[0]!,
      ip_addresses: [],
      created_at: new Date(this.seq * 1000).toISOString(),
      ...partial,
    };
    const createdAt = state === 'provisioning' ? this.now : this.now - this.provisionMs - 1;
    this.devicesById.set(id, {
      device,
      createdAt,
      failReason: state === 'failed' ? 'seeded failure' : undefined,
    });
    return device;
  }

  private view(f: FakeDevice): Device | undefined {
    const age = this.now - f.createdAt;
    let state: string;
    if (f.deletedAt !== undefined) {
      if (this.now - f.deletedAt >= this.deprovisionMs) return undefined;
      state = 'deprovisioning';
    } else if (f.device.state === 'failed' && f.failReason === 'seeded failure') {
      state = 'failed';
    } else if (age < 1_000) state = 'queued';
    else if (age < this.provisionMs) state = 'provisioning';
    else
      state = f.failReason ? 'failed' : (this.stoppedHostnames.get(f.device.hostname) ?? 'active');
    const ip =
      state === 'active'
        ? [
            {
              id: `ip-${f.device.id}`,
              address: `127.0.0.${this.indexOf(f) + 10}`,
              address_family: 4 as const,
              network: '',
              cidr: 31,
              public: true,
              management: true,
            },
            ...this.assignments
              .filter((a) => a.deviceId === f.device.id)
              .map((a) => this.assignmentView(a)),
          ]
        : [];
    return {
      ...f.device,
      state,
      ip_addresses: ip,
      ...(state === 'provisioning'
        ? { provisioning_percentage: Math.round((age / this.provisionMs) * 100) }
        : {}),
      ...(state === 'failed' && f.failReason
        ? { provisioning_events: [{ type: 'provisioning.failed', body: f.failReason }] }
        : {}),
    } as Device;
  }

  private indexOf(f: FakeDevice): number {
    return [...this.devicesById.values()].indexOf(f);
  }

  private gc(): void {
    for (const [id, f] of this.devicesById) if (!this.view(f)) this.devicesById.delete(id);
    for (let i = this.assignments.length - 1; i >= 0; i--)
      if (!this.devicesById.has(this.assignments[i]!.deviceId)) this.assignments.splice(i, 1);
  }

  private assignmentView(a: FakeMetal['assignments'][number]): IPAssignment {
    return {
      id: a.id,
      address: a.address,
      address_family: 4,
      network: a.address,
      cidr: 32,
      public: true,
      management: false,
      assigned_to: { href: `/metal/v1/devices/${a.deviceId}` },
    };
  }

  /** Devices currently listed (any state). */
  live(): Device[] {
    this.gc();
    return [...this.devicesById.values()].map((f) => this.view(f)!).filter(Boolean);
  }

  async listDevices(
    _projectId: string,
    opts?: { tag?: string; hostname?: string },
  ): Promise<Device[]> {
    this.calls.push('listDevices');
    return this.live().filter(
      (d) =>
        (!opts?.tag || d.tags.includes(opts.tag)) &&
        (!opts?.hostname || d.hostname.includes(opts.hostname)),
    );
  }
  async getDevice(id: string): Promise<Device> {
    this.calls.push('getDevice');
    const f = this.devicesById.get(id);
    const v = f && this.view(f);
    if (!v) throw new FakeApiError(404, 'Not found');
    return v;
  }
  async createDevice(_projectId: string, input: DeviceCreateInput): Promise<Device> {
    this.calls.push('createDevice');
    const fault = this.createFault?.(input);
    if (fault?.before) throw fault.before;
    // A hardware reservation stays provisionable=false while any device (even deprovisioning) holds it.
    const reservation = input.hardware_reservation_id;
    if (
      reservation &&
      reservation !== 'next-available' &&
      this.live().some(
        (d) => (d.hardware_reservation as { id?: string } | null)?.id === reservation,
      )
    ) {
      throw new FakeApiError(422, `hardware reservation ${reservation} is not provisionable`);
    }
    const id = `dev-${++this.seq}`;
    const f: FakeDevice = {
      device: {
        id,
        hostname: input.hostname,
        state: 'queued',
        tags: [...(input.tags ?? [])],
        plan: { slug: input.plan },
        operating_system: { slug: input.operating_system },
        metro: METROS.find((m) => m.code === input.metro),
        ip_addresses: [],
        userdata: input.userdata,
        created_at: new Date(this.now + this.seq).toISOString(),
        ...(reservation && reservation !== 'next-available'
          ? {
              hardware_reservation: {
                href: `/metal/v1/hardware-reservations/${reservation}`,
                id: reservation,
              } as Href,
            }
          : {}),
      },
      createdAt: this.now,
      failReason: this.failHostnames.get(input.hostname),
    };
    this.devicesById.set(id, f);
    if (fault?.after) throw fault.after;
    return this.view(f)!;
  }
  async updateDevice(id: string, input: DeviceUpdateInput): Promise<Device> {
    this.calls.push('updateDevice');
    const f = this.devicesById.get(id);
    if (!f) throw new FakeApiError(404, 'Not found');
    if (input.tags) f.device.tags = [...input.tags];
    return this.view(f)!;
  }
  async deleteDevice(id: string): Promise<'deleted' | 'absent'> {
    this.calls.push('deleteDevice');
    this.gc();
    const f = this.devicesById.get(id);
    if (!f) return 'absent';
    const v = this.view(f)!;
    if (v.state === 'queued' || v.state === 'provisioning') {
      throw new FakeApiError(422, 'Cannot delete a device while it is provisioning');
    }
    if (f.device.locked) throw new FakeApiError(422, 'Cannot delete a locked device');
    f.deletedAt ??= this.now;
    return 'deleted';
  }
  async deviceAction(): Promise<void> {
    throw new Error('not in fake');
  }
  async getUserdata(): Promise<string> {
    throw new Error('not in fake');
  }
  async listIPReservations(
    _projectId: string,
    opts: { types?: string[]; include?: string[] } = {},
  ): Promise<IPReservation[]> {
    this.calls.push('listIPReservations');
    this.gc();
    const embed = opts.include?.includes('assignments') ?? false;
    return this.reservations
      .filter((r) => !opts.types?.length || opts.types.includes(r.type))
      .map((r) => {
        const mine = this.assignments.filter((a) => a.reservationId === r.id);
        return {
          ...r,
          assignments: embed
            ? mine.map((a) => this.assignmentView(a))
            : mine.map((a) => ({ href: `/metal/v1/ips/${a.id}` })),
        };
      });
  }
  async createIPReservation(
    _projectId: string,
    input: IPReservationRequestInput,
  ): Promise<IPReservation> {
    this.calls.push('createIPReservation');
    const fault = this.reserveFault?.(input);
    if (fault?.before) throw fault.before;
    const n = ++this.ipSeq;
    const address = `127.1.${Math.floor(n / 256)}.${n % 256}`;
    const r: IPReservation = {
      id: `ipr-${n}`,
      type: input.type,
      address_family: 4,
      address,
      network: address,
      cidr: 32,
      public: true,
      management: false,
      state: 'created',
      tags: [...(input.tags ?? [])],
      metro: METROS.find((m) => m.code === input.metro),
      created_at: new Date(this.now + n).toISOString(),
    };
    this.reservations.push(r);
    if (fault?.after) throw fault.after;
    return { ...r, assignments: [] };
  }
  async deleteIP(id: string): Promise<'deleted' | 'absent'> {
    this.calls.push('deleteIP');
    this.gc();
    const a = this.assignments.findIndex((x) => x.id === id);
    if (a >= 0) {
      this.assignments.splice(a, 1);
      return 'deleted';
    }
    const i = this.reservations.findIndex((r) => r.id === id);
    if (i < 0) return 'absent';
    if (this.assignments.some((x) => x.reservationId === id))
      throw new FakeApiError(422, 'IP reservation still has assignments; unassign them first');
    this.reservations.splice(i, 1);
    return 'deleted';
  }
  async updateIPTags(id: string, tags: string[]): Promise<IPReservation> {
    this.calls.push('updateIPTags');
    const r = this.reservations.find((x) => x.id === id);
    if (!r) throw new FakeApiError(404, 'Not found');
    r.tags = [...tags];
    return { ...r };
  }
  /** Project API keys (id, token, description). */
  readonly apiKeys: AuthToken[] = [];
  async listProjectApiKeys(): Promise<AuthToken[]> {
    this.calls.push('listProjectApiKeys');
    return this.apiKeys.map((k) => ({ ...k }));
  }
  async createProjectApiKey(_projectId: string, input: AuthTokenInput): Promise<AuthToken> {
    this.calls.push('createProjectApiKey');
    const n = ++this.seq;
    const k: AuthToken = {
      id: `key-${n}`,
      token: `fake-token-${n}`,
      description: input.description ?? '',
      read_only: input.read_only ?? false,
      created_at: new Date(this.now + n).toISOString(),
    };
    this.apiKeys.push(k);
    return { ...k };
  }
  async deleteApiKey(id: string): Promise<'deleted' | 'absent'> {
    this.calls.push('deleteApiKey');
    const i = this.apiKeys.findIndex((k) => k.id === id);
    if (i < 0) return 'absent';
    this.apiKeys.splice(i, 1);
    return 'deleted';
  }
  async listDeviceIPs(deviceId: string): Promise<IPAssignment[]> {
    this.calls.push('listDeviceIPs');
    this.gc();
    return this.assignments
      .filter((a) => a.deviceId === deviceId)
      .map((a) => this.assignmentView(a));
  }
  async assignIP(deviceId: string, cidr: string): Promise<IPAssignment> {
    this.calls.push('assignIP');
    this.gc();
    const f = this.devicesById.get(deviceId);
    if (!f || !this.view(f)) throw new FakeApiError(404, 'Not found');
    const address = cidr.split('/')[0]!;
    const r = this.reservations.find((x) => x.network === address);
    if (!r) throw new FakeApiError(422, `Address ${cidr} is not within any IP reservation`);
    if (this.assignments.some((x) => x.address === address))
      throw new FakeApiError(422, `Address ${cidr} is already assigned`);
    const a = { id: `ipa-${++this.ipSeq}`, reservationId: r.id, deviceId, address };
    this.assignments.push(a);
    return this.assignmentView(a);
  }
  async listHardwareReservations(): Promise<HardwareReservation[]> {
    this.calls.push('listHardwareReservations');
    // A reservation a live device sits on is held by it (not provisionable).
    return this.hardwareReservations.map((r) => {
      const holder = this.live().find(
        (d) => (d.hardware_reservation as { id?: string } | null)?.id === r.id,
      );
      return holder
        ? { ...r, provisionable: false, device: { href: `/metal/v1/devices/${holder.id}` } }
        : r;
    });
  }
  /** Adds provisionable hardware reservations (plan c3.small.x86 in sv unless given). */
  addHardwareReservations(ids: string[], plan = 'c3.small.x86', metro: Metro = METROS[0]!): void {
    for (const id of ids)
      this.hardwareReservations.push({
        id,
        plan: { slug: plan },
        facility: { code: `${metro.code}1`, metro },
        provisionable: true,
        spare: false,
        need_of_service: false,
      });
  }
  async getHardwareReservation(): Promise<never> {
    throw new Error('not in fake');
  }
  async listMetros(): Promise<Metro[]> {
    this.calls.push('listMetros');
    return METROS;
  }
  async listPlans(): Promise<Plan[]> {
    this.calls.push('listPlans');
    return PLANS;
  }
  async listOperatingSystems(): Promise<OperatingSystem[]> {
    this.calls.push('listOperatingSystems');
    return OSES;
  }
  async getMetroCapacity(): Promise<never> {
    throw new Error('not in fake');
  }
  async checkMetroCapacity(
    servers: CapacityCheck[],
  ): Promise<Array<CapacityCheck & { available: boolean }>> {
    this.calls.push('checkMetroCapacity');
    return servers.map((s) => ({
      ...s,
      available: s.quantity <= (this.capacity.get(`${s.metro}/${s.plan}`) ?? Infinity),
    }));
  }
  async getProject(): Promise<never> {
    throw new Error('not in fake');
  }
  async listProjects(): Promise<never> {
    throw new Error('not in fake');
  }
  async getBgpConfig(): Promise<never> {
    throw new Error('not in fake');
  }
  async requestBgpConfig(): Promise<never> {
    throw new Error('not in fake');
  }
}
