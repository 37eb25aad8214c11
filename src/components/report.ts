/**
 * One line for what applying a component did; light (types only), so commands can format
 * progress without loading the applier.
 */
import type { ComponentReport } from './apply.js';

/** `3 created, 2 unchanged` (the non-zero counts of `r`), or `nothing to apply`. */
export function summarizeReport(r: ComponentReport): string {
  const parts = [
    r.created && `${r.created} created`,
    r.configured && `${r.configured} configured`,
    r.unchanged && `${r.unchanged} unchanged`,
    r.pruned && `${r.pruned} pruned`,
    r.skipped && `${r.skipped} skipped`,
  ].filter(Boolean);
  return parts.join(', ') || 'nothing to apply';
}
