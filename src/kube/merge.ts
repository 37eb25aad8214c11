/**
 * Merging a kubeconfig (loko's admin kubeconfig) into another one (the user's `~/.kube/config`)
 * with an explicit policy for entries whose name is taken by something different: `fail` (the
 * default: nothing is written), `rename` (loko's entries get a free name), `overwrite` (loko's
 * entries replace the others). An entry identical to one already there is left as it is; a context
 * is never replaced without `overwrite`. Pure: text in, text out.
 */
import { parse, stringify } from 'yaml';
import { KubeconfigError } from './errors.js';

/** What to do with an entry whose name exists with different content. */
export type ConflictPolicy = 'fail' | 'rename' | 'overwrite';
export const CONFLICT_POLICIES: readonly ConflictPolicy[] = ['fail', 'rename', 'overwrite'];

type Kind = 'cluster' | 'user' | 'context';
const LISTS: Record<Kind, 'clusters' | 'users' | 'contexts'> = {
  cluster: 'clusters',
  user: 'users',
  context: 'contexts',
};

/** What happened to one entry of the merged kubeconfig. */
export interface MergeChange {
  kind: Kind;
  /** The entry's name in the result. */
  name: string;
  action: 'added' | 'unchanged' | 'replaced' | 'renamed';
  /** For `renamed` (or an earlier renamed copy found `unchanged`): its name in the merged-in kubeconfig. */
  from?: string;
}

/** One entry whose name is taken by a different entry. */
export interface MergeConflict {
  kind: Kind;
  name: string;
}

/** The merge would replace entries and the policy is `fail`. Nothing was written. */
export class KubeconfigConflictError extends KubeconfigError {
  readonly conflicts: MergeConflict[];
  constructor(path: string | undefined, conflicts: MergeConflict[]) {
    super(
      `already has ${conflicts.map((c) => `${c.kind} "${c.name}"`).join(', ')} with different content`,
      path,
    );
    this.name = 'KubeconfigConflictError';
    this.conflicts = conflicts;
  }
}

/** Result of {@link mergeKubeconfig}. */
export interface MergeResult {
  text: string;
  changes: MergeChange[];
  /** loko's context in the result (renamed or not). */
  context: string;
  /** The result's current context (set to loko's only when the target had none). */
  currentContext: string;
}

interface Named {
  name: string;
  [k: string]: unknown;
}
interface Config {
  apiVersion?: string;
  kind?: string;
  clusters?: Named[];
  users?: Named[];
  contexts?: Array<Named & { context?: { cluster?: string; user?: string } }>;
  'current-context'?: string;
  preferences?: unknown;
  [k: string]: unknown;
}

/**
 * Merges `source` (kubeconfig text with one context) into `target` (kubeconfig text, or undefined
 * for a new file). Throws {@link KubeconfigConflictError} under `fail` when a cluster, user or
 * context of `source` exists in `target` with different content; `KubeconfigError` for
 * unparseable input. `targetPath` only names the file in errors.
 */
export function mergeKubeconfig(
  target: string | undefined,
  source: string,
  policy: ConflictPolicy,
  targetPath?: string,
): MergeResult {
  const into = read(target, targetPath) ?? {};
  const from = read(source, undefined);
  if (!from) throw new KubeconfigError('the kubeconfig to merge is empty');
  const sourceContext = from['current-context'] ?? from.contexts?.[0]?.name;
  if (!sourceContext) throw new KubeconfigError('the kubeconfig to merge has no context');

  const out: Config = {
    apiVersion: 'v1',
    kind: 'Config',
    ...into,
    clusters: [...(into.clusters ?? [])],
    users: [...(into.users ?? [])],
    contexts: [...(into.contexts ?? [])],
  };
  const conflicts: MergeConflict[] = [];
  const changes: MergeChange[] = [];
  const renamed: Record<Kind, Map<string, string>> = {
    cluster: new Map(),
    user: new Map(),
    context: new Map(),
  };

  for (const kind of ['cluster', 'user', 'context'] as const) {
    const list = out[LISTS[kind]] as Named[];
    for (const original of (from[LISTS[kind]] ?? []) as Named[]) {
      let entry = original;
      if (kind === 'context') {
        // References follow the clusters and users renamed above.
        const c = (entry as { context?: { cluster?: string; user?: string } }).context ?? {};
        entry = {
          ...entry,
          context: {
            ...c,
            ...(c.cluster ? { cluster: renamed.cluster.get(c.cluster) ?? c.cluster } : {}),
            ...(c.user ? { user: renamed.user.get(c.user) ?? c.user } : {}),
          },
        };
      }
      const at = list.findIndex((e) => e.name === entry.name);
      if (at < 0) {
        list.push(entry);
        changes.push({ kind, name: entry.name, action: 'added' });
      } else if (canonical(list[at]) === canonical(entry)) {
        changes.push({ kind, name: entry.name, action: 'unchanged' });
      } else if (policy === 'overwrite') {
        list[at] = entry;
        changes.push({ kind, name: entry.name, action: 'replaced' });
      } else if (policy === 'rename') {
        const name = freeName(list, entry);
        renamed[kind].set(entry.name, name);
        // A second `rename` merge of the same kubeconfig finds its renamed copy already there.
        if (list.some((e) => e.name === name)) {
          changes.push({ kind, name, action: 'unchanged', from: entry.name });
        } else {
          list.push({ ...entry, name });
          changes.push({ kind, name, action: 'renamed', from: entry.name });
        }
      } else {
        conflicts.push({ kind, name: entry.name });
      }
    }
  }
  if (conflicts.length > 0) throw new KubeconfigConflictError(targetPath, conflicts);

  const context = renamed.context.get(sourceContext) ?? sourceContext;
  if (!out['current-context']) out['current-context'] = context;
  out.preferences ??= {};
  return {
    text: stringify(out, { lineWidth: 0 }),
    changes,
    context,
    currentContext: out['current-context'],
  };
}

/**
 * The first of `<name>-2`, `<name>-3`, … that is free, or an identical entry already stored under
 * such a name (a second `rename` merge of the same kubeconfig adds nothing).
 */
function freeName(list: Named[], entry: Named): string {
  for (let i = 2; ; i++) {
    const name = `${entry.name}-${i}`;
    const taken = list.find((e) => e.name === name);
    if (!taken || canonical({ ...taken, name: entry.name }) === canonical(entry)) return name;
  }
}

function read(text: string | undefined, path: string | undefined): Config | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeconfigError(`cannot parse: ${(err as Error).message}`, path, err);
  }
  if (doc === null || doc === undefined) return undefined;
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new KubeconfigError('is not a kubeconfig (expected a mapping)', path);
  }
  const c = doc as Config;
  for (const key of ['clusters', 'users', 'contexts'] as const) {
    const list = c[key];
    if (list !== undefined && list !== null && !Array.isArray(list)) {
      throw new KubeconfigError(`is not a kubeconfig: "${key}" is not a list`, path);
    }
    if (list === null) delete c[key];
  }
  return c;
}

/** JSON with sorted keys: equal for equal content. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );
}
