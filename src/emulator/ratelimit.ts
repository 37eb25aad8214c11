/** Outcome of one request against the rate limit. */
export type RateDecision =
  | { allowed: true; limit: number; remaining: number; resetAt: number }
  | { allowed: false; limit: number; remaining: 0; resetAt: number; retryAfterSeconds: number };

/**
 * A token bucket in real (not virtual) time: `perSecond` tokens per second, burst of
 * `perSecond`. Disabled (everything allowed) while `perSecond` is null.
 */
export class RateLimiter {
  private perSecond: number | null = null;
  private tokens = 0;
  private last = 0;

  constructor(
    perSecond: number | null = null,
    private readonly nowMs: () => number = () => Date.now(),
  ) {
    this.set(perSecond);
  }

  /** Current limit (requests per second) or null when off. */
  get limit(): number | null {
    return this.perSecond;
  }

  /** Sets or removes (null) the limit; a new limit starts with a full bucket. */
  set(perSecond: number | null): void {
    if (perSecond !== null && (!Number.isFinite(perSecond) || perSecond <= 0)) {
      throw new RangeError(`perSecond must be a positive number or null, got ${perSecond}`);
    }
    this.perSecond = perSecond;
    this.tokens = perSecond ?? 0;
    this.last = this.nowMs();
  }

  /** Takes a token for one request; undefined when no limit is set. */
  take(): RateDecision | undefined {
    const rate = this.perSecond;
    if (rate === null) return undefined;
    const now = this.nowMs();
    this.tokens = Math.min(rate, this.tokens + ((now - this.last) / 1000) * rate);
    this.last = now;
    const limit = Math.ceil(rate);
    // X-RateLimit-Reset: Unix seconds when the bucket is full again.
    const resetAt = Math.ceil((now + ((rate - this.tokens) / rate) * 1000) / 1000);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { allowed: true, limit, remaining: Math.floor(this.tokens), resetAt };
    }
    const waitMs = ((1 - this.tokens) / rate) * 1000;
    return {
      allowed: false,
      limit,
      remaining: 0,
      resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
    };
  }
}
