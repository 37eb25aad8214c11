/**
 * Waiting on device state by listing the cluster's devices by tag once per poll round (never one
 * GET per device per round), so waiting for N devices costs one list call per round.
 */
import type { MetalApi } from '../../metal/api.js';
import type { Device } from '../../metal/types.js';
import { LokoError } from '../../util/errors.js';
import type { ProgressReporter } from '../../tasks/phase.js';
import { observe } from './observe.js';
import { pollUntil, type PollOptions } from './poll.js';

/** Where to list and how to poll. */
export interface WaitTarget {
  api: MetalApi;
  projectId: string;
  /** The cluster tag. */
  tag: string;
  poll: PollOptions;
  progress: ProgressReporter;
}

/** A device ended `failed`; the message names each hostname and the reason Metal gave. */
export class DeviceFailedError extends LokoError {
  readonly failures: Array<{ hostname: string; deviceId: string; reason: string }>;
  constructor(failures: Array<{ hostname: string; deviceId: string; reason: string }>) {
    const lines = failures.map((f) => `${f.hostname} (${f.deviceId}): ${f.reason}`);
    super(
      failures.length === 1
        ? `device ${lines[0]} failed to provision`
        : `${failures.length} devices failed to provision:\n  ${lines.join('\n  ')}`,
      { hint: 'Run `loko cluster apply` again: a failed device is replaced by a new one.' },
    );
    this.name = 'DeviceFailedError';
    this.failures = failures;
  }
}

/** States that still move toward `active` on their own. */
const PENDING = new Set(['queued', 'provisioning', 'reinstalling', 'powering_on']);
/** Powered off (or powering off): it stays so until someone powers it on; waiting cannot help. */
const STOPPED = new Set(['inactive', 'powering_off']);
const GONE = new Set(['deprovisioning', 'deleted']);

/** Devices that are powered off and will not become active by themselves. */
export class DeviceStoppedError extends LokoError {
  readonly devices: Array<{ hostname: string; deviceId: string; state: string }>;
  constructor(devices: Array<{ hostname: string; deviceId: string; state: string }>) {
    const names = devices.map((d) => `${d.hostname} (${d.deviceId}) is ${d.state}`);
    const power = devices
      .map((d) => `POST /devices/${d.deviceId}/actions {"type":"power_on"}`)
      .join(', ');
    super(
      devices.length === 1
        ? `device ${names[0]} and will not become active by itself`
        : `${devices.length} devices will not become active by themselves: ${names.join(', ')}`,
      {
        hint: `Power ${devices.length === 1 ? 'it' : 'them'} on (${power}, or from the Metal console), then run \`loko cluster apply\` again.`,
      },
    );
    this.name = 'DeviceStoppedError';
    this.devices = devices;
  }
}

/** Rounds a created device may be missing from the list before we call it lost. */
const MISSING_ROUNDS = 5;

/**
 * Waits until every hostname in `hostnames` has an `active` device. Resolves those devices by
 * hostname. Rejects with {@link DeviceFailedError} as soon as a device is `failed`, with
 * {@link DeviceStoppedError} as soon as one is powered off (`inactive`, `powering_off`), with a
 * LokoError when a device stays missing or in an unexpected state past the timeout, and with
 * InterruptedError on cancellation.
 */
export async function waitForActive(
  t: WaitTarget,
  hostnames: string[],
): Promise<Map<string, Device>> {
  const missing = new Map<string, number>();
  const lastDetail = new Map<string, string>();
  let latest = new Map<string, Device>();

  return pollUntil(
    t.poll,
    async () => {
      const { devices } = await observe(t.api, t.projectId, t.tag);
      latest = pickByHostname(devices);
      const failed: Device[] = [];
      const stopped: Device[] = [];
      let active = 0;
      for (const h of hostnames) {
        const d = latest.get(h);
        if (!d) {
          const n = (missing.get(h) ?? 0) + 1;
          missing.set(h, n);
          if (n > MISSING_ROUNDS) {
            throw new LokoError(`device ${h} is no longer listed by the Metal API`, {
              hint: 'It was deleted outside loko. Run `loko cluster apply` again to create it.',
            });
          }
          report(h, 'running', 'waiting to be listed');
          continue;
        }
        missing.delete(h);
        if (d.state === 'active') {
          active++;
          report(h, 'done', 'active');
        } else if (d.state === 'failed') {
          failed.push(d);
          report(h, 'failed', 'failed');
        } else if (STOPPED.has(d.state)) {
          stopped.push(d);
          report(h, 'failed', d.state);
        } else {
          const pct = d.provisioning_percentage;
          report(
            h,
            'running',
            pct !== undefined && PENDING.has(d.state) ? `${d.state} ${Math.round(pct)}%` : d.state,
          );
        }
      }
      t.progress.status(`${active}/${hostnames.length} active`);
      if (failed.length > 0)
        throw new DeviceFailedError(await Promise.all(failed.map((d) => failure(t.api, d))));
      if (stopped.length > 0)
        throw new DeviceStoppedError(
          stopped.map((d) => ({ hostname: d.hostname, deviceId: d.id, state: d.state })),
        );
      return active === hostnames.length ? latest : undefined;
    },
    () => {
      const waiting = hostnames
        .filter((h) => latest.get(h)?.state !== 'active')
        .map((h) => `${h} (${latest.get(h)?.state ?? 'not listed'})`);
      return new LokoError(
        `timed out after ${Math.round(t.poll.timeoutMs / 1000)} s waiting for devices to become active: ${waiting.join(', ')}`,
        { hint: 'Run `loko cluster apply` again to keep waiting; it creates nothing twice.' },
      );
    },
  );

  function report(h: string, state: 'running' | 'done' | 'failed', detail: string): void {
    if (lastDetail.get(h) === `${state}:${detail}`) return;
    lastDetail.set(h, `${state}:${detail}`);
    t.progress.item(h, state, detail);
  }
}

/** The live device per hostname: not gone, preferring active over pending over failed. */
export function pickByHostname(devices: Device[]): Map<string, Device> {
  const rank = (d: Device): number => (d.state === 'active' ? 0 : d.state === 'failed' ? 2 : 1);
  const out = new Map<string, Device>();
  for (const d of devices) {
    if (GONE.has(d.state)) continue;
    const cur = out.get(d.hostname);
    if (!cur || rank(d) < rank(cur)) out.set(d.hostname, d);
  }
  return out;
}

/** Event shape of `provisioning_events` (Metal `Event`); not in our wire types because only failures read it. */
interface ProvisioningEvent {
  type?: string;
  state?: string;
  body?: string;
  interpolated?: string;
  created_at?: string;
}

async function failure(
  api: MetalApi,
  d: Device,
): Promise<{ hostname: string; deviceId: string; reason: string }> {
  let reason = failureReason(d);
  if (!reason) {
    // The list may omit events; one GET for a failed device (not a poll) is worth the reason.
    try {
      reason = failureReason(await api.getDevice(d.id));
    } catch {
      // Failed devices may move to an internal project and answer 403/404; keep the generic reason.
    }
  }
  return {
    hostname: d.hostname,
    deviceId: d.id,
    reason: reason ?? 'Metal reported state "failed" without a reason',
  };
}

/** The reason Metal gives for a failed device: the last failure event, else the last event, else the description. */
export function failureReason(d: Device): string | undefined {
  const events = (d as Device & { provisioning_events?: ProvisioningEvent[] }).provisioning_events;
  if (Array.isArray(events) && events.length > 0) {
    const text = (e: ProvisioningEvent): string | undefined =>
      e.interpolated || e.body || undefined;
    const failedEvents = events.filter(
      (e) => /fail|error/i.test(`${e.type ?? ''} ${e.state ?? ''}`) && text(e),
    );
    const pick = failedEvents.at(-1) ?? [...events].reverse().find((e) => text(e));
    if (pick) return text(pick);
  }
  return d.description || undefined;
}
