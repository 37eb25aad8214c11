/**
 * The cluster's project API key: the credential the Equinix Metal CCM (CPEM) runs with, instead of
 * the user's token (issue 4). One key per cluster, in the cluster's project, found by its
 * description `loko:cluster=<name>` (API keys have no tags; DESIGN.md §3); deleted by destroy.
 *
 * Writes are typed mutations performed by the platform executor (executor.ts, through
 * {@link ApiKeyExecutor}), so a dry run lists them and never calls the API.
 *
 * Tokens: the spec's AuthToken carries `token` in list answers too, so a re-run reuses the key
 * it finds. If an answer withholds it (empty or absent), loko deletes that key and creates a new
 * one rather than keeping a copy of the secret on disk: the key serves only the CCM, whose config
 * Secret loko re-renders with the new token in the same apply (its checksum annotation rolls the
 * pods), so a rotation costs nothing and no second copy of the secret exists to leak or go stale.
 */
import type { ApiKeysApi, AuthToken } from '../../metal/api-keys.js';
import { isUncertain } from './api-errors.js';
import { throwIfAborted } from './poll.js';
import { clusterTag } from './tags.js';

/** `POST /projects/{projectId}/api-keys {description, read_only: false}`. */
export interface CreateApiKeyMutation {
  kind: 'create-api-key';
  projectId: string;
  /** `loko:cluster=<name>`. */
  description: string;
}

/** `DELETE /api-keys/{id}`; 404 resolves `'absent'`. */
export interface DeleteApiKeyMutation {
  kind: 'delete-api-key';
  id: string;
  /** The key's description, for messages. */
  description: string;
}

/** The API-key writes. */
export type ApiKeyMutation = CreateApiKeyMutation | DeleteApiKeyMutation;

/** What executing each API-key mutation resolves. */
export type ApiKeyMutationResult<M extends ApiKeyMutation> = M extends CreateApiKeyMutation
  ? AuthToken
  : 'deleted' | 'absent';

/**
 * What {@link ensureClusterApiKey} and the destroy phase need of an executor. The platform
 * `Executor` satisfies it once its `Mutation` union includes {@link ApiKeyMutation}. The result is
 * `unknown` here because TypeScript cannot relate that executor's generic result type to
 * {@link ApiKeyMutationResult}; callers read it as {@link ApiKeyMutationResult} of the kind
 * they passed (which both executors return).
 */
export interface ApiKeyExecutor {
  readonly dryRun: boolean;
  execute(m: ApiKeyMutation): Promise<unknown>;
}

/** The description identifying the API key of `clusterName`: `loko:cluster=<name>`. */
export function apiKeyDescription(clusterName: string): string {
  return clusterTag(clusterName);
}

/** The keys among `keys` that belong to `clusterName` (exact description match). */
export function clusterApiKeys(keys: readonly AuthToken[], clusterName: string): AuthToken[] {
  const d = apiKeyDescription(clusterName);
  return keys.filter((k) => k.description === d);
}

/** True when CPEM can run with `k`: it has a token and may write. */
export function isUsableKey(k: AuthToken): boolean {
  return typeof k.token === 'string' && k.token !== '' && k.read_only !== true;
}

/** The key kept when several are usable: the oldest, then the smallest id (stable across runs). */
export function chooseKey(keys: readonly AuthToken[]): AuthToken | undefined {
  return [...keys].sort(
    (a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? '') || a.id.localeCompare(b.id),
  )[0];
}

/** A key without its secret, safe to keep in inventories and show. */
export interface ApiKeyRef {
  id: string;
  description: string;
}

/** The cluster's key as ensured. `token` is a secret. */
export interface ClusterApiKey {
  id: string;
  token: string;
  /** True when this call created it. */
  created: boolean;
  /** Keys of the cluster this call deleted (duplicates, read-only or token-less ones). */
  deleted: ApiKeyRef[];
}

/**
 * Finds the project API key described `loko:cluster=<clusterName>` or creates it, and returns it
 * with its token. Of several usable keys the oldest is kept and the others deleted (one key per
 * cluster); keys CPEM cannot use (read-only, or listed without a token) are deleted and a new one
 * is created. All writes go through `executor`; in dry-run mode the token returned is a
 * placeholder and nothing is written.
 *
 * Rejects with the Metal client's errors (`MetalApiError` 401/404 for a bad token or project).
 */
export async function ensureClusterApiKey(input: {
  api: ApiKeysApi;
  executor: ApiKeyExecutor;
  projectId: string;
  clusterName: string;
}): Promise<ClusterApiKey> {
  const description = apiKeyDescription(input.clusterName);
  const mine = clusterApiKeys(
    await input.api.listProjectApiKeys(input.projectId),
    input.clusterName,
  );
  const keep = chooseKey(mine.filter(isUsableKey));
  const deleted: ApiKeyRef[] = [];
  // The replacement exists before any old key goes: a failed create leaves the running CCM its
  // (unusable but present) key rather than none, and the next run tries again.
  let created: AuthToken | undefined;
  if (!keep) {
    created = (await input.executor.execute({
      kind: 'create-api-key',
      projectId: input.projectId,
      description,
    })) as AuthToken;
    if (!isUsableKey(created)) {
      // A 201 without a token leaves CPEM without credentials: say so rather than render "".
      throw new Error(`the Metal API created API key ${created.id} but returned no token for it`);
    }
  }
  for (const k of mine) {
    if (k === keep) continue;
    await input.executor.execute({ kind: 'delete-api-key', id: k.id, description });
    deleted.push({ id: k.id, description });
  }
  if (keep) return { id: keep.id, token: keep.token!, created: false, deleted };
  created = created!;
  return { id: created.id, token: created.token!, created: true, deleted };
}

/**
 * Reads (never writes) the key {@link ensureClusterApiKey} would keep: the oldest usable key
 * described `loko:cluster=<clusterName>`, or undefined. For `component render`, which must not
 * create anything. `token` is a secret.
 */
export async function findClusterApiKey(input: {
  api: ApiKeysApi;
  projectId: string;
  clusterName: string;
}): Promise<{ id: string; token: string } | undefined> {
  const keys = clusterApiKeys(
    await input.api.listProjectApiKeys(input.projectId),
    input.clusterName,
  );
  const k = chooseKey(keys.filter(isUsableKey));
  return k ? { id: k.id, token: k.token! } : undefined;
}

/** Options of {@link performApiKeyMutation}. */
export interface PerformOptions {
  signal?: AbortSignal;
  /** Extra create attempts after an uncertain failure proved (by re-listing) to have created nothing. */
  createRetries?: number;
  debug?: (msg: string) => void;
}

/**
 * Performs one API-key mutation. A create is never resent blindly: after an uncertain answer
 * (transport error, 5xx, 429) the project's keys are re-listed and a usable one with the
 * description is adopted; only when none exists is the create attempted again.
 */
export async function performApiKeyMutation<M extends ApiKeyMutation>(
  api: ApiKeysApi,
  m: M,
  opts: PerformOptions = {},
): Promise<ApiKeyMutationResult<M>> {
  if (m.kind === 'delete-api-key') {
    return (await api.deleteApiKey(m.id)) as ApiKeyMutationResult<M>;
  }
  const attempts = 1 + (opts.createRetries ?? 1);
  for (let attempt = 1; ; attempt++) {
    try {
      return (await api.createProjectApiKey(m.projectId, {
        description: m.description,
        read_only: false,
      })) as ApiKeyMutationResult<M>;
    } catch (err) {
      if (!isUncertain(err)) throw err;
      opts.debug?.(`create API key ${m.description}: uncertain answer; re-listing`);
      const found = chooseKey(
        (await api.listProjectApiKeys(m.projectId)).filter(
          (k) => k.description === m.description && isUsableKey(k),
        ),
      );
      if (found) {
        opts.debug?.(`create API key: adopted ${found.id} found by re-listing`);
        return found as ApiKeyMutationResult<M>;
      }
      if (attempt >= attempts) throw err;
      throwIfAborted(opts.signal);
    }
  }
}

/** The token a dry run reports for a key it did not create (never sent anywhere). */
export const DRY_RUN_API_KEY_TOKEN = 'dry-run-placeholder-token';

/** A plausible answer for a recorded API-key mutation, so callers need no dry-run branches. */
export function dryRunApiKeyResult<M extends ApiKeyMutation>(m: M): ApiKeyMutationResult<M> {
  if (m.kind === 'delete-api-key') return 'deleted' as ApiKeyMutationResult<M>;
  return {
    id: 'dry-run:cluster-api-key',
    token: DRY_RUN_API_KEY_TOKEN,
    description: m.description,
    read_only: false,
  } as ApiKeyMutationResult<M>;
}

/** One line describing an API-key mutation (never the token). */
export function describeApiKeyMutation(m: ApiKeyMutation): string {
  return m.kind === 'create-api-key'
    ? `create the cluster's project API key "${m.description}" (for the cloud controller manager)`
    : `delete the cluster's project API key "${m.description}" (${m.id})`;
}

/** The API call of an API-key mutation, e.g. `DELETE /api-keys/<id>` (for `-o json` plans). */
export function apiKeyMutationCall(m: ApiKeyMutation): string {
  return m.kind === 'create-api-key'
    ? `POST /projects/${m.projectId}/api-keys`
    : `DELETE /api-keys/${m.id}`;
}
