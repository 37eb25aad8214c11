/**
 * CPEM's config file `cloud-sa.json` (cpem.md §1.2, §1.3): JSON read with Go `encoding/json`,
 * keys matched case-insensitively, unknown keys ignored; env vars would override it but loko sets
 * none, so this file is the whole configuration.
 */
import { BGP_ENABLED_LABEL, type ComponentContext } from '../types.js';
import type { CpemConfig, LoadBalancer } from './config.js';

/**
 * The value written for `apiKey`/`projectID` when render does not know them (`component render`
 * without a cluster and without `api_key`). CPEM would start and fail every Metal API call with
 * 401, so the Secret also carries {@link PLACEHOLDER_ANNOTATION} naming the placeholders.
 */
export const PLACEHOLDER = 'loko-placeholder-not-configured';

export { PLACEHOLDER_ANNOTATION } from '../types.js';

/**
 * `bgpNodeSelector`: CPEM creates BGP sessions only for nodes with this label (packet-ccm #100,
 * fixed by PR #101 in v3.0.0; cpem.md §6). Pools choose with `loko.dev/bgp-enabled=true|false`
 * (DESIGN.md §3), as Lokomotive did with `lokomotive.alpha.kinvolk.io/bgp-enabled=true`.
 */
export const BGP_NODE_SELECTOR = `${BGP_ENABLED_LABEL}=true`;

/** Namespace MetalLB runs in (the metallb component's, and CPEM's CRD-mode default, cpem.md §5.3). */
export const METALLB_NAMESPACE = 'metallb-system';

/**
 * The `loadbalancer` URL for each choice (cpem.md §5): MetalLB in CRD mode (`crdConfiguration=true`,
 * v3.6.0+; MetalLB ≥0.13 has no ConfigMap config), the no-op `kube-vip://` and `empty://`
 * implementors; `disabled` leaves the key out, which turns the LB interface off (an empty string
 * means disabled, cpem.md §1.2).
 */
export function loadBalancerUrl(lb: LoadBalancer): string | undefined {
  switch (lb) {
    case 'metallb':
      return `metallb:///${METALLB_NAMESPACE}?crdConfiguration=true`;
    case 'kube-vip':
      return 'kube-vip://';
    case 'empty':
      return 'empty://';
    case 'disabled':
      return undefined;
  }
}

/**
 * The load balancer in effect: the block's choice, else `disabled`, also when the metallb
 * component is installed. In `metallb` mode CPEM reserves one Elastic IP per LoadBalancer Service
 * and writes its own MetalLB pools and peers (cpem.md §5.1-5.3), so the addresses of the metallb
 * component's `address_pools` would go unused and every Service would cost a reservation; loko's
 * model is lokoctl's (MetalLB owns the addresses, CPEM does nodes and the control-plane Elastic
 * IP). `ctx` is kept for the signature's sake: the choice does not depend on other components.
 */
export function effectiveLoadBalancer(config: CpemConfig, _ctx: ComponentContext): LoadBalancer {
  return config.loadBalancer ?? 'disabled';
}

/** The `cloud-sa.json` fields loko writes, in the order they are serialised. */
export interface CloudSaJson {
  apiKey: string;
  projectID: string;
  metro?: string;
  eipTag?: string;
  apiServerPort?: number;
  bgpNodeSelector: string;
  loadbalancer?: string;
}

/** `cloud-sa.json` plus the names of fields that hold {@link PLACEHOLDER}. */
export interface CloudConfig {
  json: CloudSaJson;
  /** The file's bytes: JSON with keys in a fixed order, so re-renders are byte-identical. */
  text: string;
  placeholders: string[];
}

/**
 * Builds `cloud-sa.json`. The context wins over the block (a cluster loko created always uses the
 * key loko made for it). `eipTag`/`apiServerPort` are set only when the cluster has a
 * control-plane Elastic IP: with an empty `eipTag` CPEM leaves the control plane alone
 * (cpem.md §5.6). `apiServerPort` is the port the apiserver serves on at the EIP, checked by
 * CPEM's health check `https://<EIP>:<port>/healthz`.
 */
export function cloudConfig(config: CpemConfig, ctx: ComponentContext): CloudConfig {
  const placeholders: string[] = [];
  const apiKey = ctx.metalApiKey ?? config.apiKey;
  const projectId = ctx.projectId ?? config.projectId;
  if (apiKey === undefined) placeholders.push('apiKey');
  if (projectId === undefined) placeholders.push('projectID');
  const metro = ctx.metro ?? config.metro;
  const lb = loadBalancerUrl(effectiveLoadBalancer(config, ctx));
  // Built in one fixed order: JSON.stringify keeps insertion order.
  const json: CloudSaJson = {
    apiKey: apiKey ?? PLACEHOLDER,
    projectID: projectId ?? PLACEHOLDER,
    ...(metro !== undefined ? { metro } : {}),
    ...(ctx.controlPlaneEndpoint
      ? {
          eipTag: ctx.controlPlaneEndpoint.eipTag,
          apiServerPort: ctx.controlPlaneEndpoint.port,
        }
      : {}),
    bgpNodeSelector: BGP_NODE_SELECTOR,
    ...(lb !== undefined ? { loadbalancer: lb } : {}),
  };
  return { json, text: JSON.stringify(json), placeholders };
}
