/**
 * HCL-style safe conversions between primitive types: strings that spell a number or bool convert
 * to it (so `--var count=3` works where a number is expected), numbers and bools convert to strings.
 */
import type { Value } from './values.js';

/** The string form of a string, number or bool; undefined for anything else. */
export function asString(v: Value): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
}

/** A number, or a string holding a decimal number; undefined otherwise. */
export function asNumber(v: Value): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(v))
    return Number(v);
  return undefined;
}

/** A bool, or the string `true` / `false`; undefined otherwise. */
export function asBool(v: Value): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}
