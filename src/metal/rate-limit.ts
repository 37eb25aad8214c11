/**
 * Client-side rate limit of the Metal client: a token bucket shared by every request of one
 * client, implemented as GCRA (generic cell rate algorithm) so that waiting callers are
 * scheduled in arrival order without a timer per token.
 *
 * `reserve()` is synchronous: it books the next free slot and returns how long the caller must
 * wait before using it. N parallel callers therefore get slots `1/rate` apart (after the first
 * `burst` ones), i.e. at most `burst + rate·T − 1` requests start in any window of T seconds.
 */
export class TokenBucket {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  /** Theoretical arrival time of the next request (ms on the `now()` clock). */
  private tat: number;
  /** No request may start before this (set by {@link holdUntil}). */
  private heldUntil = -Infinity;

  constructor(
    requestsPerSecond: number,
    burst: number,
    private readonly now: () => number,
  ) {
    if (!(requestsPerSecond > 0) || !Number.isFinite(requestsPerSecond)) {
      throw new RangeError(`requestsPerSecond must be a positive number, got ${requestsPerSecond}`);
    }
    if (!(burst >= 1) || !Number.isFinite(burst)) {
      throw new RangeError(`burst must be at least 1, got ${burst}`);
    }
    this.intervalMs = 1000 / requestsPerSecond;
    this.toleranceMs = (Math.floor(burst) - 1) * this.intervalMs;
    this.tat = now();
  }

  /** Books one request slot; resolves the wait in ms (0 when a token is available now). */
  reserve(): number {
    const t = this.now();
    const tat = Math.max(this.tat, t);
    const allowAt = tat - this.toleranceMs;
    this.tat = tat + this.intervalMs;
    return Math.max(0, allowAt - t);
  }

  /**
   * No slot before `untilMs` (the API said "slow down": 429 with Retry-After/X-RateLimit-Reset).
   * Requests booked afterwards resume at the normal pace, without a burst.
   */
  holdUntil(untilMs: number): void {
    this.heldUntil = Math.max(this.heldUntil, untilMs);
    this.tat = Math.max(this.tat, untilMs + this.toleranceMs);
  }

  /**
   * Ms left of a hold (0 when none). A caller that booked its slot before the hold was set must
   * check this once its wait is over and book again: the API's "slow down" covers it too.
   */
  heldFor(): number {
    return Math.max(0, this.heldUntil - this.now());
  }
}
