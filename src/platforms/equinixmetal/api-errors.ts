/**
 * Classification of Metal client errors for convergence decisions. Duck-typed on the fields of
 * `MetalApiError` / `MetalTransportError` (src/metal) so the platform does not care which copy of
 * the class was thrown.
 */

/** HTTP status of a `MetalApiError`, or undefined for anything else. */
export function apiStatus(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'status' in err) {
    const s = (err as { status: unknown }).status;
    if (typeof s === 'number') return s;
  }
  return undefined;
}

/** True for a transport failure (no HTTP answer): the request may or may not have happened. */
export function isTransportError(err: unknown): boolean {
  return err instanceof Error && err.name === 'MetalTransportError';
}

/**
 * True when a mutation may have taken effect although it reported an error: transport errors,
 * 5xx answers and 429 after the client's own retries. Callers must re-read state before retrying.
 */
export function isUncertain(err: unknown): boolean {
  if (isTransportError(err)) return true;
  const s = apiStatus(err);
  return s !== undefined && (s >= 500 || s === 429);
}

/** 404: the object is already gone, which for a delete means done. */
export function isNotFound(err: unknown): boolean {
  return apiStatus(err) === 404;
}

/** 422: Metal refused for a business rule (e.g. deleting a device that is still provisioning). */
export function isUnprocessable(err: unknown): boolean {
  return apiStatus(err) === 422;
}
