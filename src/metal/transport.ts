/**
 * The one HTTP transport of the Metal client (DESIGN.md §4, reference/metal-api.md §1):
 * `X-Auth-Token` auth, JSON bodies, `include`/`exclude`, pagination over `meta`, per-request
 * timeouts, retries with exponential backoff + jitter that honour `Retry-After` and
 * `X-RateLimit-Reset`, a client-side rate limit shared by all requests, typed errors, and a debug
 * log with the token redacted.
 *
 * Retry policy (one place, `retryDecision`):
 * - 429 is retried for every method: the API refused before doing any work.
 * - 5xx except 501 is retried for GET, PUT and DELETE and for a POST the caller marked safe. A
 *   POST that is not marked safe (device create, IP reservation and assignment, actions) is never
 *   resent after a 5xx: a 500/503 may come after the backend acted, and a 502/504 may hide an
 *   answer lost behind the gateway. The caller settles it by re-reading state (the executor
 *   re-lists by tag and creates again only when nothing was made). A PATCH is not retried on
 *   502/504 for the same reason.
 * - No answer at all (ECONNRESET, ECONNREFUSED, timeouts, ...) is retried only for idempotent
 *   methods (GET, PUT, DELETE) and for a POST the caller marked `retryPostOnNoAnswer`. Device
 *   creation is never retried then: a lost response may have created the device; the caller
 *   reconciles by listing devices by tag. ECONNREFUSED before the endpoint ever answered this
 *   client gets one retry only (a wrong URL or a server not running should not take half a
 *   minute); fetch's "bad port" is never retried. Every retry is logged (debug) as `retry n/N`.
 * - `maxRetries` retries after the first request; when exhausted, the last error is thrown with
 *   `attempts` set. A server-requested wait longer than `maxRetryWaitMs` is not shortened: the
 *   client gives up at once instead.
 */
import { LokoError } from '../util/errors.js';
import { MetalApiError, MetalTransportError, abortError, statusText } from './errors.js';
import { TokenBucket } from './rate-limit.js';
import type { Meta } from './types.js';
import { lokoVersion } from './version.js';

export interface MetalLogger {
  debug(msg: string): void;
}

export interface MetalClientOptions {
  /** API root including `/metal/v1`, e.g. `http://127.0.0.1:1234/metal/v1` (`METAL_API_URL`). */
  baseUrl: string;
  /** User or project API key (`METAL_AUTH_TOKEN`); sent as `X-Auth-Token`, never logged. */
  token: string;
  /** Client-side rate limit shared by all requests of this client; default 10. */
  requestsPerSecond?: number;
  /** Requests that may start at once before pacing applies; default 1 (no burst). */
  burst?: number;
  /** Retries after the first request (429, 5xx except 501, network errors); default 6. */
  maxRetries?: number;
  /** Cap of one backoff wait; a longer server-requested wait makes the client give up. Default 60000. */
  maxRetryWaitMs?: number;
  /** First backoff step; doubles per retry (with jitter). Default 500. */
  retryBaseMs?: number;
  /** Per-request timeout (connect to last body byte); default 30000. */
  timeoutMs?: number;
  /** Default `loko/<version>`. */
  userAgent?: string;
  /** Gets one line per request, response and retry; the token is redacted, bodies are not logged. */
  logger?: MetalLogger;
  /** Aborting cancels waits and in-flight requests; calls reject with an `AbortError`. */
  signal?: AbortSignal;
  /** Unit tests only. */
  fetch?: typeof fetch;
  /** Unit tests only: the clock used for backoff, rate limiting and header dates. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
  /** Unit tests only: jitter source in [0, 1). */
  random?: () => number;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Arrays are sent as repeated keys (`types=a&types=b`, OpenAPI form/explode). */
export type QueryValue =
  string | number | boolean | readonly (string | number)[] | null | undefined;

export interface RequestSpec {
  method: HttpMethod;
  /** Path below the base URL, starting with `/`; path segments already encoded. */
  path: string;
  query?: Readonly<Record<string, QueryValue>>;
  /** Serialised with `JSON.stringify` (explicit `false` kept, `undefined` fields dropped). */
  body?: unknown;
  /** `include=a,b` (comma-joined, OpenAPI form/explode=false). */
  include?: readonly string[];
  exclude?: readonly string[];
  /** POST only: resending is harmless when no answer arrived (read-only or naturally idempotent). */
  retryPostOnNoAnswer?: boolean;
  signal?: AbortSignal;
}

export interface MetalResponse<T> {
  status: number;
  /** Parsed JSON, or `undefined` for an empty body (204). */
  body: T | undefined;
  headers: Headers;
  requestId: string | undefined;
}

const DEFAULTS = {
  requestsPerSecond: 10,
  burst: 1,
  maxRetries: 6,
  maxRetryWaitMs: 60_000,
  retryBaseMs: 500,
  timeoutMs: 30_000,
} as const;

/** Page size the client asks for on paginated lists. */
export const PER_PAGE = 100;

/** Network error codes worth another attempt (the request may not have reached the API). */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Header values must be visible ASCII; anything else would make fetch echo the value. */
const TOKEN_RE = /^[\x21-\x7e]+$/;

export class MetalTransport {
  readonly baseUrl: string;
  /** `host:port` of the API, for messages. */
  readonly hostPort: string;
  private readonly token: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleepImpl: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly bucket: TokenBucket;
  private readonly maxRetries: number;
  private readonly maxRetryWaitMs: number;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  private readonly logger: MetalLogger | undefined;
  private readonly signal: AbortSignal | undefined;
  /** Whether the endpoint ever answered (any HTTP status); decides the ECONNREFUSED budget. */
  private answered = false;

  constructor(opts: MetalClientOptions) {
    const token = (opts.token ?? '').trim();
    if (token === '') {
      throw new LokoError('the Metal API token is empty', {
        hint: 'Set METAL_AUTH_TOKEN to a user or project API key.',
      });
    }
    if (!TOKEN_RE.test(token)) {
      throw new LokoError(
        'the Metal API token contains characters that cannot be sent in an HTTP header (whitespace, control or non-ASCII characters)',
        { hint: 'Check METAL_AUTH_TOKEN: an API key is a single word of letters and digits.' },
      );
    }
    this.token = token;
    let url: URL;
    try {
      url = new URL(opts.baseUrl);
    } catch {
      throw new LokoError(`Metal API URL "${opts.baseUrl}" is not a valid URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new LokoError(`Metal API URL "${opts.baseUrl}" must use http or https`);
    }
    this.baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.hostPort = url.port ? url.host : `${url.hostname}:${url.protocol === 'https:' ? 443 : 80}`;
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
    this.sleepImpl = opts.sleep ?? realSleep;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.bucket = new TokenBucket(
      opts.requestsPerSecond ?? DEFAULTS.requestsPerSecond,
      opts.burst ?? DEFAULTS.burst,
      this.now,
    );
    this.maxRetries = Math.max(0, Math.floor(opts.maxRetries ?? DEFAULTS.maxRetries));
    this.maxRetryWaitMs = opts.maxRetryWaitMs ?? DEFAULTS.maxRetryWaitMs;
    this.retryBaseMs = opts.retryBaseMs ?? DEFAULTS.retryBaseMs;
    this.timeoutMs = opts.timeoutMs ?? DEFAULTS.timeoutMs;
    this.userAgent = opts.userAgent ?? `loko/${lokoVersion()}`;
    this.logger = opts.logger;
    this.signal = opts.signal;
  }

  /** Replaces every occurrence of the token (raw or URL-encoded) in `text`. */
  redact(text: string): string {
    let out = text.split(this.token).join('[REDACTED]');
    const encoded = encodeURIComponent(this.token);
    if (encoded !== this.token) out = out.split(encoded).join('[REDACTED]');
    return out;
  }

  /**
   * One API call with rate limiting and retries. Resolves for 2xx; rejects with `MetalApiError`
   * for any other status, `MetalTransportError` when no answer came, or an `AbortError`.
   */
  async request<T>(spec: RequestSpec): Promise<MetalResponse<T>> {
    const signal = combineSignals(this.signal, spec.signal);
    const url = this.buildUrl(spec);
    const logUrl = this.redact(url);
    const apiPath = this.redact(spec.path);
    const call = `${spec.method} ${apiPath}`;
    const idempotent = spec.method === 'GET' || spec.method === 'PUT' || spec.method === 'DELETE';
    const retryNoAnswer =
      idempotent || (spec.method === 'POST' && spec.retryPostOnNoAnswer === true);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string> = {
      'X-Auth-Token': this.token,
      Accept: 'application/json',
      'User-Agent': this.userAgent,
    };
    // Only with a body: servers (fastify) reject an empty body declared as JSON.
    if (body !== undefined) headers['Content-Type'] = 'application/json';

    for (let attempt = 1; ; attempt++) {
      await this.acquireSlot(signal);
      this.log(`-> ${spec.method} ${logUrl}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
      const started = this.now();

      const timeout = new AbortController();
      const timer = setTimeout(
        () => timeout.abort(new DOMException('timeout', 'TimeoutError')),
        this.timeoutMs,
      );
      timer.unref?.();
      const fetchSignal = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;

      let res: Response;
      let text: string;
      try {
        res = await this.fetchImpl(url, {
          method: spec.method,
          headers,
          body,
          signal: fetchSignal,
          // A redirect would forward X-Auth-Token to wherever it points; treat it as an error.
          redirect: 'manual',
        });
        text = await res.text();
      } catch (err) {
        if (signal?.aborted) {
          this.log(`x ${call}: aborted`);
          throw abortError(signal);
        }
        const net = describeNetworkError(err, timeout.signal.aborted, this.timeoutMs);
        // A refused connection before the endpoint ever answered is most likely a wrong URL or
        // a server that is not running: one more try, not the whole budget.
        const budget =
          net.code === 'ECONNREFUSED' && !this.answered
            ? Math.min(1, this.maxRetries)
            : this.maxRetries;
        const retry = retryNoAnswer && net.retryable && attempt <= budget;
        this.log(`x ${call}: no answer: ${this.redact(net.reason)}`);
        const error = new MetalTransportError({
          method: spec.method,
          path: apiPath,
          host: this.hostPort,
          code: net.code,
          reason: this.redact(net.reason),
          attempts: attempt,
          cause: err,
        });
        if (!retry) throw error;
        const wait = this.backoff(attempt);
        this.log(
          `~ retry ${attempt}/${budget} of ${call} in ${wait} ms (${net.code ?? 'network error'})`,
        );
        await this.sleep(wait, signal);
        continue;
      } finally {
        clearTimeout(timer);
      }

      this.answered = true;
      const requestId = res.headers.get('x-request-id') ?? undefined;
      const contentType = res.headers.get('content-type') ?? '';
      const elapsed = this.now() - started;
      this.log(
        `<- ${res.status} ${statusText(res.status, res.statusText)} ${call} (${elapsed} ms${
          requestId ? `, request-id ${requestId}` : ''
        })`,
      );

      if (res.status >= 200 && res.status < 300) {
        if (text.trim() === '')
          return { status: res.status, body: undefined, headers: res.headers, requestId };
        try {
          return {
            status: res.status,
            body: JSON.parse(text) as T,
            headers: res.headers,
            requestId,
          };
        } catch {
          throw new MetalApiError({
            status: res.status,
            statusText: res.statusText,
            errors: [this.redact(nonJsonNote(text, contentType))],
            method: spec.method,
            path: apiPath,
            requestId,
            attempts: attempt,
          });
        }
      }

      const messages =
        res.status >= 300 && res.status < 400
          ? [`unexpected redirect${redirectTarget(res.headers.get('location'))}`]
          : parseErrorBody(text, contentType);
      const errInit = {
        status: res.status,
        statusText: res.statusText,
        errors: messages.map((m) => this.redact(m)),
        method: spec.method,
        path: apiPath,
        requestId,
        attempts: attempt,
      };
      const decision = retryDecision(res.status, spec.method, spec.retryPostOnNoAnswer === true);
      if (!decision || attempt > this.maxRetries) throw new MetalApiError(errInit);

      const asked = serverWaitMs(res.headers, res.status, this.now());
      if (asked !== undefined && asked > this.maxRetryWaitMs) {
        throw new MetalApiError({
          ...errInit,
          note: `the API asked to wait ${Math.ceil(asked / 1000)} s, more than the ${Math.ceil(
            this.maxRetryWaitMs / 1000,
          )} s limit`,
        });
      }
      // Never shorter than the server says; a little jitter on top spreads parallel callers.
      const wait =
        asked !== undefined
          ? asked + Math.floor(this.random() * Math.min(1000, this.retryBaseMs))
          : this.backoff(attempt);
      if (res.status === 429) this.bucket.holdUntil(this.now() + wait);
      this.log(
        `~ retry ${attempt}/${this.maxRetries} of ${call} in ${wait} ms (${res.status} ${statusText(
          res.status,
          res.statusText,
        )})`,
      );
      await this.sleep(wait, signal);
    }
  }

  /** `request` for calls that must answer with a JSON body. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const res = await this.request<T>(spec);
    if (res.body === undefined) {
      throw new MetalApiError({
        status: res.status,
        errors: ['the API answered with an empty body where JSON was expected'],
        method: spec.method,
        path: this.redact(spec.path),
        requestId: res.requestId,
      });
    }
    return res.body;
  }

  /**
   * All items of a paginated list (`{<key>: [...], meta}`): asks for `per_page=100`, follows
   * `meta.next` (or `current_page < last_page`) and merges the `key` arrays, dropping items whose
   * `id` was already seen (offset pages shift when objects are created meanwhile).
   */
  async list<T>(spec: Omit<RequestSpec, 'method'>, key: string): Promise<T[]> {
    const out: T[] = [];
    const seen = new Set<string>();
    let page = 1;
    for (let guard = 0; guard < 100_000; guard++) {
      const body = await this.json<Record<string, unknown>>({
        ...spec,
        method: 'GET',
        query: { ...spec.query, page: page === 1 ? undefined : page, per_page: PER_PAGE },
      });
      const items = this.envelopeItems<T>(body, key, spec.path);
      for (const item of items) {
        const id = (item as { id?: unknown } | null)?.id;
        if (typeof id === 'string') {
          if (seen.has(id)) continue;
          seen.add(id);
        }
        out.push(item);
      }
      const next = nextPage(body.meta as Meta | undefined, page);
      if (next === undefined || items.length === 0) break;
      page = next;
    }
    return out;
  }

  /** The array of an unpaginated envelope (`{metros: [...]}`), read with one GET. */
  async envelope<T>(spec: Omit<RequestSpec, 'method'>, key: string): Promise<T[]> {
    const body = await this.json<Record<string, unknown>>({ ...spec, method: 'GET' });
    return this.envelopeItems<T>(body, key, spec.path);
  }

  private envelopeItems<T>(body: Record<string, unknown>, key: string, path: string): T[] {
    const items = body?.[key];
    if (!Array.isArray(items)) {
      // Strict on purpose: treating a wrong answer as "no devices" would create duplicates.
      throw new MetalApiError({
        status: 200,
        errors: [`the answer has no "${key}" list; is the base URL a Metal API (…/metal/v1)?`],
        method: 'GET',
        path: this.redact(path),
      });
    }
    return items as T[];
  }

  private buildUrl(spec: RequestSpec): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query ?? {})) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) {
        for (const item of v as ReadonlyArray<string | number>) params.append(k, String(item));
      } else {
        params.append(k, String(v));
      }
    }
    if (spec.include && spec.include.length > 0) params.set('include', spec.include.join(','));
    if (spec.exclude && spec.exclude.length > 0) params.set('exclude', spec.exclude.join(','));
    const qs = params.toString();
    const path = spec.path.startsWith('/') ? spec.path : `/${spec.path}`;
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  private async acquireSlot(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) throw abortError(signal);
    // A 429 that arrives while this request waits for its slot (booked earlier) holds it too:
    // the API asked the client to slow down, not only the request it refused. Booking again
    // after a hold lands behind it (the hold moved the schedule), paced as usual.
    for (;;) {
      const wait = this.bucket.reserve();
      if (wait > 0) await this.sleep(wait, signal);
      if (this.bucket.heldFor() === 0) return;
    }
  }

  /** Exponential backoff with "equal jitter": uniform in [d/2, d], d = base·2^(n−1) ≤ cap. */
  private backoff(attempt: number): number {
    const d = Math.min(this.maxRetryWaitMs, this.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(d / 2 + this.random() * (d / 2));
  }

  private async sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) throw abortError(signal);
    if (!signal) return this.sleepImpl(ms);
    // Race the (possibly injected) sleep with the signal so an abort always ends the wait.
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([this.sleepImpl(ms, signal), aborted]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private log(line: string): void {
    this.logger?.debug(`metal: ${this.redact(line)}`);
  }
}

/**
 * Whether an error status is worth another attempt: 429 always (no work was done); 5xx except 501
 * only when resending is harmless: never for a POST that is not marked safe (it may have acted),
 * and not 502/504 for a PATCH (the backend may have acted behind the gateway).
 */
export function retryDecision(status: number, method: HttpMethod, postSafe: boolean): boolean {
  if (status === 429) return true;
  if (status < 500 || status > 599 || status === 501) return false;
  if (method === 'POST' && !postSafe) return false;
  return !(method === 'PATCH' && (status === 502 || status === 504));
}

/**
 * The wait the server asked for, in ms from `nowMs`: `Retry-After` (seconds or HTTP date) and
 * `X-RateLimit-Reset` (Unix seconds; small values are taken as seconds from now). The reset time
 * counts on 429, or when `X-RateLimit-Remaining` is 0. The larger of both wins.
 */
export function serverWaitMs(headers: Headers, status: number, nowMs: number): number | undefined {
  let wait: number | undefined;
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) wait = Number(retryAfter) * 1000;
    else {
      const at = Date.parse(retryAfter);
      if (!Number.isNaN(at)) wait = at - nowMs;
    }
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  const remaining = headers.get('x-ratelimit-remaining')?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset) && (status === 429 || remaining === '0')) {
    const n = Number(reset);
    const resetWait = n >= 1e9 ? n * 1000 - nowMs : n * 1000;
    wait = Math.max(wait ?? 0, resetWait);
  }
  return wait === undefined ? undefined : Math.max(0, Math.ceil(wait));
}

/**
 * API messages of an error body: `{error}` and/or `{errors[]}` (plus `message`, which fastify-style
 * servers use); for a non-JSON body, a note naming its content type and the start of its text.
 */
export function parseErrorBody(text: string, contentType: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const looksJson = /json/i.test(contentType) || (contentType === '' && /^[{[]/.test(trimmed));
  if (looksJson) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return [nonJsonNote(text, contentType)];
    }
    const out: string[] = [];
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const o = parsed as Record<string, unknown>;
      if (typeof o.error === 'string' && o.error) out.push(o.error);
      if (Array.isArray(o.errors)) {
        for (const e of o.errors) {
          const m = typeof e === 'string' ? e : JSON.stringify(e);
          if (m && !out.includes(m)) out.push(m);
        }
      }
      if (typeof o.message === 'string' && o.message && !out.includes(o.message))
        out.push(o.message);
    }
    return out;
  }
  return [nonJsonNote(text, contentType)];
}

function nonJsonNote(text: string, contentType: string): string {
  const snippet = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 160);
  return `non-JSON response (content-type ${contentType || 'not set'})${snippet ? `: ${snippet}` : ''}`;
}

function redirectTarget(location: string | null): string {
  if (!location) return '';
  try {
    const u = new URL(location, 'http://placeholder.invalid');
    return u.host === 'placeholder.invalid' ? ` to ${u.pathname}` : ` to ${u.host}${u.pathname}`;
  } catch {
    return '';
  }
}

/** The page after `page`, from `meta.next.href`'s `page` parameter or `current_page/last_page`. */
export function nextPage(meta: Meta | undefined, page: number): number | undefined {
  if (!meta || typeof meta !== 'object') return undefined;
  const href = meta.next?.href;
  if (typeof href === 'string' && href !== '') {
    try {
      const n = Number(new URL(href, 'http://placeholder.invalid').searchParams.get('page'));
      if (Number.isInteger(n) && n > page) return n;
    } catch {
      // fall through to current_page/last_page
    }
  }
  const current = typeof meta.current_page === 'number' ? meta.current_page : page;
  if (typeof meta.last_page === 'number' && current < meta.last_page) {
    return Math.max(current + 1, page + 1);
  }
  if (typeof href === 'string' && href !== '') return page + 1;
  return undefined;
}

function describeNetworkError(
  err: unknown,
  timedOut: boolean,
  timeoutMs: number,
): { code: string | undefined; reason: string; retryable: boolean } {
  if (timedOut) {
    return { code: 'ETIMEDOUT', reason: `timed out after ${timeoutMs} ms`, retryable: true };
  }
  let code: string | undefined;
  let reason = '';
  let cur: unknown = err;
  for (let depth = 0; depth < 6 && cur instanceof Error; depth++) {
    const c = (cur as { code?: unknown }).code;
    if (code === undefined && typeof c === 'string') code = c;
    if (cur.message && cur.message !== 'fetch failed') reason = cur.message;
    if (
      cur instanceof AggregateError &&
      cur.errors[0] instanceof Error &&
      cur.cause === undefined
    ) {
      cur = cur.errors[0];
    } else {
      cur = cur.cause;
    }
  }
  // fetch refuses some ports outright (e.g. 9, 25, 6000): no request was made, none ever will be.
  if (code === undefined && reason === 'bad port') {
    return {
      code: undefined,
      reason: 'bad port: Node.js fetch refuses to connect to this port; use another port',
      retryable: false,
    };
  }
  if (!reason) reason = code ?? (err instanceof Error ? err.message : String(err));
  else if (code && !reason.includes(code)) reason = `${code}: ${reason}`;
  const genericFetchFailure =
    code === undefined && err instanceof TypeError && /fetch failed|terminated/i.test(err.message);
  return {
    code,
    reason,
    retryable: (code !== undefined && RETRYABLE_NETWORK_CODES.has(code)) || genericFetchFailure,
  };
}

function combineSignals(
  a: AbortSignal | undefined,
  b: AbortSignal | undefined,
): AbortSignal | undefined {
  if (a && b) return AbortSignal.any([a, b]);
  return a ?? b;
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
