/**
 * Errors of the Metal client. Both carry the method and the API path (no host, no query string)
 * so a message names the call that failed; neither ever carries the API token (the transport
 * redacts every string it puts into them).
 */
import { STATUS_CODES } from 'node:http';

/** The API answered with a non-success status (or an unusable success body). */
export class MetalApiError extends Error {
  /** HTTP status code of the (last) answer. */
  readonly status: number;
  /** Messages of the API (`{error}` or `{errors[]}`), or a note describing a non-JSON body. */
  readonly errors: string[];
  readonly method: string;
  /** Path relative to the base URL, e.g. `/projects/<id>/devices`, without query string. */
  readonly path: string;
  /** `X-Request-Id` of the answer, when the API sent one (quote it to Equinix support). */
  readonly requestId: string | undefined;
  /** Requests made for this call, retries included. */
  readonly attempts: number;

  constructor(init: {
    status: number;
    statusText?: string;
    errors: string[];
    method: string;
    path: string;
    requestId?: string;
    attempts?: number;
    /** Appended to the message, e.g. why the client gave up retrying. */
    note?: string;
  }) {
    super(formatApiErrorMessage(init));
    this.name = 'MetalApiError';
    this.status = init.status;
    this.errors = init.errors;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId;
    this.attempts = init.attempts ?? 1;
  }

  /** True when one of the API messages matches (substring, case-insensitive, or a RegExp). */
  hasMessage(pattern: string | RegExp): boolean {
    return this.errors.some((m) =>
      typeof pattern === 'string'
        ? m.toLowerCase().includes(pattern.toLowerCase())
        : pattern.test(m),
    );
  }
}

/** No HTTP answer could be obtained: connection refused/reset, DNS failure, timeout. */
export class MetalTransportError extends Error {
  readonly method: string;
  readonly path: string;
  /** `host:port` of the API endpoint. */
  readonly host: string;
  /** System/undici error code when known (`ECONNREFUSED`, `ETIMEDOUT`, ...). */
  readonly code: string | undefined;
  readonly attempts: number;

  constructor(init: {
    method: string;
    path: string;
    host: string;
    code?: string;
    reason: string;
    attempts?: number;
    cause?: unknown;
  }) {
    const attempts = init.attempts ?? 1;
    super(
      `${init.method} ${init.path}: no answer from ${init.host}: ${init.reason}` +
        (attempts > 1 ? ` (gave up after ${attempts} attempts)` : ''),
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'MetalTransportError';
    this.method = init.method;
    this.path = init.path;
    this.host = init.host;
    this.code = init.code;
    this.attempts = attempts;
  }
}

/** Reason phrase for a status code (`fetch` may leave `statusText` empty). */
export function statusText(status: number, given?: string): string {
  return given && given.length > 0 ? given : (STATUS_CODES[status] ?? '');
}

function formatApiErrorMessage(init: {
  status: number;
  statusText?: string;
  errors: string[];
  method: string;
  path: string;
  attempts?: number;
  note?: string;
}): string {
  const reason = statusText(init.status, init.statusText);
  let msg = `${init.method} ${init.path}: ${init.status}${reason ? ` ${reason}` : ''}`;
  if (init.errors.length > 0) msg += `: ${init.errors.join('; ')}`;
  const extra: string[] = [];
  if (init.attempts !== undefined && init.attempts > 1) {
    extra.push(`gave up after ${init.attempts} attempts`);
  }
  if (init.note) extra.push(init.note);
  if (extra.length > 0) msg += ` (${extra.join('; ')})`;
  return msg;
}

/** The error every aborted wait or request rejects with (`name === 'AbortError'`). */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The Metal API call was aborted', 'AbortError');
}

/** True for the error an aborted call rejects with. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}
