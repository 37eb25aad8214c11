/**
 * Polling with a deadline, for the waits of the Kubernetes layer (CRD Established, rollouts,
 * transient webhook failures). Polling rather than watching keeps the code small and robust
 * against dropped watch connections; the intervals are short enough for tests and CLI progress.
 */
import { KubeTimeoutError } from './errors.js';

/** Options of a wait. */
export interface WaitOptions {
  /** Give up after this many milliseconds. */
  timeoutMs: number;
  /** First pause between checks (default 250 ms); it grows by half up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest pause between checks (default 2 s). */
  maxIntervalMs?: number;
  /** Stops the wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** What one check found: done (with a value), or not yet (with the state in words). */
export type CheckResult<T> = { done: true; value: T } | { done: false; state: string };

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls `check` until it reports done and returns its value. Throws `KubeTimeoutError` naming
 * `what` and the last state after `timeoutMs`; errors thrown by `check` propagate at once.
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<CheckResult<T>>,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let interval = opts.intervalMs ?? 250;
  const max = opts.maxIntervalMs ?? 2000;
  for (;;) {
    opts.signal?.throwIfAborted();
    const r = await check();
    if (r.done) return r.value;
    const left = deadline - Date.now();
    if (left <= 0) throw new KubeTimeoutError(what, opts.timeoutMs, r.state);
    await sleep(Math.min(interval, left), opts.signal);
    interval = Math.min(interval * 1.5, max);
  }
}
