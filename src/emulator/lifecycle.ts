import { newId } from './ids.js';
import type { DeviceEventRecord, DeviceRecord, DeviceState, TimelineEntry } from './state.js';

/**
 * How long each transitional state lasts, in virtual milliseconds. At time scale 1 a new device
 * is active 4 s after creation; the time scale speeds all of these up.
 */
export const DURATIONS = {
  queued: 1000,
  provisioning: 3000,
  /** Where in provisioning an injected failure hits (fraction of `provisioning`). */
  failAt: 0.5,
  poweringOff: 2000,
  poweringOn: 2000,
  /** Reboot/rescue pass through powering_off and powering_on this long each. */
  rebootStep: 1000,
  reinstalling: 3000,
  deprovisioning: 2000,
} as const;

/** Device action types (DeviceActionInput.type). */
export const ACTION_TYPES = ['power_on', 'power_off', 'reboot', 'rescue', 'reinstall'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

const ACTION_NAMES: Record<ActionType, string> = {
  power_on: 'Power On',
  power_off: 'Power Off',
  reboot: 'Reboot',
  rescue: 'Rescue',
  reinstall: 'Reinstall',
};

/** Timeline of a new device: queued -> provisioning -> active (or failed). */
export function provisioningTimeline(createdAt: number, fails: boolean): TimelineEntry[] {
  const provisioningAt = createdAt + DURATIONS.queued;
  return [
    { state: 'queued', at: createdAt },
    { state: 'provisioning', at: provisioningAt },
    fails
      ? { state: 'failed', at: provisioningAt + DURATIONS.provisioning * DURATIONS.failAt }
      : { state: 'active', at: provisioningAt + DURATIONS.provisioning },
  ];
}

/** The timeline entry in force at `now` (the last one that has started). */
export function entryAt(device: DeviceRecord, now: number): TimelineEntry {
  let current = device.timeline[0]!;
  for (const e of device.timeline) if (e.at <= now) current = e;
  return current;
}

/** The device's state at virtual time `now`. */
export function stateAt(device: DeviceRecord, now: number): DeviceState {
  return entryAt(device, now).state;
}

/** Time of the last transition that has happened by `now` (feeds `updated_at`). */
export function lastTransitionAt(device: DeviceRecord, now: number): number {
  return entryAt(device, now).at;
}

/** Percentage (0..100) while provisioning, as the API's `provisioning_percentage`. */
export function provisioningPercentage(device: DeviceRecord, now: number): number | undefined {
  const current = entryAt(device, now);
  if (current.state !== 'provisioning') return undefined;
  const next = device.timeline.find((e) => e.at > current.at);
  const end = next?.at ?? current.at + DURATIONS.provisioning;
  const pct = ((now - current.at) / Math.max(1, end - current.at)) * 100;
  return Math.round(Math.min(99, Math.max(0, pct)) * 10) / 10;
}

/** Actions the API offers in a state (`Device.actions`). */
export function allowedActions(state: DeviceState): ActionType[] {
  switch (state) {
    case 'active':
      return ['power_off', 'reboot', 'rescue', 'reinstall'];
    case 'inactive':
      return ['power_on', 'reinstall'];
    case 'failed':
      return ['reinstall'];
    default:
      return [];
  }
}

/** `Device.actions` entries for a state. */
export function actionList(state: DeviceState): Array<{ type: string; name: string }> {
  return allowedActions(state).map((type) => ({ type, name: ACTION_NAMES[type] }));
}

/**
 * Why an action is refused in the current state, or undefined when it is allowed. Messages read
 * like the API's 422s.
 */
export function actionRefusal(
  device: DeviceRecord,
  type: ActionType,
  now: number,
): string | undefined {
  const state = stateAt(device, now);
  if (type === 'reinstall' && device.locked) return 'Cannot reinstall a locked device';
  if (allowedActions(state).includes(type)) return undefined;
  if (type === 'power_on' && state === 'active') return 'Device is already powered on';
  if (type === 'power_off' && state === 'inactive') return 'Device is already powered off';
  return `Cannot ${type.replace('_', ' ')} a device while it is ${state.replace('_', ' ')}`;
}

/** Appends the transitions of an (allowed) action starting at `now`. */
export function scheduleAction(device: DeviceRecord, type: ActionType, now: number): void {
  const t = dropFuture(device, now);
  switch (type) {
    case 'power_off':
      t.push(
        { state: 'powering_off', at: now },
        { state: 'inactive', at: now + DURATIONS.poweringOff },
      );
      break;
    case 'power_on':
      t.push(
        { state: 'powering_on', at: now },
        { state: 'active', at: now + DURATIONS.poweringOn },
      );
      break;
    case 'reboot':
    case 'rescue':
      t.push(
        { state: 'powering_off', at: now },
        { state: 'powering_on', at: now + DURATIONS.rebootStep },
        { state: 'active', at: now + 2 * DURATIONS.rebootStep },
      );
      break;
    case 'reinstall':
      t.push(
        { state: 'reinstalling', at: now },
        { state: 'active', at: now + DURATIONS.reinstalling },
      );
      break;
  }
  compact(device);
}

/** Appends deprovisioning -> deleted starting at `now`. */
export function scheduleDelete(device: DeviceRecord, now: number): void {
  const t = dropFuture(device, now);
  t.push(
    { state: 'deprovisioning', at: now },
    { state: 'deleted', at: now + DURATIONS.deprovisioning },
  );
  compact(device);
}

/**
 * Makes a device that is still queued or provisioning end `failed` (control API). Returns false
 * when the device is past provisioning.
 */
export function injectFailure(device: DeviceRecord, now: number, reason: string): boolean {
  const state = stateAt(device, now);
  if (state !== 'queued' && state !== 'provisioning') return false;
  const provisioning = device.timeline.find((e) => e.state === 'provisioning');
  const start = provisioning?.at ?? now;
  const failAt = Math.max(now, start + DURATIONS.provisioning * DURATIONS.failAt);
  device.timeline = device.timeline.filter((e) => e.at <= now || e.state === 'provisioning');
  device.timeline.push({ state: 'failed', at: failAt });
  device.failureReason = reason;
  device.events = provisioningEvents(device.timeline, reason);
  return true;
}

// Milestones of a successful install, as fractions of the provisioning phase.
const MILESTONES: Array<[fraction: number, type: string, body: string]> = [
  [0, 'provisioning.101', 'Provisioning started'],
  [0.25, 'provisioning.104', 'Connected to magic install system'],
  [0.6, 'provisioning.106', 'Operating system packages installed'],
  [0.9, 'provisioning.109', 'Installation finished, rebooting server'],
];

/**
 * The provisioning events of a timeline made by `provisioningTimeline` (or changed by
 * `injectFailure`): milestones up to the end, then either completion or the failure `reason`.
 */
export function provisioningEvents(
  timeline: TimelineEntry[],
  reason?: string,
): DeviceEventRecord[] {
  const start = timeline.find((e) => e.state === 'provisioning')?.at ?? timeline[0]!.at;
  const failed = timeline.find((e) => e.state === 'failed');
  const end = failed?.at ?? start + DURATIONS.provisioning;
  const events: DeviceEventRecord[] = [
    {
      id: newId(),
      type: 'instance.queued',
      body: 'Device queued for provisioning',
      state: 'success',
      at: timeline[0]!.at,
    },
  ];
  for (const [fraction, type, body] of MILESTONES) {
    const at = start + fraction * DURATIONS.provisioning;
    if (failed && at >= end) break;
    events.push({ id: newId(), type, body, state: 'success', at });
  }
  events.push(
    failed
      ? {
          id: newId(),
          type: 'provisioning.failed',
          body: `Provisioning failed: ${reason ?? 'unknown error'}`,
          state: 'failed',
          at: end,
        }
      : {
          id: newId(),
          type: 'provisioning.110',
          body: 'Provisioning complete',
          state: 'success',
          at: end,
        },
  );
  return events;
}

/** True while the API refuses DELETE because provisioning is in progress. */
export function isProvisioning(state: DeviceState): boolean {
  return state === 'queued' || state === 'provisioning';
}

function dropFuture(device: DeviceRecord, now: number): TimelineEntry[] {
  device.timeline = device.timeline.filter((e) => e.at <= now);
  return device.timeline;
}

// Keeps the stored timeline short: only the entry in force matters for the past, plus the
// creation entry (it dates provisioning events).
function compact(device: DeviceRecord): void {
  const t = device.timeline;
  if (t.length <= 8) return;
  device.timeline = [t[0]!, ...t.slice(-6)];
}
