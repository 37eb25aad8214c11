import { describe, expect, it } from 'vitest';
import { FaultInjector, parseFaultRule } from '../../../src/emulator/faults.js';
import { RateLimiter } from '../../../src/emulator/ratelimit.js';
import { RequestLog } from '../../../src/emulator/requestlog.js';

describe('rate limiter (token bucket)', () => {
  it('allows a burst of perSecond, then 429s with a Retry-After, then refills', () => {
    let now = 1_000_000;
    const rl = new RateLimiter(2, () => now);
    expect(rl.take()).toMatchObject({ allowed: true, remaining: 1, limit: 2 });
    expect(rl.take()).toMatchObject({ allowed: true, remaining: 0 });
    expect(rl.take()).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    now += 500;
    expect(rl.take()).toMatchObject({ allowed: true });
  });

  it('is off with null', () => {
    const rl = new RateLimiter(null);
    expect(rl.take()).toBeUndefined();
    rl.set(1);
    expect(rl.take()?.allowed).toBe(true);
    rl.set(null);
    expect(rl.take()).toBeUndefined();
  });
});

describe('fault rules', () => {
  it('validates rules', () => {
    expect(parseFaultRule({ status: 503 })).toEqual({ status: 503, times: 1 });
    expect(() => parseFaultRule({ status: 404 })).toThrow(/status/);
    expect(() => parseFaultRule({ times: 2 })).toThrow(/status, reset or latencyMs/);
    expect(() => parseFaultRule({ status: 500, route: '/x', pathPrefix: '/y' })).toThrow(/either/);
    expect(() => parseFaultRule({ status: 500, bogus: 1 })).toThrow(/bogus/);
  });

  it('matches by method, route (prefix optional) or path prefix, for `times` requests', () => {
    const f = new FaultInjector();
    f.add(parseFaultRule({ method: 'post', route: '/devices/:id/actions', status: 500, times: 2 }));
    f.add(parseFaultRule({ pathPrefix: '/projects', status: 429, retryAfterSeconds: 3 }));
    expect(
      f.take('GET', '/metal/v1/devices/:id/actions', '/metal/v1/devices/x/actions'),
    ).toBeUndefined();
    expect(
      f.take('POST', '/metal/v1/devices/:id/actions', '/metal/v1/devices/x/actions')?.status,
    ).toBe(500);
    expect(
      f.take('POST', '/metal/v1/devices/:id/actions', '/metal/v1/devices/x/actions')?.status,
    ).toBe(500);
    expect(
      f.take('POST', '/metal/v1/devices/:id/actions', '/metal/v1/devices/x/actions'),
    ).toBeUndefined();
    expect(f.take('GET', '/metal/v1/projects/:id', '/metal/v1/projects/p')).toMatchObject({
      status: 429,
      retryAfterSeconds: 3,
    });
    expect(f.list()).toEqual([]);
  });
});

describe('request log', () => {
  it('keeps entries after a sequence number, a summary and the last body per status', () => {
    const log = new RequestLog(3);
    const e = { at: 'now', path: '/p', durationMs: 1 };
    log.add({ ...e, method: 'GET', route: '/a', status: 200 }, '{"n":1}');
    log.add({ ...e, method: 'GET', route: '/a', status: 200 }, '{"n":2}');
    log.add({ ...e, method: 'POST', route: '/a', status: 204 }, '');
    log.add({ ...e, method: 'GET', route: '/b', status: 404 }, 'not json');
    expect(log.since(0).map((x) => x.seq)).toEqual([2, 3, 4]); // capacity 3
    expect(log.since(3).map((x) => x.seq)).toEqual([4]);
    expect(log.summary().routes[0]).toEqual({
      method: 'GET',
      route: '/a',
      count: 1,
      statuses: { 200: 1 },
    });
    expect(log.responses()).toEqual([
      { method: 'GET', route: '/a', status: 200, body: { n: 2 } },
      { method: 'POST', route: '/a', status: 204, body: null },
      { method: 'GET', route: '/b', status: 404, body: 'not json' },
    ]);
  });
});
