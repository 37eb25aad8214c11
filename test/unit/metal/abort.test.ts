import { describe, expect, it } from 'vitest';
import { isAbortError } from '../../../src/metal/index.js';
import { device, json, setup } from './fakes.js';

describe('abort signal', () => {
  it('cancels an in-flight request with an AbortError', async () => {
    const ac = new AbortController();
    const { client, requests } = setup(
      (req) =>
        new Promise<Response>((_, reject) => {
          req.signal?.addEventListener('abort', () => reject(req.signal?.reason));
        }),
      { signal: ac.signal },
    );
    const p = client.getDevice('d1');
    await new Promise((r) => setImmediate(r));
    expect(requests).toHaveLength(1);
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect((err as Error).name).toBe('AbortError');
  });

  it('cancels a retry wait and sends nothing more', async () => {
    const ac = new AbortController();
    const waits: number[] = [];
    // a sleep that never ends by itself: only the abort can end the wait
    const sleep = (ms: number) => {
      waits.push(ms);
      return new Promise<void>(() => {});
    };
    const { client, requests } = setup(() => json(429, {}, { 'retry-after': '30' }), {
      signal: ac.signal,
      sleep,
    });
    const p = client.getDevice('d1');
    for (let i = 0; i < 50 && waits.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(waits).toEqual([expect.any(Number)]);
    expect(waits[0]).toBeGreaterThanOrEqual(30_000);
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(requests).toHaveLength(1);
  });

  it('cancels a rate-limit wait', async () => {
    const ac = new AbortController();
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return new Promise<void>(() => {});
    };
    const { client, requests } = setup(() => json(200, device('d')), {
      signal: ac.signal,
      requestsPerSecond: 0.01,
      sleep,
    });
    await client.getDevice('d'); // uses the only token
    const p = client.getDevice('d'); // must wait 100 s for the next
    for (let i = 0; i < 50 && waits.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(waits).toEqual([100_000]);
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(1);
  });

  it('rejects at once when already aborted', async () => {
    const { client, requests } = setup(() => json(200, device('d')), {
      signal: AbortSignal.abort(),
    });
    await expect(client.getDevice('d')).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toHaveLength(0);
  });
});
