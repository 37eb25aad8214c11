import type { FastifyInstance } from 'fastify';
import { requireProject, type EmulatorContext } from '../context.js';
import { API_PREFIX } from '../ids.js';
import { first, paginate, parsePageParams, type QueryValue } from '../pagination.js';
import { expandOf, renderProject } from '../render.js';

type Query = Record<string, QueryValue>;

/** GET /projects (the token's projects, paginated) and GET /projects/{id}. */
export function registerProjectRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  api.get<{ Querystring: Query }>('/projects', async (req) => {
    const params = parsePageParams(req.query);
    const name = first(req.query.name);
    const mine = ctx.state.projects.filter(
      (p) => p.access === 'own' && (name === undefined || p.name === name),
    );
    const { items, meta } = paginate(mine, params, `${API_PREFIX}/projects`, req.query);
    const expand = expandOf(req.query);
    return { projects: items.map((p) => renderProject(ctx.state, p, expand)), meta };
  });

  api.get<{ Params: { id: string }; Querystring: Query }>('/projects/:id', async (req) => {
    const p = requireProject(ctx, req.params.id);
    return renderProject(ctx.state, p, expandOf(req.query));
  });
}
