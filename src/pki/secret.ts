/**
 * A secret value that does not leak by accident: `String(s)`, template literals, `JSON.stringify`,
 * `console.log`/`util.inspect` and vitest's diffs all show `[redacted]`. The only way to the value
 * is {@link Secret.reveal}, so every place that writes a secret somewhere is greppable.
 */
import { timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';

const REDACTED = '[redacted]';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret itself. Call it only where the value is written to its destination. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }

  /** Constant-time comparison with another secret. */
  equals(other: Secret): boolean {
    const a = Buffer.from(this.#value);
    const b = Buffer.from(other.reveal());
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
