import { API_PREFIX, stableId } from './ids.js';

/** A metro as the API returns it (`GET /locations/metros`). */
export interface MetroRecord {
  id: string;
  code: string;
  name: string;
  country: string;
}

/** A facility (deprecated in the API, still embedded in devices). */
export interface FacilityRecord {
  id: string;
  code: string;
  name: string;
  features: string[];
  ip_ranges: string[];
  metro: MetroRecord;
}

/** A plan as the API returns it (`GET /plans`). */
export interface PlanRecord {
  id: string;
  slug: string;
  name: string;
  class: string;
  description: string;
  line: string;
  type: 'standard' | 'workload_optimized' | 'custom';
  legacy: boolean;
  categories: string[];
  deployment_types: Array<'on_demand' | 'spot_market'>;
  pricing: { hour: number };
  available_in: Array<{ href: string; price: { hour: number } }>;
  available_in_metros: Array<{ href: string; price: { hour: number } }>;
  specs: {
    cpus: Array<{ count: number; type: string }>;
    memory: { total: string };
    drives: Array<{ count: number; type: string; size: string; category: string }>;
    nics: Array<{ count: number; type: string }>;
    features: { raid: boolean; txt: boolean; uefi: boolean };
  };
}

/** An operating system as the API returns it (`GET /operating-systems`). */
export interface OperatingSystemRecord {
  id: string;
  slug: string;
  name: string;
  distro: string;
  distro_label: string;
  version: string;
  provisionable_on: string[];
  preinstallable: boolean;
  licensed: boolean;
  pricing: Record<string, unknown>;
  default_operating_system: boolean;
  lifecycle_state: string;
  release_date: string;
}

/** Capacity level of a plan in a metro (`GET /capacity/metros`). */
export type CapacityLevel = 'normal' | 'limited' | 'unavailable';

/** The seeded, read-only part of the state. */
export interface Catalog {
  metros: MetroRecord[];
  facilities: FacilityRecord[];
  plans: PlanRecord[];
  operatingSystems: OperatingSystemRecord[];
  /** capacity[metroCode][planSlug] */
  capacity: Record<string, Record<string, CapacityLevel>>;
}

/** How many devices of one plan a metro takes at each capacity level (emulator policy). */
export const CAPACITY_LIMITS: Record<CapacityLevel, number> = {
  normal: 1000,
  limited: 5,
  unavailable: 0,
};

const METROS: Array<[code: string, name: string, country: string, facility: string]> = [
  ['sv', 'Silicon Valley', 'US', 'sv15'],
  ['da', 'Dallas', 'US', 'da11'],
  ['dc', 'Washington DC', 'US', 'dc13'],
  ['ny', 'New York', 'US', 'ny5'],
  ['ch', 'Chicago', 'US', 'ch3'],
  ['la', 'Los Angeles', 'US', 'la4'],
  ['se', 'Seattle', 'US', 'se4'],
  ['am', 'Amsterdam', 'NL', 'am6'],
  ['fr', 'Frankfurt', 'DE', 'fr2'],
  ['ld', 'London', 'GB', 'ld7'],
  ['sg', 'Singapore', 'SG', 'sg1'],
  ['sy', 'Sydney', 'AU', 'sy5'],
  ['ty', 'Tokyo', 'JP', 'ty11'],
];

const ALL_METROS = METROS.map(([code]) => code);

interface PlanSeed {
  slug: string;
  name: string;
  description: string;
  hour: number;
  categories: string[];
  cpus: Array<{ count: number; type: string }>;
  memory: string;
  drives: Array<{ count: number; type: string; size: string; category: string }>;
  nics: { count: number; type: string };
  metros: string[];
}

const PLANS: PlanSeed[] = [
  {
    slug: 'c3.small.x86',
    name: 'c3.small.x86',
    description: 'Our c3.small.x86 is a general purpose server with 8 cores and 32 GB of RAM.',
    hour: 0.75,
    categories: ['compute', 'current_gen'],
    cpus: [{ count: 1, type: 'Intel Xeon E-2278G 8-Core Processor @ 3.40GHz' }],
    memory: '32GB',
    drives: [{ count: 2, type: 'SSD', size: '480GB', category: 'boot' }],
    nics: { count: 2, type: '10Gbps' },
    metros: ALL_METROS,
  },
  {
    slug: 'c3.medium.x86',
    name: 'c3.medium.x86',
    description: 'Our c3.medium.x86 is a 24-core AMD EPYC server for general workloads.',
    hour: 1.5,
    categories: ['compute', 'current_gen'],
    cpus: [{ count: 1, type: 'AMD EPYC 7402P 24-Core Processor @ 2.8GHz' }],
    memory: '64GB',
    drives: [
      { count: 2, type: 'SSD', size: '240GB', category: 'boot' },
      { count: 2, type: 'SSD', size: '480GB', category: 'storage' },
    ],
    nics: { count: 2, type: '25Gbps' },
    metros: ALL_METROS,
  },
  {
    slug: 'm3.small.x86',
    name: 'm3.small.x86',
    description: 'Our m3.small.x86 is a memory-balanced server with 8 cores and 64 GB of RAM.',
    hour: 1.05,
    categories: ['compute', 'current_gen'],
    cpus: [{ count: 1, type: 'Intel Xeon E-2378G 8-Core Processor @ 2.80GHz' }],
    memory: '64GB',
    drives: [{ count: 2, type: 'SSD', size: '480GB', category: 'boot' }],
    nics: { count: 2, type: '25Gbps' },
    metros: ALL_METROS,
  },
  {
    slug: 'm3.large.x86',
    name: 'm3.large.x86',
    description: 'Our m3.large.x86 is a 32-core AMD EPYC server with 256 GB of RAM and NVMe.',
    hour: 3.1,
    categories: ['compute', 'current_gen'],
    cpus: [{ count: 1, type: 'AMD EPYC 7502P 32-Core Processor @ 2.5GHz' }],
    memory: '256GB',
    drives: [
      { count: 2, type: 'SSD', size: '240GB', category: 'boot' },
      { count: 2, type: 'NVME', size: '3.8TB', category: 'storage' },
    ],
    nics: { count: 2, type: '25Gbps' },
    metros: ALL_METROS,
  },
  {
    slug: 'n3.xlarge.x86',
    name: 'n3.xlarge.x86',
    description: 'Our n3.xlarge.x86 is a network-heavy server with four 25 Gbps ports.',
    hour: 4.5,
    categories: ['compute', 'current_gen'],
    cpus: [{ count: 2, type: 'Intel Xeon Gold 6338 32-Core Processor @ 2.0GHz' }],
    memory: '512GB',
    drives: [
      { count: 2, type: 'SSD', size: '240GB', category: 'boot' },
      { count: 2, type: 'NVME', size: '3.8TB', category: 'storage' },
    ],
    nics: { count: 4, type: '25Gbps' },
    metros: ['sv', 'da', 'dc', 'ny', 'am', 'fr'],
  },
  {
    slug: 's3.xlarge.x86',
    name: 's3.xlarge.x86',
    description: 'Our s3.xlarge.x86 is a storage server with 12 HDDs and NVMe cache.',
    hour: 2.95,
    categories: ['storage', 'current_gen'],
    cpus: [{ count: 2, type: 'Intel Xeon Silver 4214 12-Core Processor @ 2.2GHz' }],
    memory: '192GB',
    drives: [
      { count: 2, type: 'SSD', size: '960GB', category: 'boot' },
      { count: 12, type: 'HDD', size: '8TB', category: 'storage' },
      { count: 2, type: 'NVME', size: '256GB', category: 'cache' },
    ],
    nics: { count: 2, type: '25Gbps' },
    metros: ['sv', 'da', 'ny', 'am', 'sg'],
  },
];

/** Capacity exceptions to "normal"; the `unavailable` one exists for tests. */
const CAPACITY_EXCEPTIONS: Array<[metro: string, plan: string, level: CapacityLevel]> = [
  ['sg', 's3.xlarge.x86', 'unavailable'],
  ['sy', 'm3.large.x86', 'limited'],
];

const COMPUTE_PLANS = ['c3.small.x86', 'c3.medium.x86', 'm3.small.x86', 'm3.large.x86'];
const ALL_PLANS = PLANS.map((p) => p.slug);

const OPERATING_SYSTEMS: Array<{
  slug: string;
  name: string;
  distro: string;
  distroLabel: string;
  version: string;
  plans: string[];
  released: string;
  isDefault?: boolean;
}> = [
  {
    slug: 'ubuntu_22_04',
    name: 'Ubuntu 22.04 LTS',
    distro: 'ubuntu',
    distroLabel: 'Ubuntu',
    version: '22.04',
    plans: ALL_PLANS,
    released: '2022-04-21',
  },
  {
    slug: 'ubuntu_24_04',
    name: 'Ubuntu 24.04 LTS',
    distro: 'ubuntu',
    distroLabel: 'Ubuntu',
    version: '24.04',
    plans: ALL_PLANS,
    released: '2024-04-25',
    isDefault: true,
  },
  {
    slug: 'debian_12',
    name: 'Debian 12',
    distro: 'debian',
    distroLabel: 'Debian',
    version: '12',
    plans: ALL_PLANS,
    released: '2023-06-10',
    isDefault: true,
  },
  {
    slug: 'flatcar_stable',
    name: 'Flatcar Container Linux (Stable)',
    distro: 'flatcar',
    distroLabel: 'Flatcar',
    version: 'stable',
    plans: ALL_PLANS,
    released: '2024-01-01',
    isDefault: true,
  },
  {
    slug: 'flatcar_beta',
    name: 'Flatcar Container Linux (Beta)',
    distro: 'flatcar',
    distroLabel: 'Flatcar',
    version: 'beta',
    plans: ALL_PLANS,
    released: '2024-01-01',
  },
  {
    // Deliberately not provisionable on n3/s3, so "OS not provisionable on plan" is testable.
    slug: 'rocky_9',
    name: 'Rocky Linux 9',
    distro: 'rocky',
    distroLabel: 'Rocky Linux',
    version: '9',
    plans: COMPUTE_PLANS,
    released: '2022-07-14',
    isDefault: true,
  },
  {
    slug: 'custom_ipxe',
    name: 'Custom iPXE',
    distro: 'custom_ipxe',
    distroLabel: 'Custom iPXE',
    version: '1',
    plans: ALL_PLANS,
    released: '2016-01-01',
    isDefault: true,
  },
];

/** The catalog every emulator instance starts with. Ids are stable (see `stableId`). */
export function seedCatalog(): Catalog {
  const metros: MetroRecord[] = METROS.map(([code, name, country]) => ({
    id: stableId(`metro:${code}`),
    code,
    name,
    country,
  }));
  const metroByCode = new Map(metros.map((m) => [m.code, m]));
  const facilities: FacilityRecord[] = METROS.map(([code, name, , fac]) => ({
    id: stableId(`facility:${fac}`),
    code: fac,
    name: `${name} ${fac.slice(2)}`,
    features: ['baremetal', 'backend_transfer', 'layer_2', 'global_ipv4'],
    ip_ranges: [],
    metro: metroByCode.get(code)!,
  }));
  const facilityByMetro = new Map(facilities.map((f) => [f.metro.code, f]));

  const plans: PlanRecord[] = PLANS.map((p) => ({
    id: stableId(`plan:${p.slug}`),
    slug: p.slug,
    name: p.name,
    class: p.slug,
    description: p.description,
    line: 'baremetal',
    type: 'standard',
    legacy: false,
    categories: p.categories,
    deployment_types: ['on_demand', 'spot_market'],
    pricing: { hour: p.hour },
    available_in: p.metros.map((m) => ({
      href: `${API_PREFIX}/facilities/${facilityByMetro.get(m)!.id}`,
      price: { hour: p.hour },
    })),
    available_in_metros: p.metros.map((m) => ({
      href: `${API_PREFIX}/locations/metros/${metroByCode.get(m)!.id}`,
      price: { hour: p.hour },
    })),
    specs: {
      cpus: p.cpus,
      memory: { total: p.memory },
      drives: p.drives,
      nics: [p.nics],
      features: { raid: true, txt: true, uefi: true },
    },
  }));

  const operatingSystems: OperatingSystemRecord[] = OPERATING_SYSTEMS.map((o) => ({
    id: stableId(`os:${o.slug}`),
    slug: o.slug,
    name: o.name,
    distro: o.distro,
    distro_label: o.distroLabel,
    version: o.version,
    provisionable_on: o.plans,
    preinstallable: false,
    licensed: false,
    pricing: {},
    default_operating_system: o.isDefault ?? false,
    lifecycle_state: 'supported',
    release_date: o.released,
  }));

  const capacity: Catalog['capacity'] = {};
  for (const p of PLANS) {
    for (const m of p.metros) (capacity[m] ??= {})[p.slug] = 'normal';
  }
  for (const [m, p, level] of CAPACITY_EXCEPTIONS) (capacity[m] ??= {})[p] = level;

  return { metros, facilities, plans, operatingSystems, capacity };
}

/** A metro by code (case-insensitive) or UUID. */
export function findMetro(catalog: Catalog, codeOrId: string): MetroRecord | undefined {
  const key = codeOrId.toLowerCase();
  return catalog.metros.find((m) => m.code === key || m.id === key);
}

/** A plan by slug or UUID. */
export function findPlan(catalog: Catalog, slugOrId: string): PlanRecord | undefined {
  return catalog.plans.find((p) => p.slug === slugOrId || p.id === slugOrId);
}

/** An operating system by slug or UUID. */
export function findOperatingSystem(
  catalog: Catalog,
  slugOrId: string,
): OperatingSystemRecord | undefined {
  return catalog.operatingSystems.find((o) => o.slug === slugOrId || o.id === slugOrId);
}

/** The (single) facility the emulator uses in a metro. */
export function facilityOf(catalog: Catalog, metroCode: string): FacilityRecord {
  const f = catalog.facilities.find((x) => x.metro.code === metroCode);
  if (!f) throw new Error(`no facility for metro ${metroCode}`);
  return f;
}

/** True when the plan lists the metro in `available_in_metros`. */
export function planOfferedIn(plan: PlanRecord, metro: MetroRecord): boolean {
  return plan.available_in_metros.some((a) => a.href.endsWith(`/${metro.id}`));
}

/** Number of NICs of a plan (`specs.nics[].count` summed). */
export function nicCount(plan: PlanRecord): number {
  return plan.specs.nics.reduce((n, x) => n + x.count, 0) || 2;
}
