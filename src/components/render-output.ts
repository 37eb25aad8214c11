/**
 * Rendered objects as text: multi-document YAML (`component render`), with Secret values
 * redacted unless asked, so a render can be shared or pasted without leaking credentials.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../kube/objects.js';

/** What a redacted Secret value shows. */
export const REDACTED = '<redacted>';

/**
 * A copy of `obj` where every value of a core/v1 Secret's `data` and `stringData` is
 * {@link REDACTED} (keys stay visible). Other objects are returned unchanged.
 */
export function redactSecrets(obj: KubeObject): KubeObject {
  if (obj.kind !== 'Secret' || obj.apiVersion !== 'v1') return obj;
  const out: KubeObject = { ...obj };
  for (const field of ['data', 'stringData'] as const) {
    const values = obj[field];
    if (values && typeof values === 'object') {
      out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
    }
  }
  return out;
}

/**
 * `objects` as multi-document YAML: each document starts with `---`, keys in the order the
 * render produced them, long strings not folded. Secret values are {@link REDACTED} unless
 * `showSecrets`.
 */
export function renderYaml(
  objects: readonly KubeObject[],
  opts: { showSecrets?: boolean } = {},
): string {
  return objects
    .map((o) => {
      const shown = opts.showSecrets ? o : redactSecrets(o);
      return `---\n${stringify(shown, { lineWidth: 0, aliasDuplicateObjects: false })}`;
    })
    .join('');
}
