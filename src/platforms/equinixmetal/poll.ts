/**
 * Time and polling: one injectable clock so waits are testable without real time, and one poll loop
 * with backoff, an overall timeout and cancellation at each sleep.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { InterruptedError } from '../../util/errors.js';

/** Milliseconds clock with an abortable sleep. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with {@link InterruptedError} when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  async sleep(ms, signal) {
    try {
      await delay(ms, undefined, signal ? { signal } : undefined);
    } catch (err) {
      if (signal?.aborted) throw new InterruptedError();
      throw err;
    }
  },
};

/** Throws {@link InterruptedError} when `signal` has aborted: the "safe point" check. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError();
}

/** Poll timing. Intervals grow by `factor` from `intervalMs` up to `maxIntervalMs`. */
export interface PollOptions {
  intervalMs: number;
  maxIntervalMs: number;
  factor: number;
  /** Overall budget from the first round, in ms. */
  timeoutMs: number;
  clock: Clock;
  signal?: AbortSignal;
}

/** Defaults for waiting on device state: 2 s growing to 10 s, 30 min overall. */
export const DEFAULT_POLL: Omit<PollOptions, 'clock' | 'signal'> = {
  intervalMs: 2_000,
  maxIntervalMs: 10_000,
  factor: 1.5,
  timeoutMs: 30 * 60_000,
};

/**
 * Calls `round` until it returns a value other than `undefined`, sleeping between rounds.
 * Rejects with `onTimeout()` when the budget is spent, with {@link InterruptedError} when the
 * signal aborts (checked before each round and during each sleep), or with `round`'s error.
 */
export async function pollUntil<T>(
  opts: PollOptions,
  round: (n: number) => Promise<T | undefined>,
  onTimeout: () => Error,
): Promise<T> {
  const start = opts.clock.now();
  let interval = opts.intervalMs;
  for (let n = 0; ; n++) {
    throwIfAborted(opts.signal);
    const result = await round(n);
    if (result !== undefined) return result;
    const elapsed = opts.clock.now() - start;
    if (elapsed >= opts.timeoutMs) throw onTimeout();
    await opts.clock.sleep(Math.min(interval, opts.timeoutMs - elapsed), opts.signal);
    interval = Math.min(interval * opts.factor, opts.maxIntervalMs);
  }
}
