/**
 * A small Kubernetes client over `@kubernetes/client-node` 1.x: server-side apply, get, list,
 * delete and discovery for any kind, with typed errors.
 *
 * It uses client-node's `KubernetesObjectApi` for discovery (which resource serves a kind, is it
 * namespaced), authentication and TLS, and sends bodies as plain JSON: client-node's own `patch()`
 * re-serialises built-in kinds through its generated model classes, which drops any field its
 * models do not know (newer API fields) and turns timestamps into `Date`s. Apply must send exactly
 * what was rendered, so the request is built here on the same request context instead.
 */
import {
  ApiException,
  HttpMethod,
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import {
  FieldConflictError,
  KubeApiError,
  KubeConnectionError,
  UnknownKindError,
  type FieldConflict,
  type StatusCause,
} from './errors.js';
import { loadKubeconfig, type LoadKubeconfigOptions } from './kubeconfig.js';
import type { KubeObject, ObjectRef } from './objects.js';
import { sleep } from './wait.js';

/** Field manager loko applies with. */
export const FIELD_MANAGER = 'loko';

/** How the API server treats unknown or duplicate fields in a request body. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Options of one server-side apply. */
export interface ApplyRequestOptions {
  /** Field manager (default `loko`). */
  fieldManager?: string;
  /** Take over fields other managers own (default false: conflicts throw `FieldConflictError`). */
  force?: boolean;
  /**
   * Validate and compute the result without persisting it. (Custom resources of a CRD that the
   * same dry run would create cannot be checked: the API does not serve their kind yet.)
   */
  dryRun?: boolean;
  /** Default `Strict`: unknown fields are an error, not a silent drop. */
  fieldValidation?: FieldValidation;
}

/** Options of `KubeClient.list`. */
export interface ListOptions {
  /** Namespace to list in; omitted lists across all namespaces (or a cluster-scoped kind). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Options of `KubeClient.delete`. */
export interface DeleteOptions {
  /** Default `Background`. */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
}

/** Options of a `KubeClient`. */
export interface KubeClientOptions {
  /** Per-request timeout in milliseconds (default 30 s). */
  requestTimeoutMs?: number;
}

/** Where a kind is served: its resource (plural) name and whether it is namespaced. */
export interface ResourceInfo {
  name: string;
  namespaced: boolean;
}

type Json = Record<string, unknown>;

/**
 * `KubernetesObjectApi` that returns plain JSON (no model classes) and times requests out.
 * @internal
 */
class PlainObjectApi extends KubernetesObjectApi {
  requestTimeoutMs = 30_000;

  protected override async requestPromise<T>(
    ctx: RequestContext,
    type?: string,
    options?: Parameters<KubernetesObjectApi['create']>[4],
  ): Promise<T> {
    if (!ctx.getSignal()) ctx.setSignal(AbortSignal.timeout(this.requestTimeoutMs));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return super.requestPromise(ctx, type, options as any) as Promise<T>;
  }

  protected override async processResponse<T>(response: ResponseContext): Promise<T> {
    const text = await response.body.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      /* keep the text */
    }
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) return body as T;
    throw new ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', body, {
      ...response.headers,
    });
  }

  /** Path of the object (or of its collection for `list`), resolved through discovery. */
  async pathFor(spec: KubeObject, action: 'patch' | 'read' | 'list' | 'delete'): Promise<string> {
    // specUriPath fills in a missing namespace; give it a copy.
    const copy = { ...spec, metadata: { ...spec.metadata } };
    return this.specUriPath(copy as Parameters<KubernetesObjectApi['create']>[0], action);
  }

  async send<T>(method: HttpMethod, path: string, init: RequestInit = {}): Promise<T> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, method);
    ctx.setHeaderParam('Accept', 'application/json');
    for (const [k, v] of Object.entries(init.query ?? {})) {
      if (v !== undefined) ctx.setQueryParam(k, v);
    }
    if (init.body !== undefined) {
      ctx.setHeaderParam('Content-Type', init.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(init.body));
    }
    return this.requestPromise<T>(ctx);
  }

  async resourceInfo(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    const r = await this.resource(apiVersion, kind);
    return r ? { name: r.name, namespaced: r.namespaced } : undefined;
  }

  forget(apiVersion?: string): void {
    if (apiVersion) delete this.apiVersionResourceCache[apiVersion];
    else this.apiVersionResourceCache = {};
  }
}

interface RequestInit {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

/** A Kubernetes API client for loko's needs: apply, get, list, delete any kind. */
export class KubeClient {
  /** API server URL of the kubeconfig's current context. */
  readonly server: string;
  private readonly api: PlainObjectApi;

  /** Creates a client for the current context of `kc`. */
  constructor(kc: KubeConfig, opts: KubeClientOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server;
    this.api = kc.makeApiClient(PlainObjectApi);
    if (opts.requestTimeoutMs) this.api.requestTimeoutMs = opts.requestTimeoutMs;
  }

  /** Creates a client from a kubeconfig file (see `loadKubeconfig`). */
  static fromFile(path: string, opts: KubeClientOptions & LoadKubeconfigOptions = {}): KubeClient {
    return new KubeClient(loadKubeconfig(path, opts), opts);
  }

  /**
   * Server-side apply of `obj` (PATCH `application/apply-patch+yaml`) with field manager `loko`
   * and `force: false` unless told otherwise. Returns the object as stored.
   * Throws `FieldConflictError` when another manager owns a field `obj` sets.
   */
  async apply<T extends KubeObject>(obj: T, opts: ApplyRequestOptions = {}): Promise<T> {
    return this.applyTo(obj, '', opts);
  }

  /**
   * Server-side apply to the `status` subresource (for controllers and tests that play one).
   * `obj` carries only the status fields this manager owns.
   */
  async applyStatus<T extends KubeObject>(obj: T, opts: ApplyRequestOptions = {}): Promise<T> {
    return this.applyTo(obj, '/status', opts);
  }

  private async applyTo<T extends KubeObject>(
    obj: T,
    subresource: string,
    opts: ApplyRequestOptions,
  ): Promise<T> {
    return this.call('apply', obj, async () => {
      const path = (await this.api.pathFor(obj, 'patch')) + subresource;
      return this.api.send<T>(HttpMethod.PATCH, path, {
        contentType: PatchStrategy.ServerSideApply,
        body: obj,
        query: {
          fieldManager: opts.fieldManager ?? FIELD_MANAGER,
          force: opts.force ? 'true' : 'false',
          fieldValidation: opts.fieldValidation ?? 'Strict',
          dryRun: opts.dryRun ? 'All' : undefined,
        },
      });
    });
  }

  /** Reads one object; `undefined` when it does not exist. */
  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const spec = specOf(ref);
    try {
      return await this.call('get', spec, async () =>
        this.api.send<T>(HttpMethod.GET, await this.api.pathFor(spec, 'read')),
      );
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Lists objects of a kind (all pages). */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: ListOptions = {},
  ): Promise<T[]> {
    const spec = specOf({ apiVersion, kind, name: '', namespace: opts.namespace });
    return this.call('list', spec, async () => {
      const path = await this.api.pathFor(spec, 'list');
      const items: T[] = [];
      let cont: string | undefined;
      do {
        const page = await this.api.send<{ items?: T[]; metadata?: { continue?: string } }>(
          HttpMethod.GET,
          path,
          {
            query: {
              labelSelector: opts.labelSelector,
              fieldSelector: opts.fieldSelector,
              limit: '500',
              continue: cont,
            },
          },
        );
        // List items carry no apiVersion/kind; put them back so items can be applied/referenced.
        for (const it of page.items ?? []) items.push({ ...it, apiVersion, kind });
        cont = page.metadata?.continue || undefined;
      } while (cont);
      return items;
    });
  }

  /** Deletes one object; resolves false when it did not exist. */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    const spec = specOf(ref);
    try {
      await this.call('delete', spec, async () =>
        this.api.send(HttpMethod.DELETE, await this.api.pathFor(spec, 'delete'), {
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            propagationPolicy: opts.propagationPolicy ?? 'Background',
            ...(opts.gracePeriodSeconds !== undefined
              ? { gracePeriodSeconds: opts.gracePeriodSeconds }
              : {}),
          },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * Where the API serves `kind` of `apiVersion` (cached discovery); `undefined` when it does not.
   * Throws `UnknownKindError` when the group/version itself is not served.
   */
  async resourceInfo(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    try {
      return await this.api.resourceInfo(apiVersion, kind);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw toKubeError(err, 'discover', { kind, name: '' }, this.server);
    }
  }

  /** Drops cached discovery (after a CRD was created or changed). */
  forgetDiscovery(apiVersion?: string): void {
    this.api.forget(apiVersion);
  }

  private async call<T>(verb: string, obj: KubeObject, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        // 429: the request was not processed (API priority and fairness, or a custom resource's
        // storage "(re)initializing" after its CRD changed): wait as told and send it again.
        if (err instanceof ApiException && err.code === 429 && attempt < MAX_429_ATTEMPTS) {
          await sleep(retryAfterMs(err.headers, attempt));
          continue;
        }
        throw this.kubeError(err, verb, obj);
      }
    }
  }

  private kubeError(err: unknown, verb: string, obj: KubeObject): Error {
    return toKubeError(
      err,
      verb,
      { kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace },
      this.server,
      obj.apiVersion,
    );
  }
}

/** Attempts of a request the API answers 429 (about 20 s of waiting in all). */
const MAX_429_ATTEMPTS = 8;

/** Retry-After in milliseconds (seconds form), else 0.5 s growing per attempt, at most 5 s. */
function retryAfterMs(headers: unknown, attempt: number): number {
  const h = (headers ?? {}) as Record<string, string | undefined>;
  const s = Number(h['retry-after'] ?? h['Retry-After']);
  if (Number.isFinite(s) && s > 0) return Math.min(s, 5) * 1000;
  return Math.min(500 * attempt, 5000);
}

function specOf(ref: ObjectRef): KubeObject {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  };
}

/** Parses one `FieldManagerConflict` cause (`conflict with "kubectl" using v1: .data.key`). */
export function parseConflictCause(cause: StatusCause): FieldConflict {
  const message = cause.message ?? '';
  const manager = /conflict with "([^"]*)"/.exec(message)?.[1] ?? 'unknown';
  const field = cause.field ?? /: (\S+)$/.exec(message)?.[1] ?? '';
  return { field, manager, message };
}

/**
 * Maps what client-node throws to this layer's typed errors: an `ApiException` becomes a
 * `KubeApiError` (a 409 with field-manager conflicts a `FieldConflictError`), a discovery miss an
 * `UnknownKindError`, a network failure a `KubeConnectionError`. Typed errors pass through.
 */
export function toKubeError(
  err: unknown,
  verb: string,
  id: { kind: string; name: string; namespace?: string | undefined },
  server: string,
  apiVersion = '',
): Error {
  if (
    err instanceof KubeApiError ||
    err instanceof KubeConnectionError ||
    err instanceof UnknownKindError
  ) {
    return err;
  }
  if (err instanceof ApiException) {
    const body = (typeof err.body === 'object' && err.body !== null ? err.body : {}) as Json;
    const details = (body.details ?? {}) as { causes?: StatusCause[] };
    const causes = Array.isArray(details.causes) ? details.causes : [];
    const message =
      typeof body.message === 'string'
        ? body.message
        : typeof err.body === 'string' && err.body
          ? err.body.slice(0, 500)
          : `HTTP ${err.code}`;
    if (/^Failed to fetch resource metadata for /.test(err.message) && err.code === 404) {
      return new UnknownKindError(apiVersion, id.kind, `${apiVersion} is not served`);
    }
    const init = {
      status: err.code,
      reason: typeof body.reason === 'string' ? body.reason : undefined,
      message,
      kind: id.kind,
      name: id.name,
      namespace: id.namespace,
      causes,
      verb,
      cause: err,
    };
    const conflicts = causes.filter((c) => c.reason === 'FieldManagerConflict');
    if (err.code === 409 && conflicts.length > 0) {
      return new FieldConflictError({ ...init, conflicts: conflicts.map(parseConflictCause) });
    }
    return new KubeApiError(init);
  }
  if (err instanceof Error) {
    const m = /^Unrecognized API version and kind: (\S+) (\S+)/.exec(err.message);
    if (m) return new UnknownKindError(m[1]!, m[2]!);
    const e = err as Error & { code?: string; type?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code;
    if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.type === 'aborted') {
      return new KubeConnectionError({
        server,
        code: 'ETIMEDOUT',
        reason: `${verb} ${id.kind} ${id.name}: request timed out`,
        cause: err,
      });
    }
    if (e.name === 'FetchError' || (code && /^E[A-Z]+$|CERT|SSL|TLS/.test(code))) {
      return new KubeConnectionError({ server, code, reason: e.message, cause: err });
    }
    return err;
  }
  return new Error(String(err));
}
