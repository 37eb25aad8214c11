import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/metal/index.js';
import { device, json, setup } from './fakes.js';

/** Largest number of request start times inside any half-open window [t, t + windowMs). */
function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[j]! <= sorted[i]! - windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('client-side rate limit', () => {
  it('keeps 30 parallel requests at or under 10 per second (default burst)', async () => {
    const { client, requests } = setup(
      (req) => json(200, device(req.url.pathname.split('/').pop()!)),
      {
        requestsPerSecond: 10,
      },
    );
    const ids = Array.from({ length: 30 }, (_, i) => `d${i}`);
    const got = await Promise.all(ids.map((id) => client.getDevice(id)));
    expect(got.map((d) => d.id)).toEqual(ids);
    const times = requests.map((r) => r.at);
    expect(times).toHaveLength(30);
    expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(10);
    // and it does not crawl either: 30 requests at 10/s take about 2.9 s of virtual time
    const span = Math.max(...times) - Math.min(...times);
    expect(span).toBeGreaterThanOrEqual(2900);
    expect(span).toBeLessThan(3100);
  });

  it('allows a burst, then paces', async () => {
    const { client, requests } = setup(() => json(200, { metros: [] }), {
      requestsPerSecond: 5,
      burst: 3,
    });
    await Promise.all(Array.from({ length: 13 }, () => client.listMetros()));
    const times = requests.map((r) => r.at - requests[0]!.at).sort((a, b) => a - b);
    expect(times.slice(0, 3)).toEqual([0, 0, 0]);
    expect(times.slice(3, 6)).toEqual([200, 400, 600]);
    // any 1 s window: at most burst + rate - 1
    expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(3 + 5 - 1);
    expect(maxInWindow(times, 2000)).toBeLessThanOrEqual(3 + 10 - 1);
  });

  it('is shared by sequential and parallel callers of one client', async () => {
    const { client, requests } = setup(() => json(200, { plans: [] }), { requestsPerSecond: 2 });
    await client.listPlans();
    await Promise.all([client.listPlans(), client.listPlans()]);
    await client.listPlans();
    const times = requests.map((r) => r.at - requests[0]!.at);
    expect(times).toEqual([0, 500, 1000, 1500]);
  });

  it('TokenBucket books slots 1/rate apart', () => {
    let now = 0;
    const b = new TokenBucket(4, 2, () => now);
    expect([b.reserve(), b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 250, 500]);
    now = 10_000; // idle long enough: the burst is back
    expect([b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 250]);
    b.holdUntil(now + 3000);
    expect(b.reserve()).toBe(3000);
    expect(b.reserve()).toBe(3250);
    expect(() => new TokenBucket(0, 1, () => 0)).toThrow(RangeError);
    expect(() => new TokenBucket(1, 0, () => 0)).toThrow(RangeError);
  });
});
