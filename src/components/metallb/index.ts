/**
 * MetalLB v0.16.2, native BGP speaker (not FRR; docs/components/metallb.md says why), rendered
 * from the pinned upstream `config/manifests/metallb-native.yaml` plus loko's configuration
 * objects: one `IPAddressPool` per address pool and one `BGPAdvertisement` of all of them.
 *
 * BGP peers are not rendered here: the cloud controller manager (CPEM, load balancer "metallb")
 * creates one `BGPPeer` per BGP-enabled node from the Metal API's BGP neighbours.
 */
import type { KubeObject } from '../../kube/objects.js';
import type {
  ReadinessCheck,
  ComponentContext,
  ComponentDefinition,
  UpstreamManifest,
} from '../types.js';
import { upstreamObjects } from '../upstream/parse.js';
import { decodeMetallb, METALLB_SPEC, type MetallbConfig, type Toleration } from './config.js';
import { waitForWebhookCaBundle, waitForWebhookEndpoints } from './ready.js';

export type { MetallbConfig, AddressPool, Toleration } from './config.js';
export { METALLB_SPEC, decodeMetallb } from './config.js';

/** Registry name and `component "metallb"` label. */
export const METALLB_NAME = 'metallb';
/** Namespace of the upstream manifest. */
export const METALLB_NAMESPACE = 'metallb-system';
/** The Service in front of the controller's admission and conversion webhook (upstream name). */
export const METALLB_WEBHOOK_SERVICE = 'metallb-webhook-service';
/** Name of the one BGPAdvertisement loko renders (CPEM's own is `equinix-metal-bgp-adv`). */
export const METALLB_ADVERTISEMENT = 'loko';

/**
 * MetalLB v0.16.2's native manifest, pinned by tag and digest (sha256 verified against the tag's
 * raw file and the Go module zip `go.universe.tf/metallb@v0.16.2`; images
 * `quay.io/metallb/{controller,speaker}:v0.16.2`).
 */
export const METALLB_MANIFEST: UpstreamManifest = {
  name: 'metallb-native',
  url: 'https://raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml',
  sha256: 'e5f7c268f114c446dc60aaad71b7cabf861f637743e033e354d7d48592807c6d',
  goModule: {
    module: 'go.universe.tf/metallb',
    version: 'v0.16.2',
    path: 'config/manifests/metallb-native.yaml',
  },
};

interface PodSpecView {
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

function podSpecOf(obj: KubeObject): PodSpecView | undefined {
  const spec = obj.spec as { template?: { spec?: PodSpecView } } | undefined;
  return spec?.template?.spec;
}

/** Adds selectors (user's win on equal keys) and tolerations (appended, duplicates skipped). */
function patchPodSpec(
  pod: PodSpecView,
  selectors: Record<string, string>,
  tolerations: readonly Toleration[],
): void {
  if (Object.keys(selectors).length > 0)
    pod.nodeSelector = { ...(pod.nodeSelector ?? {}), ...selectors };
  if (tolerations.length > 0) {
    const existing = pod.tolerations ?? [];
    const key = (t: Toleration) =>
      JSON.stringify([t.key, t.operator ?? 'Equal', t.value, t.effect, t.tolerationSeconds]);
    const have = new Set(existing.map(key));
    pod.tolerations = [...existing, ...tolerations.filter((t) => !have.has(key(t)))];
  }
}

/**
 * Renders MetalLB: the upstream objects (controller/speaker patched with the configured node
 * selectors and tolerations; the `creationTimestamp: null` upstream's generator left on the
 * ValidatingWebhookConfiguration dropped) + an `IPAddressPool` per pool + one
 * `BGPAdvertisement`. Pure and deterministic.
 */
export function renderMetallb(cfg: MetallbConfig, ctx: ComponentContext): KubeObject[] {
  const objects = upstreamObjects(ctx.upstream, METALLB_MANIFEST.name, METALLB_NAME);
  for (const obj of objects) {
    if ('creationTimestamp' in obj.metadata && obj.metadata.creationTimestamp == null) {
      delete obj.metadata.creationTimestamp;
    }
    const pod = podSpecOf(obj);
    if (!pod) continue;
    if (obj.kind === 'Deployment' && obj.metadata.name === 'controller') {
      patchPodSpec(pod, cfg.controllerNodeSelectors, cfg.controllerTolerations);
    } else if (obj.kind === 'DaemonSet' && obj.metadata.name === 'speaker') {
      patchPodSpec(pod, cfg.speakerNodeSelectors, cfg.speakerTolerations);
    }
  }
  for (const pool of cfg.addressPools) {
    objects.push({
      apiVersion: 'metallb.io/v1beta1',
      kind: 'IPAddressPool',
      metadata: { name: pool.name, namespace: METALLB_NAMESPACE },
      spec: { addresses: [...pool.addresses] },
    });
  }
  if (cfg.addressPools.length > 0) {
    objects.push({
      apiVersion: 'metallb.io/v1beta1',
      kind: 'BGPAdvertisement',
      metadata: { name: METALLB_ADVERTISEMENT, namespace: METALLB_NAMESPACE },
      // Listing the pools keeps CPEM's own pools (autoAssign false, its own advertisement) apart.
      spec: { ipAddressPools: cfg.addressPools.map((p) => p.name) },
    });
  }
  return objects;
}

/** Ready once the webhook Service has a ready endpoint (its CRs pass admission from then on). */
export const METALLB_WEBHOOK_READY: ReadinessCheck = {
  description: `MetalLB webhook serves (${METALLB_NAMESPACE}/${METALLB_WEBHOOK_SERVICE} has a ready endpoint)`,
  wait: (rctx) => waitForWebhookEndpoints(rctx, METALLB_NAMESPACE, METALLB_WEBHOOK_SERVICE),
};

/** Name of MetalLB's ValidatingWebhookConfiguration (upstream manifest). */
export const METALLB_WEBHOOK_CONFIGURATION = 'metallb-webhook-configuration';

/** Ready once the controller injected its CA into the webhook configuration. */
export const METALLB_WEBHOOK_CA_READY: ReadinessCheck = {
  description: `MetalLB webhook trusted (${METALLB_WEBHOOK_CONFIGURATION} carries its caBundle)`,
  wait: (rctx) => waitForWebhookCaBundle(rctx, METALLB_WEBHOOK_CONFIGURATION),
};

/** The MetalLB component. */
export const metallb: ComponentDefinition<MetallbConfig> = {
  name: METALLB_NAME,
  description: 'MetalLB v0.16.2 (native BGP speaker): LoadBalancer Services from address pools',
  namespace: METALLB_NAMESPACE,
  bootstrap: false,
  dependsOn: [],
  spec: METALLB_SPEC,
  decode: decodeMetallb,
  upstream: [METALLB_MANIFEST],
  render: renderMetallb,
  customResourceGroups: ['metallb.io'],
  ready: [METALLB_WEBHOOK_READY, METALLB_WEBHOOK_CA_READY],
};
