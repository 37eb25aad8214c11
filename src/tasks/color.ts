/**
 * Colour decisions (DESIGN.md §7): colour only on a TTY, never with `NO_COLOR` (any non-empty
 * value, per no-color.org) or `--no-color`.
 */
import { Chalk, type ChalkInstance } from 'chalk';

/** Inputs of the colour decision for one stream. */
export interface ColorInput {
  /** `--no-color` was given. */
  noColorFlag: boolean;
  env: Record<string, string | undefined>;
  isTTY: boolean;
}

/** True when output to a stream with these properties may be coloured. */
export function shouldColor(input: ColorInput): boolean {
  if (input.noColorFlag) return false;
  if (input.env.NO_COLOR !== undefined && input.env.NO_COLOR !== '') return false;
  return input.isTTY;
}

/** A chalk instance that colours only when {@link shouldColor} says so. */
export function colorFor(input: ColorInput): ChalkInstance {
  return new Chalk({ level: shouldColor(input) ? 1 : 0 });
}
