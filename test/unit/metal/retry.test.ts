import { describe, expect, it } from 'vitest';
import { MetalApiError, MetalTransportError } from '../../../src/metal/index.js';
import { retryDecision } from '../../../src/metal/transport.js';
import { device, empty, json, networkError, setup } from './fakes.js';

const createInput = {
  metro: 'da',
  plan: 'c3.small.x86',
  operating_system: 'flatcar_stable',
  hostname: 'c1-controller-0',
};

describe('retries', () => {
  it('retries 429 and waits at least Retry-After seconds', async () => {
    const { client, clock, requests } = setup([
      () => json(429, { error: 'slow down' }, { 'retry-after': '3' }),
      () => json(429, { error: 'slow down' }, { 'retry-after': '5' }),
      () => json(200, device('d1')),
    ]);
    const d = await client.getDevice('d1');
    expect(d.id).toBe('d1');
    expect(requests).toHaveLength(3);
    expect(clock.sleeps).toHaveLength(2);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(3000);
    expect(clock.sleeps[1]).toBeGreaterThanOrEqual(5000);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(3000);
    expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(5000);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const { client, clock, requests } = setup([
      (req) => json(429, {}, { 'retry-after': new Date(req.at + 8000).toUTCString() }),
      () => json(200, device('d1')),
    ]);
    await client.getDevice('d1');
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(8000);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(8000);
  });

  it('honours X-RateLimit-Reset (Unix seconds)', async () => {
    const { client, clock, requests } = setup([
      (req) =>
        json(
          429,
          { error: 'rate limited' },
          { 'x-ratelimit-reset': String(req.at / 1000 + 7), 'x-ratelimit-remaining': '0' },
        ),
      () => json(200, device('d1')),
    ]);
    await client.getDevice('d1');
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(7000);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(7000);
  });

  it('a 429 pauses the other requests of the client too', async () => {
    let first = true;
    const { client, requests } = setup((req) => {
      if (first) {
        first = false;
        return json(429, {}, { 'retry-after': '4' });
      }
      return json(200, device(req.url.pathname.split('/').pop()!));
    });
    const p1 = client.getDevice('a');
    await new Promise((r) => setImmediate(r));
    const p2 = client.getDevice('b');
    await Promise.all([p1, p2]);
    const t0 = requests[0]!.at;
    for (const r of requests.slice(1)) expect(r.at - t0).toBeGreaterThanOrEqual(4000);
  });

  it('a 429 also holds requests that had already booked their rate-limit slot', async () => {
    let first = true;
    const { client, requests } = setup(
      (req) => {
        if (first) {
          first = false;
          return json(429, {}, { 'retry-after': '4' });
        }
        return json(200, device(req.url.pathname.split('/').pop()!));
      },
      { requestsPerSecond: 10 },
    );
    // Five at once: the first goes now and gets the 429; the others booked slots 100-400 ms later.
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => client.getDevice(id)));
    const t0 = requests[0]!.at;
    expect(requests).toHaveLength(6);
    for (const r of requests.slice(1)) expect(r.at - t0).toBeGreaterThanOrEqual(4000);
    // After the hold they resume at the normal pace, not all at once.
    const after = requests.slice(1).map((r) => r.at);
    for (let i = 1; i < after.length; i++)
      expect(after[i]! - after[i - 1]!).toBeGreaterThanOrEqual(100);
  });

  it('retries a burst of 5xx with growing backoff, then succeeds', async () => {
    const { client, clock, requests } = setup(
      [
        () => json(500, { error: 'Oh snap' }),
        () => json(502, {}),
        () => json(503, {}),
        () => json(504, {}),
        () => json(200, device('d1')),
      ],
      { retryBaseMs: 1000, random: () => 0 },
    );
    await expect(client.getDevice('d1')).resolves.toMatchObject({ id: 'd1' });
    expect(requests).toHaveLength(5);
    // equal jitter with random=0: half of base·2^(n-1)
    expect(clock.sleeps).toEqual([500, 1000, 2000, 4000]);
  });

  it('caps one backoff wait at maxRetryWaitMs', async () => {
    const { client, clock } = setup(
      [() => json(503, {}), () => json(503, {}), () => json(503, {}), () => json(200, device('x'))],
      { retryBaseMs: 10_000, maxRetryWaitMs: 15_000, random: () => 0.999 },
    );
    await client.getDevice('x');
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(15_000);
  });

  it('does not retry 501', async () => {
    const { client, requests } = setup([() => json(501, { error: 'not implemented' })]);
    const err = await client.getDevice('d1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetalApiError);
    expect((err as MetalApiError).status).toBe(501);
    expect(requests).toHaveLength(1);
  });

  it('does not retry 4xx other than 429', async () => {
    const { client, requests } = setup([() => json(422, { errors: ['bad'] })]);
    await expect(client.updateDevice('d1', { locked: false })).rejects.toBeInstanceOf(
      MetalApiError,
    );
    expect(requests).toHaveLength(1);
  });

  it('retries GET on network errors', async () => {
    const { client, requests } = setup([
      () => json(200, device('d0')),
      () => Promise.reject(networkError('ECONNRESET', 'read ECONNRESET')),
      () => Promise.reject(networkError('ECONNREFUSED')),
      () => json(200, device('d1')),
    ]);
    await client.getDevice('d0');
    await expect(client.getDevice('d1')).resolves.toMatchObject({ id: 'd1' });
    expect(requests).toHaveLength(4);
  });

  it('retries DELETE on network errors; a 404 afterwards means absent', async () => {
    const { client, requests } = setup([
      () => Promise.reject(networkError('ECONNRESET', 'socket hang up')),
      () => json(404, { error: 'Not found' }),
    ]);
    await expect(client.deleteDevice('d1')).resolves.toBe('absent');
    expect(requests).toHaveLength(2);
  });

  it('does not resend device creation after a network error', async () => {
    const { client, requests } = setup([
      () => Promise.reject(networkError('ECONNRESET', 'read ECONNRESET')),
      () => json(201, device('d1')),
    ]);
    const err = await client.createDevice('p1', createInput).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetalTransportError);
    expect((err as MetalTransportError).code).toBe('ECONNRESET');
    expect((err as Error).message).toContain('POST /projects/p1/devices');
    expect((err as Error).message).toContain('127.0.0.1:1234');
    expect((err as Error).message).toContain('ECONNRESET');
    expect(requests).toHaveLength(1);
  });

  it('does not resend device creation after a timeout', async () => {
    const { client, requests } = setup(
      (req) =>
        new Promise<Response>((_, reject) => {
          req.signal?.addEventListener('abort', () => reject(req.signal?.reason));
        }),
      { timeoutMs: 20 },
    );
    const err = await client.createDevice('p1', createInput).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetalTransportError);
    expect((err as MetalTransportError).code).toBe('ETIMEDOUT');
    expect((err as Error).message).toMatch(/timed out after 20 ms/);
    expect(requests).toHaveLength(1);
  });

  it('retries device creation on 429 (the API did no work)', async () => {
    const { client, requests } = setup([
      () => json(429, { error: 'too many' }, { 'retry-after': '1' }),
      () => json(429, { error: 'too many' }, { 'retry-after': '1' }),
      () => json(201, device('d1')),
    ]);
    await expect(client.createDevice('p1', createInput)).resolves.toMatchObject({ id: 'd1' });
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.method === 'POST')).toBe(true);
  });

  it('does not resend device creation after any 5xx (it may have acted)', async () => {
    for (const status of [500, 502, 503, 504]) {
      const { client, requests } = setup([() => json(status, {}), () => json(201, device('d1'))]);
      await expect(client.createDevice('p1', createInput)).rejects.toMatchObject({
        status,
        attempts: 1,
      });
      expect(requests).toHaveLength(1);
    }
  });

  it('does not resend an IP reservation or a device action after a 500', async () => {
    const { client, requests } = setup([() => json(500, {}), () => json(201, {})]);
    await expect(
      client.createIPReservation('p1', { type: 'public_ipv4', quantity: 1, metro: 'da' }),
    ).rejects.toMatchObject({ status: 500 });
    expect(requests).toHaveLength(1);
    const action = setup([() => json(503, {}), () => empty(202)]);
    await expect(action.client.deviceAction('d1', 'power_on')).rejects.toMatchObject({
      status: 503,
    });
    expect(action.requests).toHaveLength(1);
  });

  it('still retries a 5xx on GET, DELETE and a POST marked safe', async () => {
    for (const status of [500, 502, 503, 504]) {
      expect(retryDecision(status, 'GET', false)).toBe(true);
      expect(retryDecision(status, 'DELETE', false)).toBe(true);
      expect(retryDecision(status, 'POST', true)).toBe(true);
      expect(retryDecision(status, 'POST', false)).toBe(false);
    }
    expect(retryDecision(429, 'POST', false)).toBe(true);
  });

  it('resends a POST marked safe (capacity check) after a network error', async () => {
    const { client, requests } = setup([
      () => Promise.reject(networkError('ECONNRESET')),
      () => json(200, { servers: [{ metro: 'da', plan: 'p', quantity: '2', available: true }] }),
    ]);
    await expect(
      client.checkMetroCapacity([{ metro: 'da', plan: 'p', quantity: 2 }]),
    ).resolves.toEqual([{ metro: 'da', plan: 'p', quantity: 2, available: true }]);
    expect(requests).toHaveLength(2);
  });

  it('throws the last API error with its messages when the budget is exhausted', async () => {
    const { client, requests } = setup(
      (_req, i) =>
        json(503, { errors: [`backend busy (${i})`, 'try later'] }, { 'x-request-id': `rq-${i}` }),
      { maxRetries: 3 },
    );
    const err = (await client.getDevice('d1').catch((e: unknown) => e)) as MetalApiError;
    expect(err).toBeInstanceOf(MetalApiError);
    expect(requests).toHaveLength(4);
    expect(err.status).toBe(503);
    expect(err.attempts).toBe(4);
    expect(err.errors).toEqual(['backend busy (3)', 'try later']);
    expect(err.requestId).toBe('rq-3');
    expect(err.message).toBe(
      'GET /devices/d1: 503 Service Unavailable: backend busy (3); try later (gave up after 4 attempts)',
    );
  });

  it('throws the last transport error when network retries are exhausted', async () => {
    let n = 0;
    const { client, requests } = setup(
      () => (n++ === 0 ? json(200, { metros: [] }) : Promise.reject(networkError('ECONNREFUSED'))),
      { maxRetries: 2 },
    );
    await client.listMetros();
    const err = (await client.listMetros().catch((e: unknown) => e)) as MetalTransportError;
    expect(err).toBeInstanceOf(MetalTransportError);
    expect(requests).toHaveLength(4);
    expect(err.attempts).toBe(3);
    expect(err.message).toMatch(
      /^GET \/locations\/metros: no answer from 127\.0\.0\.1:1234: .*ECONNREFUSED/,
    );
  });

  it('gives up at once when the server asks for a wait longer than maxRetryWaitMs', async () => {
    const { client, requests, clock } = setup(
      [() => json(429, { error: 'quota' }, { 'retry-after': '120' }), () => json(200, device('x'))],
      { maxRetryWaitMs: 60_000 },
    );
    const err = (await client.getDevice('x').catch((e: unknown) => e)) as MetalApiError;
    expect(err.status).toBe(429);
    expect(err.message).toContain('asked to wait 120 s');
    expect(requests).toHaveLength(1);
    expect(clock.sleeps).toHaveLength(0);
  });

  it('maxRetries 0 sends one request', async () => {
    const { client, requests } = setup(() => json(503, {}), { maxRetries: 0 });
    await expect(client.listPlans()).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(requests).toHaveLength(1);
  });

  it('accepts 202 with no body for actions', async () => {
    const { client, requests } = setup(() => empty(202));
    await client.deviceAction('d1', 'reboot');
    expect(requests[0]!.body).toBe('{"type":"reboot"}');
  });

  it('gives up after 2 attempts when the endpoint refuses before it ever answered', async () => {
    const { client, requests, lines } = setup(() => Promise.reject(networkError('ECONNREFUSED')), {
      maxRetries: 6,
    });
    const err = (await client.listMetros().catch((e: unknown) => e)) as MetalTransportError;
    expect(err).toBeInstanceOf(MetalTransportError);
    expect(requests).toHaveLength(2);
    expect(err.attempts).toBe(2);
    expect(lines.filter((l) => /retry 1\/1 of GET/.test(l))).toHaveLength(1);
  });

  it('keeps the full budget for ECONNREFUSED once the endpoint has answered, logging each retry', async () => {
    let n = 0;
    const { client, requests, lines } = setup(
      () => (n++ === 0 ? json(200, { metros: [] }) : Promise.reject(networkError('ECONNREFUSED'))),
      { maxRetries: 6 },
    );
    await client.listMetros();
    await expect(client.listMetros()).rejects.toBeInstanceOf(MetalTransportError);
    expect(requests).toHaveLength(1 + 7);
    expect(lines.filter((l) => /retry \d\/6 of GET/.test(l))).toHaveLength(6);
  });

  it('never retries fetch\'s "bad port"', async () => {
    const { client, requests } = setup(() =>
      Promise.reject(new TypeError('fetch failed', { cause: new Error('bad port') })),
    );
    const err = (await client.listMetros().catch((e: unknown) => e)) as MetalTransportError;
    expect(err).toBeInstanceOf(MetalTransportError);
    expect(requests).toHaveLength(1);
    expect(err.message).toContain('bad port');
  });
});
