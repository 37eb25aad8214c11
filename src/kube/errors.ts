/**
 * Typed errors of the Kubernetes layer. The layer never prints; callers (the command layer) turn
 * these into user messages. Every error names the object it is about (`kind namespace/name`) so a
 * message is actionable on its own.
 */

/** Identifies one object in messages: kind, name and (for namespaced kinds) namespace. */
export interface ObjectId {
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/** `Deployment kube-system/coredns`, `Namespace metallb-system`. */
export function describeObject(id: ObjectId): string {
  return `${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
}

/**
 * The Kubernetes API answered with an error `Status`. (`name` is the error class, as for every
 * Error, so that `err.name === 'KubeApiError'` works across module copies; the object's name is
 * `objectName`.)
 */
export class KubeApiError extends Error {
  /** HTTP status code (e.g. 404, 409, 422, 500). */
  readonly status: number;
  /** `Status.reason` (e.g. `NotFound`, `Conflict`, `Invalid`, `InternalError`), or `Unknown`. */
  readonly reason: string;
  /** Kind of the object the request was about. */
  readonly kind: string;
  /** Name of the object the request was about ('' for lists). */
  readonly objectName: string;
  /** Namespace of the object, when namespaced. */
  readonly namespace: string | undefined;
  /** `Status.message` as the API sent it (`message` adds the verb and the object). */
  readonly apiMessage: string;
  /** `Status.details.causes`, when the API sent any. */
  readonly causes: StatusCause[];
  /** What loko was doing, e.g. `apply`, `delete`, `get`. */
  readonly verb: string | undefined;

  constructor(init: {
    status: number;
    reason?: string | undefined;
    message: string;
    kind: string;
    name: string;
    namespace?: string | undefined;
    causes?: StatusCause[] | undefined;
    verb?: string | undefined;
    /** Replaces the API's message in `message` (subclasses summarise; `apiMessage` keeps it). */
    summary?: string | undefined;
    cause?: unknown;
  }) {
    super(
      `${init.verb ? `${init.verb} ` : ''}${describeObject(init)}: ${
        init.summary ?? init.message
      } (HTTP ${init.status}${init.reason ? ` ${init.reason}` : ''})`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'KubeApiError';
    this.status = init.status;
    this.reason = init.reason ?? 'Unknown';
    this.kind = init.kind;
    this.objectName = init.name;
    this.namespace = init.namespace;
    this.apiMessage = init.message;
    this.causes = init.causes ?? [];
    this.verb = init.verb;
  }

  /** The object the failed request was about. */
  get object(): ObjectId {
    return { kind: this.kind, name: this.objectName, namespace: this.namespace };
  }

  /** True for 404 NotFound. */
  get notFound(): boolean {
    return this.status === 404;
  }
}

/** One entry of `Status.details.causes`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** One field another field manager owns, from a server-side apply conflict. */
export interface FieldConflict {
  /** Field path as the API reports it, e.g. `.data.color` or `.spec.replicas`. */
  field: string;
  /** Field manager that owns it, e.g. `kubectl-edit`, `helm`, `before-first-apply`. */
  manager: string;
  /** The API's own text for this conflict. */
  message: string;
}

/**
 * Server-side apply refused to take over fields that another field manager owns (409 Conflict
 * with `FieldManagerConflict` causes). Re-applying with `force: true` takes them over.
 */
export class FieldConflictError extends KubeApiError {
  /** The conflicting fields and who owns each. */
  readonly conflicts: FieldConflict[];

  constructor(
    init: ConstructorParameters<typeof KubeApiError>[0] & { conflicts: FieldConflict[] },
  ) {
    super({
      ...init,
      summary:
        `fields owned by another manager: ` +
        init.conflicts.map((c) => `${c.field} (owned by "${c.manager}")`).join(', ') +
        `; re-apply with force to take them over`,
    });
    this.name = 'FieldConflictError';
    this.conflicts = init.conflicts;
  }
}

/**
 * An admission webhook (or a conversion webhook / aggregated API) did not answer for longer than
 * the retry budget: the API kept failing with "connection refused" / "no endpoints available".
 */
export class WebhookUnavailableError extends KubeApiError {
  /** Name of the webhook as the API reported it (e.g. `vpod.kb.io`), or the service. */
  readonly webhook: string;
  /** How long loko retried, in milliseconds. */
  readonly waitedMs: number;

  constructor(
    init: ConstructorParameters<typeof KubeApiError>[0] & { webhook: string; waitedMs: number },
  ) {
    super({
      ...init,
      summary: `webhook "${init.webhook}" still unavailable after ${Math.round(
        init.waitedMs / 1000,
      )}s: ${init.message}`,
    });
    this.name = 'WebhookUnavailableError';
    this.webhook = init.webhook;
    this.waitedMs = init.waitedMs;
  }
}

/** The API server could not be reached at all (connection refused, TLS failure, reset). */
export class KubeConnectionError extends Error {
  /** API server URL. */
  readonly server: string;
  /** System error code when known (`ECONNREFUSED`, `CERT_HAS_EXPIRED`, ...). */
  readonly code: string | undefined;

  constructor(init: {
    server: string;
    code?: string | undefined;
    reason: string;
    cause?: unknown;
  }) {
    super(
      `Kubernetes API at ${init.server} unreachable: ${init.reason}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'KubeConnectionError';
    this.server = init.server;
    this.code = init.code;
  }
}

/** The API does not serve the object's `apiVersion`/`kind` (missing CRD, typo, removed API). */
export class UnknownKindError extends Error {
  readonly apiVersion: string;
  readonly kind: string;

  constructor(apiVersion: string, kind: string, detail?: string) {
    super(
      `the API server does not serve kind ${kind} in ${apiVersion}` +
        (detail ? ` (${detail})` : '') +
        `; is its CustomResourceDefinition installed?`,
    );
    this.name = 'UnknownKindError';
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

/** A wait (CRD Established, rollout, deletion) did not finish in time. */
export class KubeTimeoutError extends Error {
  /** What was awaited, e.g. `rollout of Deployment kube-system/coredns`. */
  readonly what: string;
  readonly timeoutMs: number;
  /** The last observed state, in words (e.g. `1 of 3 updated replicas are available`). */
  readonly lastState: string;

  constructor(what: string, timeoutMs: number, lastState: string) {
    super(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}: ${lastState}`);
    this.name = 'KubeTimeoutError';
    this.what = what;
    this.timeoutMs = timeoutMs;
    this.lastState = lastState;
  }
}

/** A rollout failed for good (e.g. a Deployment's `ProgressDeadlineExceeded`). */
export class RolloutFailedError extends Error {
  readonly object: ObjectId;
  readonly reason: string;

  constructor(object: ObjectId, reason: string) {
    super(`rollout of ${describeObject(object)} failed: ${reason}`);
    this.name = 'RolloutFailedError';
    this.object = object;
    this.reason = reason;
  }
}

/** A kubeconfig could not be read, parsed or used (missing file, no current context, ...). */
export class KubeconfigError extends Error {
  /** Path of the kubeconfig, when it came from a file. */
  readonly path: string | undefined;

  constructor(message: string, path?: string, cause?: unknown) {
    super(
      path ? `kubeconfig ${path}: ${message}` : `kubeconfig: ${message}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = 'KubeconfigError';
    this.path = path;
  }
}
