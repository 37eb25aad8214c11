import { API_PREFIX } from './ids.js';

/** HTTP statuses a fault rule may answer with. */
export const FAULT_STATUSES = [429, 500, 502, 503, 504] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

/**
 * A fault rule (`POST /_emulator/faults`). A request matches when every given selector matches;
 * the rule then applies to the next `times` matching requests: first `latencyMs` of delay, then
 * either a reset connection (`reset`), an error `status`, or (latency only) the normal answer.
 */
export interface FaultRule {
  method?: string;
  /** fastify route template, e.g. `/metal/v1/devices/:id` (the `/metal/v1` prefix may be left off). */
  route?: string;
  /** Path prefix, e.g. `/metal/v1/projects` (the `/metal/v1` prefix may be left off). */
  pathPrefix?: string;
  status?: FaultStatus;
  times: number;
  /** `Retry-After` of a 429 (default 1). */
  retryAfterSeconds?: number;
  latencyMs?: number;
  /** Destroy the connection without an answer. */
  reset?: boolean;
}

/** A stored rule with its id and how many more requests it will hit. */
export interface ActiveFault extends FaultRule {
  id: number;
  remaining: number;
}

/** Validates a rule from the control API; throws an Error with a readable message. */
export function parseFaultRule(input: unknown): FaultRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new Error('a fault rule must be a JSON object');
  }
  const o = input as Record<string, unknown>;
  const known = [
    'method',
    'route',
    'pathPrefix',
    'status',
    'times',
    'retryAfterSeconds',
    'latencyMs',
    'reset',
  ];
  const unknown = Object.keys(o).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new Error(`unknown fault rule field(s): ${unknown.join(', ')}`);
  const rule: FaultRule = { times: 1 };
  for (const k of ['method', 'route', 'pathPrefix'] as const) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== 'string' || o[k] === '') throw new Error(`${k} must be a non-empty string`);
    rule[k] = o[k];
  }
  if (rule.route !== undefined && rule.pathPrefix !== undefined) {
    throw new Error('give either route or pathPrefix, not both');
  }
  if (rule.method) rule.method = rule.method.toUpperCase();
  if (o.status !== undefined) {
    if (!FAULT_STATUSES.includes(o.status as FaultStatus)) {
      throw new Error(`status must be one of ${FAULT_STATUSES.join(', ')}`);
    }
    rule.status = o.status as FaultStatus;
  }
  if (o.times !== undefined) {
    if (!Number.isInteger(o.times) || (o.times as number) < 1) {
      throw new Error('times must be a positive integer');
    }
    rule.times = o.times as number;
  }
  for (const k of ['retryAfterSeconds', 'latencyMs'] as const) {
    if (o[k] === undefined) continue;
    if (typeof o[k] !== 'number' || !Number.isFinite(o[k]) || (o[k] as number) < 0) {
      throw new Error(`${k} must be a non-negative number`);
    }
    rule[k] = o[k] as number;
  }
  if (o.reset !== undefined) {
    if (typeof o.reset !== 'boolean') throw new Error('reset must be a boolean');
    rule.reset = o.reset;
  }
  if (rule.status === undefined && !rule.reset && rule.latencyMs === undefined) {
    throw new Error('a fault rule needs status, reset or latencyMs');
  }
  if (rule.status !== undefined && rule.reset)
    throw new Error('give either status or reset, not both');
  return rule;
}

function withPrefix(p: string): string {
  return p.startsWith(API_PREFIX) ? p : `${API_PREFIX}${p.startsWith('/') ? '' : '/'}${p}`;
}

/** The active fault rules; the first matching rule with hits left applies. */
export class FaultInjector {
  private rules: ActiveFault[] = [];
  private nextId = 1;

  /** Adds a rule (validated with `parseFaultRule`). */
  add(rule: FaultRule): ActiveFault {
    const active: ActiveFault = { ...rule, id: this.nextId++, remaining: rule.times };
    this.rules.push(active);
    return active;
  }

  /** Rules that still have hits left. */
  list(): ActiveFault[] {
    return this.rules.map((r) => ({ ...r }));
  }

  clear(): void {
    this.rules = [];
  }

  /** The rule applying to this request (consuming one hit), if any. */
  take(method: string, route: string, path: string): ActiveFault | undefined {
    const rule = this.rules.find(
      (r) =>
        (r.method === undefined || r.method === method.toUpperCase()) &&
        (r.route === undefined || withPrefix(r.route) === route) &&
        (r.pathPrefix === undefined || path.startsWith(withPrefix(r.pathPrefix))),
    );
    if (!rule) return undefined;
    rule.remaining--;
    if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
    return { ...rule };
  }
}
