/**
 * Project API keys (OpenAPI `paths/projects/id/api-keys.yaml`, `paths/api-keys/id.yaml`, schema
 * `AuthToken`): `GET`/`POST /projects/{id}/api-keys`, `DELETE /api-keys/{id}`. A key's token
 * authenticates Metal API requests, scoped to its project ({@link apiKeyDenial}, called by the
 * server's token check).
 *
 * Status codes are only those the spec declares for these operations: 401, 404, and 422 on
 * create. A project the emulator token may not see answers 404 here (the spec declares no 403).
 */
import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from '../context.js';
import { notFound } from '../errors.js';
import { API_PREFIX, href, isUuid, iso, newId, newToken } from '../ids.js';
import type { QueryValue } from '../pagination.js';
import { expandOf, renderProject, type Expand } from '../render.js';
import type { ApiKeyRecord, EmulatorState, ProjectRecord } from '../state.js';
import { bodyObject, Fields } from '../validate.js';

type IdParams = { Params: { id: string }; Querystring: Record<string, QueryValue> };

/** Longest description accepted (the spec sets none; keeps the state file bounded). */
const MAX_DESCRIPTION = 1024;

/** The project `id` when it exists and the emulator token owns it, else 404. */
function ownedProject(ctx: EmulatorContext, id: string): ProjectRecord {
  const p = isUuid(id) ? ctx.state.projects.find((x) => x.id === id.toLowerCase()) : undefined;
  if (!p || p.access !== 'own') throw notFound();
  return p;
}

function keysOf(state: EmulatorState): ApiKeyRecord[] {
  return (state.apiKeys ??= []);
}

/** AuthToken of a project key: `project` is an href unless `include=project`; no `user`. */
function renderApiKey(
  state: EmulatorState,
  k: ApiKeyRecord,
  expand: Expand,
): Record<string, unknown> {
  const project = state.projects.find((p) => p.id === k.projectId);
  return {
    id: k.id,
    token: k.token,
    description: k.description,
    read_only: k.readOnly,
    created_at: iso(k.createdAt),
    updated_at: iso(k.updatedAt),
    project:
      project && expand.include.has('project')
        ? renderProject(state, project)
        : href('projects', k.projectId),
  };
}

/** Registers the API-key routes under the API prefix. */
export function registerApiKeyRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  api.get<IdParams>('/projects/:id/api-keys', async (req) => {
    const project = ownedProject(ctx, req.params.id);
    const expand = expandOf(req.query);
    // AuthTokenList is `{api_keys}` without `meta`: the API does not paginate it.
    return {
      api_keys: keysOf(ctx.state)
        .filter((k) => k.projectId === project.id)
        .map((k) => renderApiKey(ctx.state, k, expand)),
    };
  });

  api.post<IdParams>('/projects/:id/api-keys', async (req, reply) => {
    const project = ownedProject(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const description = f.string('description', { maxLength: MAX_DESCRIPTION });
    const readOnly = f.bool('read_only');
    f.check();
    const now = ctx.clock.now();
    const key: ApiKeyRecord = {
      id: newId(),
      projectId: project.id,
      token: newToken(),
      description: description ?? '',
      readOnly: readOnly ?? false,
      createdAt: now,
      updatedAt: now,
    };
    keysOf(ctx.state).push(key);
    ctx.changed();
    return reply.code(201).send(renderApiKey(ctx.state, key, expandOf(req.query)));
  });

  api.delete<IdParams>('/api-keys/:id', async (req, reply) => {
    const id = req.params.id.toLowerCase();
    const keys = keysOf(ctx.state);
    const i = isUuid(id) ? keys.findIndex((k) => k.id === id) : -1;
    const key = keys[i];
    if (!key) throw notFound();
    ownedProject(ctx, key.projectId);
    keys.splice(i, 1);
    ctx.changed();
    return reply.code(204).send();
  });
}

/**
 * Whether `token` (not the emulator token) may make this request: `undefined` when it is a
 * project API key and the request stays inside its project, else the 401 message. A read-only key
 * may only read. The project of a request is read from its path: `/projects/{id}…` directly, or
 * the owner of the device, IP, hardware reservation or API key it names; paths naming no project
 * (catalog lookups, capacity) are open to every key. An id that does not exist passes, so the
 * route answers its usual 404.
 */
export function apiKeyDenial(
  state: EmulatorState,
  token: string,
  method: string,
  url: string,
): string | undefined {
  const key = (state.apiKeys ?? []).find((k) => k.token === token);
  if (!key) return 'Invalid authentication token';
  if (key.readOnly && method !== 'GET' && method !== 'HEAD') {
    return 'This API key is read-only';
  }
  const owner = projectOfPath(state, url);
  if (owner !== undefined && owner !== key.projectId) {
    return 'This API key is not authorized for this project';
  }
  return undefined;
}

/** The project a request path belongs to; undefined when it names none (or nothing known). */
function projectOfPath(state: EmulatorState, url: string): string | undefined {
  const path = url.split('?')[0]!.slice(API_PREFIX.length);
  const [, collection, rawId] = path.split('/');
  if (!collection || !rawId) return undefined;
  const id = decodeURIComponent(rawId).toLowerCase();
  switch (collection) {
    case 'projects':
      return id;
    case 'devices':
      return state.devices.find((d) => d.id === id)?.projectId;
    case 'ips':
      return (
        state.reservations.find((r) => r.id === id)?.projectId ??
        state.devices.find((d) => d.id === state.assignments.find((a) => a.id === id)?.deviceId)
          ?.projectId
      );
    case 'hardware-reservations':
      return state.hardwareReservations.find((h) => h.id === id)?.projectId;
    case 'api-keys':
      return state.apiKeys?.find((k) => k.id === id)?.projectId;
    default:
      return undefined;
  }
}
