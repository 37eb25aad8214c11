/**
 * Preflight: checks the config's metros, plans, operating systems and capacity against the Metal API
 * before anything is created, and reports every problem at once with the config file:line:col it
 * came from (LoadResult.sources).
 */
import type { Diagnostic, SourceIndex, SourceRange } from '../../config/types.js';
import type { MetalApi } from '../../metal/api.js';
import type {
  CapacityCheck,
  Metro,
  OperatingSystem,
  Plan as MetalPlan,
} from '../../metal/types.js';
import { LokoError } from '../../util/errors.js';
import type { DesiredDevice, DesiredState } from './desired.js';
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
