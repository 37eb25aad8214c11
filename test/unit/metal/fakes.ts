/**
 * Test doubles for the Metal client: a virtual clock (sleep/now) and a scriptable fetch.
 */
import { MetalClient, type MetalClientOptions } from '../../../src/metal/index.js';

/**
 * Virtual time. `sleep(ms)` registers a timer; timers fire one at a time in time order, each
 * after the event loop has gone idle for a few turns, so every woken caller runs to its next
 * await before time moves on.
 */
export class FakeClock {
  t: number;
  /** Every duration passed to `sleep`, in call order. */
  readonly sleeps: number[] = [];
  private timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
  private seq = 0;
  private scheduled = false;

  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.t = start;
  }

  now = (): number => this.t;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      this.sleeps.push(ms);
      const timer = { at: this.t + ms, seq: this.seq++, resolve };
      this.timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.timers = this.timers.filter((x) => x !== timer);
          reject(signal.reason);
        },
        { once: true },
      );
      this.schedule();
    });

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const hop = (n: number): void => {
      if (n > 0) {
        setImmediate(() => hop(n - 1));
        return;
      }
      this.scheduled = false;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift();
      if (!next) return;
      this.t = Math.max(this.t, next.at);
      next.resolve();
      if (this.timers.length > 0) this.schedule();
    };
    hop(4);
  }
}

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  /** Virtual time at which fetch was called. */
  at: number;
  signal: AbortSignal | undefined;
}

export type Handler = (req: RecordedRequest, index: number) => Response | Promise<Response>;

/** A fetch that records requests and answers with `handler` (or the next of `handlers`). */
export function fakeFetch(clock: FakeClock, handler: Handler | Handler[]) {
  const requests: RecordedRequest[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const req: RecordedRequest = {
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
      at: clock.now(),
      signal: init?.signal ?? undefined,
    };
    const index = requests.length;
    requests.push(req);
    const h = Array.isArray(handler) ? handler[Math.min(index, handler.length - 1)] : handler;
    if (!h) throw new Error('no handler');
    return h(req, index);
  }) as typeof globalThis.fetch;
  return { fetch: fetchFn, requests };
}

/** A JSON response. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function empty(status: number, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

/** What undici throws when the connection fails. */
export function networkError(code: string, message = `connect ${code} 127.0.0.1:1234`): TypeError {
  const cause = Object.assign(new Error(message), { code });
  return new TypeError('fetch failed', { cause });
}

export const TOKEN = 'sekr1t-TOKEN-7f3a9c';
export const BASE = 'http://127.0.0.1:1234/metal/v1';

/** A client on a fake clock and fetch; fast retries unless overridden. */
export function setup(handler: Handler | Handler[], opts: Partial<MetalClientOptions> = {}) {
  const clock = new FakeClock();
  const { fetch, requests } = fakeFetch(clock, handler);
  const lines: string[] = [];
  const client = new MetalClient({
    baseUrl: BASE,
    token: TOKEN,
    requestsPerSecond: 1000,
    fetch,
    sleep: clock.sleep,
    now: clock.now,
    random: () => 0.5,
    logger: { debug: (m) => lines.push(m) },
    ...opts,
  });
  return { client, clock, requests, lines };
}

/** A device object with the fields the tests need. */
export function device(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    hostname: `host-${id}`,
    state: 'active',
    tags: [],
    plan: { slug: 'c3.small.x86' },
    operating_system: { slug: 'flatcar_stable' },
    ip_addresses: [],
    ...extra,
  };
}
