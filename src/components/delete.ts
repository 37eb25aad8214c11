/**
 * Removing components from a cluster: deletes exactly the objects loko applied for each
 * component (both loko labels, see src/kube `componentSelector`), custom resources first,
 * Namespaces and CRDs last, and keeps the component's namespace unless asked. Deleting what is
 * already gone is a no-op. Never prints: progress goes through `onProgress`.
 */
import {
  pruneComponent,
  type ApplyProgress,
  type KubeClient,
  type ObjectRef,
} from '../kube/index.js';
import { InterruptedError } from '../util/errors.js';
import { ComponentApplyError, uniqueKinds } from './apply.js';
import { BUILTIN_KINDS, componentCrdKinds } from './kinds.js';
import type { ConfiguredComponent } from './resolve.js';
import type { ComponentContext } from './types.js';

/** What deleting one component did. */
export interface ComponentDeleteReport {
  name: string;
  namespace: string;
  deleted: ObjectRef[];
  /** The component's namespace was kept (no `deleteNamespace`). */
  keptNamespace: boolean;
}

/** Options of {@link deleteComponents}. */
export interface DeleteComponentsOptions {
  /** Delete the component's Namespace objects too (default: keep them). */
  deleteNamespace?: boolean;
  /**
   * Context to render the components with, so the kinds they render are searched (including
   * custom resources of their CRDs). Without it, only the built-in kinds below and the kinds
   * served by the component's own CRDs are searched.
   */
  ctx?: ComponentContext;
  signal?: AbortSignal;
  onProgress?: (e: { component: string; event: ApplyProgress }) => void;
}

/**
 * Deletes what loko applied for each component of `set` (in reverse order, so dependants go
 * before what they depend on) and reports what went. Re-running finds nothing and deletes
 * nothing. Errors: {@link ComponentApplyError} naming the component; InterruptedError on abort.
 */
export async function deleteComponents(
  client: KubeClient,
  set: readonly ConfiguredComponent[],
  opts: DeleteComponentsOptions = {},
): Promise<ComponentDeleteReport[]> {
  const reports: ComponentDeleteReport[] = [];
  for (const c of [...set].reverse()) {
    if (opts.signal?.aborted) throw new InterruptedError();
    const name = c.def.name;
    try {
      const rendered = opts.ctx ? c.def.render(c.config, opts.ctx) : [];
      const kinds = uniqueKinds([
        ...(await componentCrdKinds(client, name)),
        ...rendered,
        ...BUILTIN_KINDS,
      ]);
      const searched = opts.deleteNamespace
        ? kinds
        : kinds.filter((k) => !(k.kind === 'Namespace' && k.apiVersion === 'v1'));
      // Custom resources first: their kinds vanish once their CRD is deleted.
      const custom = searched.filter((k) => !BUILTIN_KINDS.some((b) => b.kind === k.kind));
      const builtin = searched.filter((k) => BUILTIN_KINDS.some((b) => b.kind === k.kind));
      const progress = {
        ...(opts.signal ? { signal: opts.signal } : {}),
        onProgress: (event: ApplyProgress) => opts.onProgress?.({ component: name, event }),
      };
      const deleted = [
        ...(await pruneComponent(client, name, [], custom, progress)),
        ...(await pruneComponent(client, name, [], builtin, progress)),
      ];
      reports.push({
        name,
        namespace: c.def.namespace,
        deleted,
        keptNamespace: !opts.deleteNamespace,
      });
    } catch (err) {
      if (err instanceof InterruptedError) throw err;
      // A request cut by Ctrl-C fails with whatever the transport says; report the interrupt.
      if (opts.signal?.aborted) throw new InterruptedError();
      throw new ComponentApplyError(name, err);
    }
  }
  return reports;
}
