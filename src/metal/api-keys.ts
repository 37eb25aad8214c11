/**
 * Project API keys (OpenAPI `paths/projects/id/api-keys.yaml`, `paths/api-keys/id.yaml`, schemas
 * `AuthToken`, `AuthTokenInput`, `AuthTokenList`). loko creates one per cluster for the cloud
 * controller manager (DESIGN.md §3: API keys have no tags and are found by description).
 *
 * `token` is a secret: callers must never log, print or put it in an error.
 */
import type { MetalTransport } from './transport.js';
import type { Href, IncludeOptions, Project } from './types.js';
import { deleted, seg } from './util.js';

/** `AuthToken`: a project API key (`project` set) or a user API key (`user` set). */
export interface AuthToken {
  /** UUID. */
  id: string;
  /** The secret sent as `X-Auth-Token`. The spec marks nothing required; absent when withheld. */
  token?: string;
  /** Free text; loko identifies its keys by `loko:cluster=<name>`. */
  description?: string;
  read_only?: boolean;
  /** RFC 3339. */
  created_at?: string;
  updated_at?: string;
  /** Project tokens only: an href, or the Project with `include=project`. */
  project?: Href | Project;
  /** User tokens only. */
  user?: Href | Record<string, unknown>;
}

/** `AuthTokenInput`: both fields optional in the spec. */
export interface AuthTokenInput {
  description?: string;
  read_only?: boolean;
}

/**
 * `GET /projects/{id}/api-keys` → the project's API keys. `AuthTokenList` is `{api_keys}`; the
 * spec gives it no `meta`, but `meta` pages are followed if an answer has them, like every list.
 * 401 bad token, 404 unknown project (`MetalApiError`).
 */
export function listProjectApiKeys(
  t: MetalTransport,
  projectId: string,
  opts: IncludeOptions = {},
): Promise<AuthToken[]> {
  return t.list<AuthToken>(
    { path: `/projects/${seg(projectId)}/api-keys`, include: opts.include, exclude: opts.exclude },
    'api_keys',
  );
}

/**
 * `POST /projects/{id}/api-keys` (AuthTokenInput) → 201 AuthToken with its `token`. Not resent
 * when no answer arrives: re-list by description instead (a second create makes a second key).
 * 401, 404 unknown project, 422 invalid input.
 */
export function createProjectApiKey(
  t: MetalTransport,
  projectId: string,
  input: AuthTokenInput,
): Promise<AuthToken> {
  return t.json<AuthToken>({
    method: 'POST',
    path: `/projects/${seg(projectId)}/api-keys`,
    body: input,
  });
}

/** `DELETE /api-keys/{id}` → 204 `'deleted'`, 404 `'absent'`. */
export function deleteApiKey(t: MetalTransport, id: string): Promise<'deleted' | 'absent'> {
  return deleted(t.request({ method: 'DELETE', path: `/api-keys/${seg(id)}` }));
}

/**
 * The three operations as an interface, so platform code can take an in-memory fake in unit
 * tests; {@link apiKeysApi} is the HTTP implementation.
 */
export interface ApiKeysApi {
  listProjectApiKeys(projectId: string): Promise<AuthToken[]>;
  createProjectApiKey(projectId: string, input: AuthTokenInput): Promise<AuthToken>;
  deleteApiKey(id: string): Promise<'deleted' | 'absent'>;
}

/** {@link ApiKeysApi} over a transport (e.g. `MetalClient.transport`). */
export function apiKeysApi(t: MetalTransport): ApiKeysApi {
  return {
    listProjectApiKeys: (projectId) => listProjectApiKeys(t, projectId),
    createProjectApiKey: (projectId, input) => createProjectApiKey(t, projectId, input),
    deleteApiKey: (id) => deleteApiKey(t, id),
  };
}
