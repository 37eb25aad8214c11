/**
 * Readiness of MetalLB's admission webhook: the apiserver can call it once the webhook Service
 * has a ready endpoint (the controller pod passed its readiness probe). Until then creating a
 * metallb.io object fails with "failed calling webhook ... no endpoints available" or
 * "connection refused"; the kube layer retries exactly that class (src/kube/retry.ts), and this
 * check keeps those retries short.
 */
import type { KubeObject } from '../../kube/objects.js';
import { waitUntil } from '../../kube/wait.js';
import type { ReadinessContext } from '../types.js';

interface EndpointSliceView extends KubeObject {
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } }[];
  ports?: { port?: number | null }[] | null;
}

/**
 * Number of ready endpoint addresses of `namespace/service` from its EndpointSlices
 * (`discovery.k8s.io/v1`, label `kubernetes.io/service-name`). A nil `ready` condition counts as
 * ready, as the EndpointSlice API documents.
 */
export function readyAddresses(slices: readonly EndpointSliceView[]): number {
  let n = 0;
  for (const s of slices) {
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      n += e.addresses?.length ?? 0;
    }
  }
  return n;
}

/**
 * Resolves once `namespace/service` has at least one ready endpoint; throws KubeTimeoutError
 * (naming the Service and what was seen) after `ctx.timeoutMs`, or the signal's reason on abort.
 */
export async function waitForWebhookEndpoints(
  ctx: ReadinessContext,
  namespace: string,
  service: string,
): Promise<void> {
  await waitUntil(
    `webhook Service ${namespace}/${service} to have a ready endpoint`,
    async () => {
      const slices = await ctx.client.list<EndpointSliceView>(
        'discovery.k8s.io/v1',
        'EndpointSlice',
        {
          namespace,
          labelSelector: `kubernetes.io/service-name=${service}`,
        },
      );
      const ready = readyAddresses(slices);
      if (ready > 0) return { done: true, value: undefined };
      const total = slices.reduce((a, s) => a + (s.endpoints?.length ?? 0), 0);
      return {
        done: false,
        state:
          slices.length === 0
            ? 'no EndpointSlice yet (is the controller Deployment scheduled?)'
            : `${total} endpoint(s), none ready (the controller pod is not Ready)`,
      };
    },
    { timeoutMs: ctx.timeoutMs, signal: ctx.signal },
  );
}
