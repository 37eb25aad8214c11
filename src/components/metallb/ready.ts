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

interface WebhookConfigurationView extends KubeObject {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}

/**
 * Resolves once every webhook of the ValidatingWebhookConfiguration `name` has a caBundle. MetalLB
 * ships it without one: its controller's cert-rotator generates the serving certificate and
 * patches the CA in after it starts, and until then the apiserver cannot verify the webhook
 * ("x509: certificate signed by unknown authority"), an error the kube layer rightly does not
 * retry. Throws KubeTimeoutError naming the webhooks still without one.
 */
export async function waitForWebhookCaBundle(ctx: ReadinessContext, name: string): Promise<void> {
  await waitUntil(
    `ValidatingWebhookConfiguration ${name} to carry its CA (injected by the MetalLB controller)`,
    async () => {
      const cfg = await ctx.client.get<WebhookConfigurationView>({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        name,
      });
      const missing = (cfg?.webhooks ?? [])
        .filter((w) => !w.clientConfig?.caBundle)
        .map((w) => w.name);
      if (cfg && missing.length === 0) return { done: true, value: undefined };
      return {
        done: false,
        state: cfg ? `no caBundle yet for ${missing.join(', ')}` : 'not found',
      };
    },
    { timeoutMs: ctx.timeoutMs, signal: ctx.signal },
  );
}
