import { unprocessable } from './errors.js';

/** The request body as an object, or a 422 the way the API rejects a non-object body. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw unprocessable('The request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * Reads typed fields out of a request body, collecting every problem so one 422 lists them all
 * (the API also answers with several `errors` at once).
 */
export class Fields {
  readonly errors: string[] = [];

  constructor(private readonly o: Record<string, unknown>) {}

  /** True when the key is present (even if null). */
  has(key: string): boolean {
    return key in this.o && this.o[key] !== undefined;
  }

  string(key: string, opts: { required?: boolean; maxLength?: number } = {}): string | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) {
      if (opts.required) this.errors.push(`${key} is required`);
      return undefined;
    }
    if (typeof v !== 'string') return this.fail(`${key} must be a string`);
    if (opts.required && v.trim() === '') return this.fail(`${key} can't be blank`);
    if (opts.maxLength !== undefined && v.length > opts.maxLength) {
      return this.fail(`${key} is too long (maximum is ${opts.maxLength} characters)`);
    }
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') return this.fail(`${key} must be a boolean`);
    return v;
  }

  int(
    key: string,
    opts: { required?: boolean; min?: number; max?: number } = {},
  ): number | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) {
      if (opts.required) this.errors.push(`${key} is required`);
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isInteger(v))
      return this.fail(`${key} must be an integer`);
    if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) {
      return this.fail(`${key} must be between ${opts.min ?? '-∞'} and ${opts.max ?? '∞'}`);
    }
    return v;
  }

  number(key: string): number | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(`${key} must be a number`);
    return v;
  }

  oneOf<T extends string>(
    key: string,
    values: readonly T[],
    opts: { required?: boolean } = {},
  ): T | undefined {
    const v = this.string(key, opts);
    if (v === undefined) return undefined;
    if (!values.includes(v as T)) return this.fail(`${key} must be one of: ${values.join(', ')}`);
    return v as T;
  }

  stringArray(key: string): string[] | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      return this.fail(`${key} must be an array of strings`);
    }
    return v as string[];
  }

  object(key: string): Record<string, unknown> | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) return this.fail(`${key} must be an object`);
    return v as Record<string, unknown>;
  }

  /** A date-time string (RFC 3339 / ISO 8601). */
  dateTime(key: string): string | undefined {
    const v = this.string(key);
    if (v === undefined) return undefined;
    if (Number.isNaN(Date.parse(v))) return this.fail(`${key} must be a date-time`);
    return v;
  }

  /** Records an error found by the caller. */
  add(message: string): void {
    this.errors.push(message);
  }

  /** Throws one 422 with every collected error. */
  check(): void {
    if (this.errors.length > 0) throw unprocessable(this.errors);
  }

  private fail(message: string): undefined {
    this.errors.push(message);
    return undefined;
  }
}
