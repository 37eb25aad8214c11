import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from './context.js';
import { parseFaultRule, type ActiveFault } from './faults.js';
import { findMetro, findPlan } from './catalog.js';
import { newHardwareReservation, reservationProblem } from './hardware.js';
import { iso } from './ids.js';
import { injectFailure } from './lifecycle.js';
import {
  REDACTED,
  redactSecrets,
  type RequestLogEntry,
  type RequestSummary,
  type ResponseSample,
} from './requestlog.js';
import { renderHardwareReservation } from './render.js';
import { ownProject, type ProvisionFailureRule } from './state.js';

/** What the control API needs besides the context. */
export interface ControlOptions {
  /** The API base URL (for `GET /_emulator/health`). */
  apiUrl(): string;
}

/** `GET /_emulator/requests` answer. */
export interface RequestsResponse {
  requests: RequestLogEntry[];
  lastSeq: number;
}

/** `GET /_emulator/responses` answer. */
export interface ResponsesResponse {
  responses: ResponseSample[];
}

/** `GET|POST /_emulator/clock` answer. */
export interface ClockResponse {
  /** Virtual now (RFC 3339). */
  now: string;
  timeScale: number;
  /** Virtual minus wall clock, in ms. */
  offsetMs: number;
}

/** `POST /_emulator/provision-failures` answer. */
export interface ProvisionFailureResponse extends ProvisionFailureRule {
  /** Device the failure was applied to right away, or null when it waits for the next create. */
  appliedTo: string | null;
}

export type { RequestLogEntry, RequestSummary, ResponseSample, ActiveFault };

class BadRequest extends Error {}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequest('the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * The control API (loopback clients with the emulator's `X-Auth-Token`, checked in server.ts):
 * request log, faults, provisioning failures, hardware reservations, clock, rate limit, state
 * dump (token, userdata and root passwords redacted). See docs/emulator.md.
 */
export function registerControlRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  opts: ControlOptions,
): void {
  app.setErrorHandler((err, _req, reply) => {
    const message = err instanceof Error ? err.message : String(err);
    const status =
      err instanceof BadRequest || err instanceof RangeError
        ? 400
        : ((err as { statusCode?: number }).statusCode ?? 500);
    return reply.code(status >= 400 && status < 600 ? status : 500).send({ error: message });
  });

  const clockView = (): ClockResponse => ({
    now: new Date(ctx.clock.now()).toISOString(),
    timeScale: ctx.clock.timeScale,
    offsetMs: Math.round(ctx.clock.offsetMs()),
  });

  app.get('/health', async () => ({
    ok: true,
    url: opts.apiUrl(),
    projectId: ownProject(ctx.state).id,
  }));

  app.get<{ Querystring: { since?: string } }>(
    '/requests',
    async (req): Promise<RequestsResponse> => {
      const since = req.query.since === undefined ? 0 : Number(req.query.since);
      if (!Number.isInteger(since) || since < 0)
        throw new BadRequest('since must be a sequence number');
      return { requests: ctx.requestLog.since(since), lastSeq: ctx.requestLog.lastSeq };
    },
  );
  app.delete('/requests', async (_req, reply) => {
    ctx.requestLog.clear();
    return reply.code(204).send();
  });
  app.get('/requests/summary', async (): Promise<RequestSummary> => ctx.requestLog.summary());
  app.get('/responses', async (): Promise<ResponsesResponse> => ({
    responses: ctx.requestLog.responses(),
  }));

  app.get('/faults', async () => ({ faults: ctx.faults.list() }));
  app.post('/faults', async (req, reply) => {
    const input = Array.isArray(req.body) ? req.body : [req.body];
    let rules;
    try {
      rules = input.map(parseFaultRule);
    } catch (err) {
      throw new BadRequest((err as Error).message);
    }
    const added = rules.map((r) => ctx.faults.add(r));
    return reply.code(201).send({ faults: added });
  });
  app.delete('/faults', async (_req, reply) => {
    ctx.faults.clear();
    return reply.code(204).send();
  });

  app.get('/provision-failures', async () => ({ pending: ctx.state.provisionFailures }));
  app.post('/provision-failures', async (req, reply): Promise<ProvisionFailureResponse> => {
    const b = objectBody(req.body);
    if (typeof b.hostname !== 'string' || b.hostname === '')
      throw new BadRequest('hostname is required');
    const reason =
      typeof b.reason === 'string' && b.reason !== '' ? b.reason : 'Provisioning failed';
    const now = ctx.clock.now();
    // A device with that hostname still provisioning fails now; otherwise the next one created.
    const device = ctx.state.devices.find(
      (d) => d.hostname === b.hostname && injectFailure(d, now, reason),
    );
    if (!device) ctx.state.provisionFailures.push({ hostname: b.hostname, reason });
    ctx.changed();
    return reply.code(201).send({ hostname: b.hostname, reason, appliedTo: device?.id ?? null });
  });
  app.delete('/provision-failures', async (_req, reply) => {
    ctx.state.provisionFailures = [];
    ctx.changed();
    return reply.code(204).send();
  });

  // Adds a hardware reservation to the own project; answers the API's HardwareReservation.
  app.post('/hardware-reservations', async (req, reply) => {
    const b = objectBody(req.body);
    if (typeof b.plan !== 'string' || b.plan === '') throw new BadRequest('plan is required');
    if (typeof b.metro !== 'string' || b.metro === '') throw new BadRequest('metro is required');
    if (b.spare !== undefined && typeof b.spare !== 'boolean') {
      throw new BadRequest('spare must be a boolean');
    }
    const problem = reservationProblem(ctx.state.catalog, b.plan, b.metro);
    if (problem) throw new BadRequest(problem);
    const now = ctx.clock.now();
    const r = newHardwareReservation(
      ctx.state.catalog,
      ownProject(ctx.state).id,
      findPlan(ctx.state.catalog, b.plan)!,
      findMetro(ctx.state.catalog, b.metro)!,
      now,
      { spare: b.spare === true },
    );
    ctx.state.hardwareReservations.push(r);
    ctx.changed();
    return reply.code(201).send(renderHardwareReservation(ctx.state, r, now));
  });

  app.get('/clock', async () => clockView());
  app.post('/clock', async (req) => {
    const b = objectBody(req.body);
    if (b.advanceSeconds === undefined && b.timeScale === undefined) {
      throw new BadRequest('give advanceSeconds and/or timeScale');
    }
    if (b.timeScale !== undefined) ctx.clock.setTimeScale(Number(b.timeScale));
    if (b.advanceSeconds !== undefined) ctx.clock.advance(Number(b.advanceSeconds));
    ctx.changed();
    return clockView();
  });

  app.get('/rate-limit', async () => ({ perSecond: ctx.limiter.limit }));
  app.put('/rate-limit', async (req) => {
    const raw = req.body === null || req.body === undefined ? null : objectBody(req.body).perSecond;
    if (raw !== null && raw !== undefined && typeof raw !== 'number') {
      throw new BadRequest('perSecond must be a number or null');
    }
    ctx.limiter.set(raw ?? null);
    return { perSecond: ctx.limiter.limit };
  });

  app.get('/state', async () => ({
    now: iso(ctx.clock.now()),
    timeScale: ctx.clock.timeScale,
    rateLimitPerSecond: ctx.limiter.limit,
    faults: ctx.faults.list(),
    state: redactSecrets({ ...ctx.state, token: REDACTED }),
  }));
}
