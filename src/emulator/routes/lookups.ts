import type { FastifyInstance } from 'fastify';
import { CAPACITY_LIMITS, findMetro, findPlan, planOfferedIn } from '../catalog.js';
import type { EmulatorContext } from '../context.js';
import { notFound, unprocessable } from '../errors.js';
import { first, listParam, type QueryValue } from '../pagination.js';
import { renderMetro } from '../render.js';
import { bodyObject } from '../validate.js';

type Query = Record<string, QueryValue>;

/** Catalog lookups: metros, plans, operating systems, metro capacity. */
export function registerLookupRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  const cat = () => ctx.state.catalog;

  api.get('/locations/metros', async () => ({ metros: cat().metros.map(renderMetro) }));

  api.get<{ Params: { id: string } }>('/locations/metros/:id', async (req) => {
    const m = cat().metros.find((x) => x.id === req.params.id.toLowerCase());
    if (!m) throw notFound();
    return renderMetro(m);
  });

  api.get<{ Querystring: Query }>('/plans', async (req) => {
    const slug = first(req.query.slug);
    const type = first(req.query.type);
    const categories = listParam(req.query['categories[]'] ?? req.query.categories);
    const plans = cat().plans.filter(
      (p) =>
        (slug === undefined || p.slug === slug) &&
        (type === undefined || p.type === type) &&
        (categories.length === 0 || categories.some((c) => p.categories.includes(c))),
    );
    return { plans };
  });

  api.get('/operating-systems', async () => ({ operating_systems: cat().operatingSystems }));

  api.get('/capacity/metros', async () => {
    const capacity: Record<string, Record<string, { level: string }>> = {};
    for (const [metro, plans] of Object.entries(cat().capacity)) {
      capacity[metro] = Object.fromEntries(
        Object.entries(plans).map(([plan, level]) => [plan, { level }]),
      );
    }
    return { capacity };
  });

  api.post('/capacity/metros', async (req) => {
    const body = bodyObject(req.body);
    if (!Array.isArray(body.servers) || body.servers.length === 0) {
      throw unprocessable('servers must be a non-empty array of {metro, plan, quantity}');
    }
    const errors: string[] = [];
    const servers = body.servers.map((raw: unknown, i: number) => {
      const s = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
      const metroKey = typeof s.metro === 'string' ? s.metro : '';
      const planKey = typeof s.plan === 'string' ? s.plan : '';
      const metro = findMetro(cat(), metroKey);
      const plan = findPlan(cat(), planKey);
      // The spec types quantity as a string; clients also send integers.
      const quantity = typeof s.quantity === 'number' ? s.quantity : Number(s.quantity);
      if (!metro) errors.push(`servers[${i}].metro "${metroKey}" is not a valid metro`);
      if (!plan) errors.push(`servers[${i}].plan "${planKey}" is not a valid plan`);
      if (!Number.isInteger(quantity) || quantity < 1) {
        errors.push(`servers[${i}].quantity must be a positive integer`);
      }
      if (!metro || !plan) return undefined;
      const level = cat().capacity[metro.code]?.[plan.slug] ?? 'unavailable';
      const inUse = ctx.state.devices.filter(
        (d) => d.plan === plan.slug && d.metro === metro.code,
      ).length;
      const available = planOfferedIn(plan, metro) && inUse + quantity <= CAPACITY_LIMITS[level];
      return { metro: metroKey, plan: planKey, quantity: String(quantity), available };
    });
    if (errors.length > 0) throw unprocessable(errors);
    return { servers };
  });
}
