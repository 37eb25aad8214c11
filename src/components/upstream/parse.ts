/**
 * Pure parsing of pinned upstream manifests into objects components render from. The text is a
 * verified multi-document YAML stream (`---` separated, as `kubectl apply -f` takes it); empty
 * documents (comments only, a leading `---`) are skipped, and `List` kinds are flattened.
 */
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../kube/objects.js';
import { LokoError } from '../../util/errors.js';

/**
 * Parses a multi-document manifest into KubeObjects, in file order. `source` names the manifest in
 * errors (e.g. the pinned URL). Throws a LokoError on invalid YAML or a document that is not an
 * object with `apiVersion`, `kind` and `metadata.name`.
 */
export function parseManifest(text: string, source: string): KubeObject[] {
  const out: KubeObject[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: false });
  if (!Array.isArray(docs)) {
    throw new LokoError(`${source}: not a YAML document stream`);
  }
  docs.forEach((doc, i) => {
    if (doc.errors.length > 0) {
      throw new LokoError(`${source}: YAML document ${i + 1}: ${doc.errors[0]!.message}`);
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value === null || value === undefined) return;
    for (const obj of flatten(value)) out.push(checkObject(obj, source, i + 1));
  });
  return out;
}

function flatten(value: unknown): unknown[] {
  const v = value as { kind?: unknown; items?: unknown };
  if (
    v &&
    typeof v === 'object' &&
    typeof v.kind === 'string' &&
    v.kind.endsWith('List') &&
    Array.isArray(v.items)
  ) {
    return v.items;
  }
  return [value];
}

function checkObject(value: unknown, source: string, doc: number): KubeObject {
  const v = value as Partial<KubeObject> | null;
  if (
    !v ||
    typeof v !== 'object' ||
    Array.isArray(v) ||
    typeof v.apiVersion !== 'string' ||
    typeof v.kind !== 'string' ||
    !v.metadata ||
    typeof v.metadata.name !== 'string'
  ) {
    throw new LokoError(
      `${source}: YAML document ${doc} is not a Kubernetes object (apiVersion, kind, metadata.name)`,
    );
  }
  return v as KubeObject;
}

/**
 * The parsed objects of upstream manifest `name` from a render context's `upstream` map. Throws a
 * LokoError naming the manifest when the framework did not provide it (a wiring bug, or a render
 * without fetched manifests).
 */
export function upstreamObjects(
  upstream: ReadonlyMap<string, string>,
  name: string,
  component: string,
): KubeObject[] {
  const text = upstream.get(name);
  if (text === undefined) {
    throw new LokoError(
      `component ${component}: upstream manifest ${name} was not provided to render`,
      { hint: 'The framework fetches pinned manifests before rendering (fetchUpstreamManifests).' },
    );
  }
  return parseManifest(text, name);
}

/** Deep copy of JSON-shaped objects, so a render never mutates (or shares) parsed input. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
