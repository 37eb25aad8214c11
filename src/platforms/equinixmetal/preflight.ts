/**
 * Preflight: checks the config's metros, plans, operating systems and capacity against the Metal API
 * before anything is created, and reports every problem at once with the config file:line:col it
 * came from (LoadResult.sources).
 */
import type { Diagnostic, SourceIndex, SourceRange } from '../../config/types.js';
import type { MetalApi } from '../../metal/api.js';
import type {
  CapacityCheck,
  HardwareReservation,
  Metro,
  OperatingSystem,
  Plan as MetalPlan,
} from '../../metal/types.js';
import { LokoError } from '../../util/errors.js';
import { NEXT_AVAILABLE, type DesiredDevice, type DesiredState } from './desired.js';
import type { Plan } from './plan.js';

/** Preflight found problems; `diagnostics` carry file ranges for the CLI to print. */
export class PreflightError extends LokoError {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic[]) {
    const lines = diagnostics.map((d) => `${formatRange(d.range)}${d.summary}`);
    super(
      diagnostics.length === 1
        ? `preflight check failed: ${lines[0]}`
        : `preflight found ${diagnostics.length} problems:\n  ${lines.join('\n  ')}`,
      { hint: 'Fix the configuration values named above and run the command again.' },
    );
    this.name = 'PreflightError';
    this.diagnostics = diagnostics;
  }
}

/** What preflight needs. `plan` decides which quantities must be available as new machines. */
export interface PreflightInput {
  api: MetalApi;
  desired: DesiredState;
  plan: Plan;
  sources: SourceIndex;
}

/** What preflight checked, for the progress line. */
export interface PreflightReport {
  metros: string[];
  plans: string[];
  operatingSystems: string[];
  capacityChecked: CapacityCheck[];
}

/**
 * Runs the checks. Catalog lookups are three list calls (metros, plans, OSes) plus one capacity
 * check when devices are to be created. Rejects with {@link PreflightError} listing every problem,
 * or with the client's error when the API cannot be asked.
 */
export async function preflight(input: PreflightInput): Promise<PreflightReport> {
  const { api, desired, sources } = input;
  const [metros, plans, oses] = await Promise.all([
    api.listMetros(),
    api.listPlans(),
    api.listOperatingSystems(),
  ]);
  const problems = new Problems(sources);
  const metroByCode = new Map<string, Metro>(metros.map((m) => [m.code.toLowerCase(), m]));
  const planBySlug = new Map<string, MetalPlan>(plans.map((p) => [p.slug, p]));
  const osBySlug = new Map<string, OperatingSystem>(oses.map((o) => [o.slug, o]));

  for (const d of desired.devices) {
    const metro = metroByCode.get(d.metro);
    const plan = planBySlug.get(d.plan);
    const os = osBySlug.get(d.os);
    if (!metro) {
      problems.add(
        d.sources.metro,
        `metro "${d.metro}" does not exist`,
        `Known metros: ${list([...metroByCode.keys()])}`,
      );
    }
    if (!plan) {
      problems.add(
        d.sources.plan,
        `plan "${d.plan}" does not exist`,
        `Known plans: ${list([...planBySlug.keys()])}`,
      );
    } else if (metro && !offeredIn(plan, metro)) {
      problems.add(
        d.sources.plan,
        `plan "${d.plan}" is not offered in metro "${d.metro}"`,
        `Choose a plan offered in ${d.metro} or another metro.`,
      );
    }
    if (!os) {
      problems.add(
        d.sources.os,
        `operating system "${d.os}" does not exist`,
        `Known slugs: ${list([...osBySlug.keys()])}`,
      );
    } else if (plan && !provisionableOn(os, plan)) {
      problems.add(
        d.sources.os,
        `operating system "${d.os}" cannot be installed on plan "${d.plan}"`,
        `It is provisionable on: ${list(os.provisionable_on)}`,
      );
    }
  }

  const wanted = capacityWanted(input.plan, (d) =>
    Boolean(metroByCode.get(d.metro) && planBySlug.get(d.plan)),
  );
  let capacityChecked: CapacityCheck[] = [];
  if (wanted.length > 0) {
    capacityChecked = wanted.map((w) => w.check);
    const answers = await api.checkMetroCapacity(capacityChecked);
    for (const w of wanted) {
      const a = answers.find(
        (x) => x.metro.toLowerCase() === w.check.metro && x.plan === w.check.plan,
      );
      if (a && !a.available) {
        problems.add(
          w.first.sources.plan,
          `not enough capacity for ${w.check.quantity} × ${w.check.plan} in metro "${w.check.metro}"`,
          'Choose another metro or plan, lower the count, or use hardware reservations.',
        );
      }
    }
  }

  await checkReservations(input, problems);

  if (problems.size > 0) throw new PreflightError(problems.list());
  return {
    metros: [...new Set(desired.devices.map((d) => d.metro))],
    plans: [...new Set(desired.devices.map((d) => d.plan))],
    operatingSystems: [...new Set(desired.devices.map((d) => d.os))],
    capacityChecked,
  };
}

/**
 * New on-demand machines per (metro, plan): creates and replacements, excluding devices placed on
 * hardware reservations (those do not draw on public capacity).
 */
function capacityWanted(
  p: Plan,
  valid: (d: DesiredDevice) => boolean,
): Array<{ check: CapacityCheck; first: DesiredDevice }> {
  const groups = new Map<string, { check: CapacityCheck; first: DesiredDevice }>();
  for (const a of p.actions) {
    if (a.type !== 'create' && a.type !== 'replace') continue;
    const d = a.desired;
    if (d.hardwareReservationId || !valid(d)) continue;
    const key = `${d.metro}\u0000${d.plan}`;
    const g = groups.get(key) ?? { check: { metro: d.metro, plan: d.plan, quantity: 0 }, first: d };
    g.check.quantity++;
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** Config paths of a device's reservation: the explicit map or the default, then the block. */
export function reservationSources(
  d: DesiredDevice,
  attr: 'reservation_ids' | 'reservation_ids_default',
): string[] {
  const block = d.pool === undefined ? 'cluster' : `cluster.worker_pool.${d.pool}`;
  return [`${block}.${attr}`, block];
}

function reservationMetro(r: HardwareReservation): string | undefined {
  return r.facility?.metro?.code?.toLowerCase();
}

function reservationDeviceId(r: HardwareReservation): string | undefined {
  const dev = r.device;
  if (!dev) return undefined;
  if ('id' in dev && typeof dev.id === 'string') return dev.id;
  const href = (dev as { href?: string }).href;
  return href ? href.replace(/\/+$/, '').split('/').pop() : undefined;
}

/**
 * Hardware reservations of the devices to create (creates and replacements): explicit ones must
 * exist in the project, be provisionable (or held by the device being replaced) and match the
 * device's plan and metro; `next-available` needs enough provisionable reservations per
 * (metro, plan). One list call, only when a device to create uses a reservation.
 */
async function checkReservations(input: PreflightInput, problems: Problems): Promise<void> {
  const creating: Array<{ d: DesiredDevice; replacing?: string }> = [];
  for (const a of input.plan.actions) {
    if (a.type === 'create' && a.desired.hardwareReservationId) creating.push({ d: a.desired });
    else if (a.type === 'replace' && a.desired.hardwareReservationId)
      creating.push({ d: a.desired, replacing: a.deviceId });
  }
  if (creating.length === 0) return;
  const all = await input.api.listHardwareReservations(input.desired.projectId);
  const byId = new Map(all.map((r) => [r.id, r]));
  const explicit = new Set(
    creating.map((c) => c.d.hardwareReservationId).filter((id) => id !== NEXT_AVAILABLE),
  );
  const nextWanted = new Map<
    string,
    { metro: string; plan: string; n: number; first: DesiredDevice }
  >();

  for (const { d, replacing } of creating) {
    const id = d.hardwareReservationId!;
    if (id === NEXT_AVAILABLE) {
      const key = `${d.metro}\u0000${d.plan}`;
      const g = nextWanted.get(key) ?? { metro: d.metro, plan: d.plan, n: 0, first: d };
      g.n++;
      nextWanted.set(key, g);
      continue;
    }
    const where = reservationSources(d, 'reservation_ids');
    const r = byId.get(id);
    if (!r) {
      problems.add(
        where,
        `hardware reservation "${id}" for ${d.hostname} does not exist in project ${input.desired.projectId}`,
        `Reservations in the project: ${list(all.map((x) => x.id))}. Fix the UUID in reservation_ids or use reservation_ids_default = "next-available".`,
      );
      continue;
    }
    const holder = reservationDeviceId(r);
    const heldByItself = replacing !== undefined && holder === replacing;
    if (!r.provisionable && !heldByItself) {
      problems.add(
        where,
        `hardware reservation "${id}" for ${d.hostname} is not provisionable${holder ? ` (device ${holder} is on it)` : r.spare ? ' (it is a spare)' : ''}`,
        'Free the reservation (delete the device on it) or choose another reservation.',
      );
    }
    if (r.plan.slug !== d.plan) {
      problems.add(
        where,
        `hardware reservation "${id}" for ${d.hostname} is for plan "${r.plan.slug}", not "${d.plan}"`,
        `Use a reservation of plan ${d.plan} or set the plan to ${r.plan.slug}.`,
      );
    }
    const rm = reservationMetro(r);
    if (rm !== undefined && rm !== d.metro) {
      problems.add(
        where,
        `hardware reservation "${id}" for ${d.hostname} is in metro "${rm}", not "${d.metro}"`,
        `Use a reservation in ${d.metro} or set the metro to ${rm}.`,
      );
    }
  }

  for (const g of nextWanted.values()) {
    const free = all.filter(
      (r) =>
        r.provisionable &&
        !r.spare &&
        !explicit.has(r.id) &&
        r.plan.slug === g.plan &&
        (reservationMetro(r) === undefined || reservationMetro(r) === g.metro),
    ).length;
    if (free < g.n) {
      problems.add(
        reservationSources(g.first, 'reservation_ids_default'),
        `"next-available" needs ${g.n} provisionable hardware reservation${g.n === 1 ? '' : 's'} of plan ${g.plan} in metro "${g.metro}", the project has ${free}`,
        'Add hardware reservations, lower the count, or remove reservation_ids_default to use on-demand hardware.',
      );
    }
  }
}

/** A plan is offered in a metro when an `available_in_metros` href ends with the metro's id. */
function offeredIn(plan: MetalPlan, metro: Metro): boolean {
  if (!plan.available_in_metros) return true; // the API did not say; capacity will tell
  return plan.available_in_metros.some((a) => a.href.replace(/\/+$/, '').endsWith(`/${metro.id}`));
}

/** `provisionable_on` lists plan slugs (or plan classes); an empty list means no restriction known. */
function provisionableOn(os: OperatingSystem, plan: MetalPlan): boolean {
  if (!os.provisionable_on || os.provisionable_on.length === 0) return true;
  return (
    os.provisionable_on.includes(plan.slug) ||
    (plan.class !== undefined && os.provisionable_on.includes(plan.class))
  );
}

/** Deduplicated problems, each tied to the most specific source range available. */
class Problems {
  private readonly byKey = new Map<string, Diagnostic>();
  constructor(private readonly sources: SourceIndex) {}
  get size(): number {
    return this.byKey.size;
  }
  add(keys: string[], summary: string, detail: string): void {
    const key = keys.find((k) => this.sources.has(k));
    const range: SourceRange | undefined = key ? this.sources.get(key) : undefined;
    const id = `${summary}\u0000${range ? `${range.file}:${range.start.line}:${range.start.column}` : ''}`;
    if (!this.byKey.has(id)) this.byKey.set(id, { severity: 'error', summary, detail, range });
  }
  list(): Diagnostic[] {
    return [...this.byKey.values()];
  }
}

function formatRange(r: SourceRange | undefined): string {
  return r ? `${r.file}:${r.start.line}:${r.start.column}: ` : '';
}

function list(values: string[], max = 12): string {
  const sorted = [...values].sort();
  return sorted.length > max
    ? `${sorted.slice(0, max).join(', ')}, …`
    : sorted.join(', ') || '(none)';
}
