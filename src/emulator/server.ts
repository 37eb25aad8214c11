import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { EmulatorContext } from './context.js';
import { registerControlRoutes, type ControlOptions } from './control.js';
import { ApiError, errorBody, INTERNAL_ERROR_MESSAGE } from './errors.js';
import { API_PREFIX } from './ids.js';
import { UNMATCHED_ROUTE } from './requestlog.js';
import { apiKeyDenial, registerApiKeyRoutes } from './routes/api-keys.js';
import { registerBgpRoutes } from './routes/bgp.js';
import { registerDeviceRoutes } from './routes/devices.js';
import { registerHardwareReservationRoutes } from './routes/hardware-reservations.js';
import { registerIpRoutes } from './routes/ips.js';
import { registerLookupRoutes } from './routes/lookups.js';
import { registerProjectRoutes } from './routes/projects.js';
import { sweep } from './world.js';

/** Path prefix of the control API. */
export const CONTROL_PREFIX = '/_emulator';

// Userdata with a full PKI runs to tens of KiB; leave generous room.
const BODY_LIMIT = 4 * 1024 * 1024;

// X-RateLimit-Limit of injected 429s while no rate limit is set: a plausible API-wide figure,
// so clients that adapt to the header do not throttle themselves to a crawl.
const NOMINAL_RATE_LIMIT = 100;

const FAULT_MESSAGES: Record<number, string> = {
  429: 'Too Many Requests: rate limit exceeded, retry later',
  500: INTERNAL_ERROR_MESSAGE,
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function isApiPath(url: string): boolean {
  return url === API_PREFIX || url.startsWith(`${API_PREFIX}/`) || url.startsWith(`${API_PREFIX}?`);
}

function routeOf(req: FastifyRequest): string {
  return req.routeOptions.url ?? UNMATCHED_ROUTE;
}

function isLoopback(addr: string | undefined): boolean {
  return (
    addr !== undefined &&
    (addr.startsWith('127.') || addr === '::1' || addr.startsWith('::ffff:127.'))
  );
}

/**
 * Builds the HTTP server: the Metal API under `/metal/v1` and the control API under
 * `/_emulator`. Every API request passes, in order: request id, injected faults, rate limit,
 * token check, the lazy state sweep; every API answer is logged with its body sample.
 */
export function buildServer(ctx: EmulatorContext, control: ControlOptions): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    routerOptions: { ignoreTrailingSlash: true },
  });

  // Clients differ on whether bodiless requests carry `Content-Type: application/json`; an empty
  // body is "no body", not a parse error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(422, 'The request body is not valid JSON'), undefined);
    }
  });

  const bodies = new WeakMap<FastifyRequest, string>();
  /** Requests held by a latency-only fault rule, and for how long (ms). */
  const delayed = new WeakMap<FastifyRequest, number>();

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    if (req.url.startsWith(CONTROL_PREFIX)) {
      if (!isLoopback(req.socket.remoteAddress)) {
        return reply.code(403).send({ error: 'the control API answers loopback clients only' });
      }
      // The control API can read the state (devices' userdata) and change it: same token as the API.
      const token = req.headers['x-auth-token'];
      if (token !== ctx.state.token) {
        return reply.code(401).send({
          error:
            token === undefined || token === ''
              ? 'the control API needs the X-Auth-Token header (the emulator token)'
              : 'Invalid authentication token',
        });
      }
      return;
    }
    if (!isApiPath(req.url)) return;

    const fault = ctx.faults.take(req.method, routeOf(req), req.url);
    if (fault?.latencyMs) {
      // A latency-only rule delays the work after the request has been read in full (preHandler):
      // like a real API, the work is then done even if the client has gone away meanwhile.
      if (!fault.reset && !fault.status) delayed.set(req, fault.latencyMs);
      else await new Promise((r) => setTimeout(r, fault.latencyMs));
    }
    if (fault?.reset) {
      ctx.requestLog.add({
        at: new Date().toISOString(),
        method: req.method,
        route: routeOf(req),
        path: req.url,
        status: 0,
        durationMs: Math.round(reply.elapsedTime),
      });
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (fault?.status) {
      if (fault.status === 429) {
        const retryAfter = fault.retryAfterSeconds ?? 1;
        reply.headers({
          'Retry-After': String(retryAfter),
          'X-RateLimit-Limit': String(ctx.limiter.limit ?? NOMINAL_RATE_LIMIT),
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + retryAfter),
        });
      }
      return reply
        .code(fault.status)
        .send(errorBody(fault.status, [FAULT_MESSAGES[fault.status]!]));
    }

    const decision = ctx.limiter.take();
    if (decision) {
      reply.headers({
        'X-RateLimit-Limit': String(decision.limit),
        'X-RateLimit-Remaining': String(decision.remaining),
        'X-RateLimit-Reset': String(decision.resetAt),
      });
      if (!decision.allowed) {
        reply.header('Retry-After', String(decision.retryAfterSeconds));
        return reply.code(429).send(errorBody(429, [FAULT_MESSAGES[429]!]));
      }
    }

    const token = req.headers['x-auth-token'];
    if (token === undefined || token === '') {
      return reply.code(401).send(errorBody(401, ['You must provide an X-Auth-Token header']));
    }
    if (token !== ctx.state.token) {
      // Project API keys authenticate too, within their project.
      const denied = apiKeyDenial(ctx.state, String(token), req.method, req.url);
      if (denied !== undefined) return reply.code(401).send(errorBody(401, [denied]));
    }
    if (sweep(ctx.state, ctx.clock.now())) ctx.changed();
  });

  app.addHook('preHandler', async (req) => {
    const ms = delayed.get(req);
    if (ms) await new Promise((r) => setTimeout(r, ms));
  });

  /** Requests already logged (answered to a client that had gone away). */
  const logged = new WeakSet<FastifyRequest>();
  const logAnswer = (req: FastifyRequest, reply: FastifyReply): void => {
    if (logged.has(req)) return;
    logged.add(req);
    const retryAfter = reply.getHeader('retry-after');
    ctx.requestLog.add(
      {
        at: new Date(Date.now() - reply.elapsedTime).toISOString(),
        method: req.method,
        route: routeOf(req),
        path: req.url,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}),
      },
      bodies.get(req),
    );
  };

  app.addHook('onSend', async (req, reply, payload) => {
    if (isApiPath(req.url)) {
      bodies.set(
        req,
        typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : '',
      );
      // The client went away while the request was worked on (e.g. held by a latency fault):
      // the work is done, but onResponse will not run for an answer nobody receives.
      if (req.raw.socket?.destroyed) logAnswer(req, reply);
    }
    return payload;
  });

  app.addHook('onResponse', async (req, reply) => {
    if (isApiPath(req.url)) logAnswer(req, reply);
  });

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const control = req.url.startsWith(CONTROL_PREFIX);
    if (err instanceof ApiError) {
      reply.headers(err.headers);
      return reply
        .code(err.status)
        .send(control ? { error: err.message } : errorBody(err.status, err.errors));
    }
    const status = (err as { statusCode?: number }).statusCode;
    const message = err instanceof Error ? err.message : String(err);
    if (status !== undefined && status >= 400 && status < 500) {
      // fastify's own 4xx (bad content type, body too large, …): the API reports bad input as 422.
      const code = status === 413 ? 413 : control ? 400 : 422;
      return reply.code(code).send(control ? { error: message } : errorBody(code, [message]));
    }
    ctx.logger.info(`emulator: internal error on ${req.method} ${req.url}: ${message}`);
    return reply
      .code(500)
      .send(control ? { error: message } : errorBody(500, [INTERNAL_ERROR_MESSAGE]));
  });

  app.setNotFoundHandler((req, reply) => {
    if (isApiPath(req.url)) {
      return reply
        .code(404)
        .send(
          errorBody(404, [
            `Not found (the emulator does not serve ${req.method} ${req.url.split('?')[0]})`,
          ]),
        );
    }
    return reply
      .code(404)
      .send({ error: `no such endpoint: ${req.method} ${req.url.split('?')[0]}` });
  });

  app.register(
    async (api) => {
      registerProjectRoutes(api, ctx);
      registerDeviceRoutes(api, ctx);
      registerIpRoutes(api, ctx);
      registerLookupRoutes(api, ctx);
      registerBgpRoutes(api, ctx);
      registerHardwareReservationRoutes(api, ctx);
      registerApiKeyRoutes(api, ctx);
    },
    { prefix: API_PREFIX },
  );
  app.register(async (c) => registerControlRoutes(c, ctx, control), { prefix: CONTROL_PREFIX });
  return app;
}
