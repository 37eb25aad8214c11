/** One answered API request (control API requests are not logged). */
export interface RequestLogEntry {
  /** Increasing sequence number; `GET /_emulator/requests?since=<seq>` returns later entries. */
  seq: number;
  /** Wall-clock time the request arrived (RFC 3339). */
  at: string;
  method: string;
  /** fastify route template, e.g. `/metal/v1/devices/:id`; `(unmatched)` for unknown paths. */
  route: string;
  /** Path and query as requested. */
  path: string;
  /** HTTP status; 0 when an injected fault reset the connection. */
  status: number;
  durationMs: number;
  /** Seconds sent in `Retry-After` (429s). */
  retryAfter?: number;
}

/** Last response body seen for one (method, route, status). */
export interface ResponseSample {
  method: string;
  route: string;
  status: number;
  /** Parsed JSON (userdata and root passwords redacted), `null` for an empty body, or the raw text when not JSON. */
  body: unknown;
}

/** Counts per (method, route), as `GET /_emulator/requests/summary` answers. */
export interface RequestSummary {
  total: number;
  routes: Array<{ method: string; route: string; count: number; statuses: Record<string, number> }>;
}

/** Route name used when no route matched. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** What secrets read as in control API answers (still a string, so API schemas hold). */
export const REDACTED = '<redacted>';

/** Keys whose non-empty string values are secrets: device userdata (it carries the cluster's CA keys) and root passwords. */
const SECRET_KEYS = new Set(['userdata', 'root_password', 'rootPassword']);

/** A deep copy of `value` with every secret string (see SECRET_KEYS) replaced by {@link REDACTED}. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k) && typeof v === 'string' && v !== '' ? REDACTED : redactSecrets(v);
  }
  return out;
}

/**
 * The request log: what the API was asked and answered, so tests and benchmarks can measure API
 * economy, and the contract test can validate one body per (method, route, status).
 */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;
  private readonly samples = new Map<string, ResponseSample>();

  /** @param capacity oldest entries are dropped beyond this many. */
  constructor(private readonly capacity = 100_000) {}

  /** Records one answered request and keeps its body as the sample for its status. */
  add(entry: Omit<RequestLogEntry, 'seq'>, body?: string): RequestLogEntry {
    const full: RequestLogEntry = { seq: ++this.seq, ...entry };
    this.entries.push(full);
    if (this.entries.length > this.capacity) {
      this.entries.splice(0, this.entries.length - this.capacity);
    }
    if (body !== undefined) {
      this.samples.set(`${entry.method} ${entry.route} ${entry.status}`, {
        method: entry.method,
        route: entry.route,
        status: entry.status,
        body: redactSecrets(parseBody(body)),
      });
    }
    return full;
  }

  /** Entries with `seq > since`. */
  since(since = 0): RequestLogEntry[] {
    return this.entries.filter((e) => e.seq > since);
  }

  /** Highest sequence number handed out so far. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Forgets entries and samples (the sequence keeps counting). */
  clear(): void {
    this.entries = [];
    this.samples.clear();
  }

  /** Counts by method + route, most frequent first. */
  summary(): RequestSummary {
    const byKey = new Map<string, RequestSummary['routes'][number]>();
    for (const e of this.entries) {
      const key = `${e.method} ${e.route}`;
      let row = byKey.get(key);
      if (!row)
        byKey.set(key, (row = { method: e.method, route: e.route, count: 0, statuses: {} }));
      row.count++;
      row.statuses[e.status] = (row.statuses[e.status] ?? 0) + 1;
    }
    const routes = [...byKey.values()].sort(
      (a, b) =>
        b.count - a.count || a.route.localeCompare(b.route) || a.method.localeCompare(b.method),
    );
    return { total: this.entries.length, routes };
  }

  /** The last body per (method, route, status). */
  responses(): ResponseSample[] {
    return [...this.samples.values()];
  }
}

function parseBody(body: string): unknown {
  if (body === '') return null;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
