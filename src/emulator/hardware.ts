/**
 * Hardware reservations: servers of a plan in a metro kept for a project. A device created with
 * `hardware_reservation_id` (a reservation UUID or `next-available`) lands on one; the
 * reservation holds it until the device is gone, then it is provisionable again.
 */
import { randomBytes } from 'node:crypto';
import {
  facilityOf,
  findMetro,
  findPlan,
  planOfferedIn,
  type Catalog,
  type MetroRecord,
  type PlanRecord,
} from './catalog.js';
import { unprocessable } from './errors.js';
import { isUuid, newId } from './ids.js';
import type { EmulatorState, HardwareReservationRecord } from './state.js';

/** `hardware_reservation_id` value that picks any provisionable reservation of the plan and metro. */
export const NEXT_AVAILABLE = 'next-available';

/** States of the list filter (`state=`), per the spec. */
export const HARDWARE_RESERVATION_STATES = ['active', 'spare', 'need_of_service'] as const;
export type HardwareReservationState = (typeof HARDWARE_RESERVATION_STATES)[number];

/** What the seeded project holds: 3 × c3.small.x86 in sv, 1 × m3.small.x86 in da. */
const SEED: Array<[plan: string, metro: string, count: number]> = [
  ['c3.small.x86', 'sv', 3],
  ['m3.small.x86', 'da', 1],
];

/** A new reservation record (fresh id and switch). The plan and metro must be in the catalog. */
export function newHardwareReservation(
  catalog: Catalog,
  projectId: string,
  plan: PlanRecord,
  metro: MetroRecord,
  now: number,
  opts: { spare?: boolean } = {},
): HardwareReservationRecord {
  return {
    id: newId(),
    projectId,
    plan: plan.slug,
    metro: metro.code,
    facility: facilityOf(catalog, metro.code).code,
    spare: opts.spare ?? false,
    needOfService: false,
    switchUuid: randomBytes(4).toString('hex'),
    // A monthly rate in the region of the plan's hourly price.
    customRate: Math.round(plan.pricing.hour * 730 * 100) / 100,
    createdAt: now,
  };
}

/** The reservations a fresh state starts with (ids drawn anew for every state). */
export function seedHardwareReservations(
  catalog: Catalog,
  projectId: string,
  now: number,
): HardwareReservationRecord[] {
  const out: HardwareReservationRecord[] = [];
  for (const [slug, code, count] of SEED) {
    const plan = findPlan(catalog, slug)!;
    const metro = findMetro(catalog, code)!;
    for (let i = 0; i < count; i++) {
      out.push(newHardwareReservation(catalog, projectId, plan, metro, now));
    }
  }
  return out;
}

/** True when a device can be provisioned on the reservation now. */
export function isProvisionable(r: HardwareReservationRecord): boolean {
  return !r.spare && !r.needOfService && r.deviceId === undefined;
}

/** The reservation's state as the list filter sees it. */
export function reservationState(r: HardwareReservationRecord): HardwareReservationState {
  if (r.needOfService) return 'need_of_service';
  return r.spare ? 'spare' : 'active';
}

/** The reservation a device sits on, if any. */
export function reservationOfDevice(
  state: EmulatorState,
  deviceId: string,
): HardwareReservationRecord | undefined {
  return state.hardwareReservations.find((r) => r.deviceId === deviceId);
}

/**
 * The reservation a device create asks for (`hardware_reservation_id`), checked against the
 * project, the plan and the metro; 422 with the API's kind of message otherwise. `''` (the
 * spec's default) asks for none.
 */
export function resolveHardwareReservation(
  state: EmulatorState,
  projectId: string,
  requested: string,
  plan: PlanRecord,
  metro: MetroRecord,
): HardwareReservationRecord | undefined {
  if (requested === '') return undefined;
  const mine = state.hardwareReservations.filter((r) => r.projectId === projectId);
  if (requested === NEXT_AVAILABLE) {
    const r = mine.find(
      (x) => isProvisionable(x) && x.plan === plan.slug && x.metro === metro.code,
    );
    if (!r) {
      throw unprocessable(
        `No available hardware reservations for plan ${plan.slug} in metro ${metro.code}`,
      );
    }
    return r;
  }
  if (!isUuid(requested)) {
    throw unprocessable(
      `hardware_reservation_id must be a hardware reservation UUID or "${NEXT_AVAILABLE}"`,
    );
  }
  const r = mine.find((x) => x.id === requested.toLowerCase());
  if (!r) throw unprocessable(`Hardware reservation ${requested} not found in this project`);
  const problems: string[] = [];
  if (r.spare) {
    problems.push(`Hardware reservation ${r.id} is a spare and must be activated first`);
  } else if (r.needOfService) {
    problems.push(`Hardware reservation ${r.id} is not provisionable: it needs service`);
  } else if (r.deviceId !== undefined) {
    problems.push(
      `Hardware reservation ${r.id} is not provisionable: it is in use by device ${r.deviceId}`,
    );
  }
  if (r.plan !== plan.slug) {
    problems.push(
      `Hardware reservation ${r.id} is for plan ${r.plan}, not the requested plan ${plan.slug}`,
    );
  }
  if (r.metro !== metro.code) {
    problems.push(
      `Hardware reservation ${r.id} is in metro ${r.metro}, not the requested metro ${metro.code}`,
    );
  }
  if (problems.length > 0) throw unprocessable(problems);
  return r;
}

/** Frees the reservation of a device that is gone (it becomes provisionable again). */
export function releaseHardwareReservation(state: EmulatorState, deviceId: string): void {
  for (const r of state.hardwareReservations) {
    if (r.deviceId === deviceId) delete r.deviceId;
  }
}

/** Checks a plan/metro pair for a new reservation (control API); the error text, or undefined. */
export function reservationProblem(
  catalog: Catalog,
  planSlug: string,
  metroCode: string,
): string | undefined {
  const plan = findPlan(catalog, planSlug);
  if (!plan) return `unknown plan "${planSlug}"`;
  const metro = findMetro(catalog, metroCode);
  if (!metro) return `unknown metro "${metroCode}"`;
  if (!planOfferedIn(plan, metro)) return `plan ${plan.slug} is not offered in metro ${metro.code}`;
  return undefined;
}
