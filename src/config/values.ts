/**
 * Runtime values of evaluated lokocfg expressions.
 *
 * Objects are Maps so that user keys such as `__proto__` or `constructor` are plain data.
 * {@link UNKNOWN} stands for a value whose evaluation already produced a diagnostic: everything
 * derived from it is UNKNOWN too and reports nothing more, so one mistake gives one diagnostic.
 */

/** Marker of a value that failed to evaluate (its diagnostic is already recorded). */
export const UNKNOWN: unique symbol = Symbol('unknown');
export type Unknown = typeof UNKNOWN;

export type Value = null | string | number | boolean | Value[] | Map<string, Value> | Unknown;

/** Type name for messages: string, number, bool, null, list, object. */
export function typeName(v: Value): string {
  if (v === null) return 'null';
  if (v === UNKNOWN) return 'unknown';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** A short rendering of a value for messages (`"abc"`, `3`, `[...]`). */
export function show(v: Value): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  if (Array.isArray(v)) return '[...]';
  if (v instanceof Map) return '{...}';
  if (v === UNKNOWN) return '(unknown)';
  return String(v);
}

/** Converts to a plain JSON-like value (objects become records), for tests and JSON output. */
export function toPlain(v: Value): unknown {
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, toPlain(x)]));
  if (v === UNKNOWN) return undefined;
  return v;
}

/** Value equality (deep for lists and objects), used by `==` and `!=`. */
export function valuesEqual(a: Value, b: Value): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => valuesEqual(x, b[i]!));
  }
  if (a instanceof Map && b instanceof Map) {
    return a.size === b.size && [...a].every(([k, x]) => b.has(k) && valuesEqual(x, b.get(k)!));
  }
  return a === b;
}
