import { describe, expect, it } from 'vitest';
import { Clock, type TimeSource } from '../../../src/emulator/clock.js';
import {
  actionRefusal,
  injectFailure,
  provisioningEvents,
  provisioningPercentage,
  provisioningTimeline,
  scheduleAction,
  scheduleDelete,
  stateAt,
} from '../../../src/emulator/lifecycle.js';
import type { DeviceRecord } from '../../../src/emulator/state.js';

/** A controllable real-time source. */
function fakeTime(start = 1_700_000_000_000): TimeSource & { tick(ms: number): void } {
  let wall = start;
  let mono = 0;
  return {
    wallMs: () => wall,
    monoMs: () => mono,
    tick(ms: number) {
      wall += ms;
      mono += ms;
    },
  };
}

function device(createdAt: number, fails = false): DeviceRecord {
  const timeline = provisioningTimeline(createdAt, fails);
  return {
    id: 'd',
    projectId: 'p',
    hostname: 'h',
    plan: 'c3.small.x86',
    metro: 'sv',
    facility: 'sv15',
    operatingSystem: 'flatcar_stable',
    tags: [],
    userdata: '',
    customdata: {},
    billingCycle: 'hourly',
    locked: false,
    alwaysPxe: false,
    networkFrozen: false,
    spotInstance: false,
    createdAt,
    updatedAt: createdAt,
    timeline,
    events: provisioningEvents(timeline, fails ? 'broken' : undefined),
    ports: [],
    rootPassword: 'x',
    switchUuid: 'x',
  };
}

describe('clock', () => {
  it('runs at the time scale and advances on demand', () => {
    const t = fakeTime();
    const clock = new Clock({ timeScale: 10 }, t);
    const start = clock.now();
    t.tick(100);
    expect(clock.now() - start).toBe(1000);
    clock.advance(5);
    expect(clock.now() - start).toBe(6000);
    clock.setTimeScale(1);
    t.tick(100);
    expect(clock.now() - start).toBe(6100);
  });

  it('persists as an offset: downtime counts at real speed', () => {
    const t = fakeTime();
    const clock = new Clock({}, t);
    clock.advance(30);
    const offset = clock.offsetMs();
    expect(offset).toBe(30_000);
    t.tick(60_000); // the emulator is down for a minute
    const restarted = new Clock({ offsetMs: offset }, t);
    expect(restarted.now()).toBe(t.wallMs() + 30_000);
  });

  it('rejects nonsense scales', () => {
    expect(() => new Clock({ timeScale: 0 })).toThrow(RangeError);
    expect(() => new Clock().advance(-1)).toThrow(RangeError);
  });
});

describe('device lifecycle (computed from timestamps)', () => {
  it('goes queued -> provisioning -> active within 5 s at time scale 1', () => {
    const t = fakeTime();
    const clock = new Clock({}, t);
    const d = device(clock.now());
    expect(stateAt(d, clock.now())).toBe('queued');
    t.tick(1000);
    expect(stateAt(d, clock.now())).toBe('provisioning');
    expect(provisioningPercentage(d, clock.now())).toBe(0);
    t.tick(1500);
    expect(provisioningPercentage(d, clock.now())).toBe(50);
    t.tick(1500);
    expect(stateAt(d, clock.now())).toBe('active');
    expect(provisioningPercentage(d, clock.now())).toBeUndefined();
  });

  it('is ten times faster at time scale 10', () => {
    const t = fakeTime();
    const clock = new Clock({ timeScale: 10 }, t);
    const d = device(clock.now());
    t.tick(399);
    expect(stateAt(d, clock.now())).toBe('provisioning');
    t.tick(1);
    expect(stateAt(d, clock.now())).toBe('active');
  });

  it('reaches the same state whatever happened in between (a restart changes nothing)', () => {
    const d = device(0);
    const copy = JSON.parse(JSON.stringify(d)) as DeviceRecord;
    expect(stateAt(copy, 10_000)).toBe(stateAt(d, 10_000));
    expect(stateAt(copy, 10_000)).toBe('active');
  });

  it('ends failed with the reason in the provisioning events', () => {
    const d = device(0, true);
    expect(stateAt(d, 2000)).toBe('provisioning');
    expect(stateAt(d, 3000)).toBe('failed');
    const last = d.events.at(-1)!;
    expect(last).toMatchObject({ type: 'provisioning.failed', state: 'failed' });
    expect(last.body).toContain('broken');
  });

  it('fails a device that is still provisioning when asked to', () => {
    const d = device(0);
    expect(injectFailure(d, 1200, 'disk on fire')).toBe(true);
    expect(stateAt(d, 10_000)).toBe('failed');
    expect(d.events.at(-1)!.body).toContain('disk on fire');
    const active = device(0);
    expect(injectFailure(active, 10_000, 'late')).toBe(false);
  });

  it('runs actions: power off/on, reboot, reinstall', () => {
    const d = device(0);
    const now = 5000;
    expect(actionRefusal(d, 'power_on', now)).toBe('Device is already powered on');
    expect(actionRefusal(d, 'power_off', 500)).toMatch(/while it is queued/);
    scheduleAction(d, 'power_off', now);
    expect(stateAt(d, now)).toBe('powering_off');
    expect(stateAt(d, now + 2000)).toBe('inactive');
    expect(actionRefusal(d, 'reboot', now + 2000)).toBeDefined();
    scheduleAction(d, 'power_on', now + 2000);
    expect(stateAt(d, now + 4000)).toBe('active');
    scheduleAction(d, 'reboot', now + 4000);
    expect(stateAt(d, now + 5000)).toBe('powering_on');
    expect(stateAt(d, now + 6000)).toBe('active');
    scheduleAction(d, 'reinstall', now + 6000);
    expect(stateAt(d, now + 7000)).toBe('reinstalling');
    expect(stateAt(d, now + 9000)).toBe('active');
    d.locked = true;
    expect(actionRefusal(d, 'reinstall', now + 9000)).toMatch(/locked/);
  });

  it('deprovisions then is deleted', () => {
    const d = device(0);
    scheduleDelete(d, 5000);
    expect(stateAt(d, 5000)).toBe('deprovisioning');
    expect(stateAt(d, 7000)).toBe('deleted');
  });
});
