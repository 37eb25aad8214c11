/**
 * The `component "cloud-provider-equinix-metal" { ... }` block: its spec (attributes, defaults,
 * descriptions that also feed the JSON Schema) and the typed config it decodes to.
 *
 * Facts about CPEM come from /work/shared/reference/cpem.md (CPEM v3.8.1, the final release).
 */
import type { DecodedBody } from '../../config/decode.js';
import type { DiagnosticSink } from '../../config/diagnostics.js';
import { UUID, type BlockSpec } from '../../config/spec.js';
import type { SourceRange } from '../../config/types.js';

/** Registry name, `component` block label and DaemonSet/ServiceAccount name. */
export const CPEM_NAME = 'cloud-provider-equinix-metal';

/**
 * The pinned image: v3.8.1 is the last CPEM release ever tagged (cpem.md header); from v3.7.0 on
 * releases are published under `quay.io/equinix-oss` (cpem.md §2.4, KubeOne pins this exact
 * reference).
 */
export const CPEM_DEFAULT_IMAGE = 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1';

/** CPEM's load-balancer integrations loko offers (cpem.md §5); `disabled` omits `loadbalancer`. */
export const LOAD_BALANCERS = ['metallb', 'kube-vip', 'empty', 'disabled'] as const;
/** One of {@link LOAD_BALANCERS}. */
export type LoadBalancer = (typeof LOAD_BALANCERS)[number];

/** Default klog verbosity: `--v=2` logs the Metal API calls (cpem.md §7.2; Lokomotive used 2). */
export const DEFAULT_LOG_LEVEL = 2;

/** The typed config of the component; unset optional values are resolved at render time. */
export interface CpemConfig {
  /**
   * The load-balancer integration; undefined = automatic (`metallb` when the metallb component
   * is part of the apply/render, else `disabled`), decided in render from the context.
   */
  loadBalancer?: LoadBalancer;
  /** Container image reference. */
  image: string;
  /** klog verbosity (`--v`), 0..10. */
  logLevel: number;
  /** A Metal API key given in the block (a secret); the context's key (the cluster's) wins. */
  apiKey?: string;
  /** Equinix Metal project UUID for clusters loko did not create; the context's wins. */
  projectId?: string;
  /** Metro code for clusters loko did not create; the context's wins. */
  metro?: string;
}

/** The block spec (see {@link CpemConfig} for the meaning of each attribute). */
export const CPEM_SPEC: BlockSpec = {
  type: 'component',
  description:
    'The Equinix Metal cloud controller manager (CPEM v3.8.1): initialises nodes, moves the control-plane Elastic IP to a healthy controller, and gives Services of type LoadBalancer an Elastic IP.',
  labels: [{ name: 'name', description: 'the component name.' }],
  repeatable: false,
  attributes: [
    {
      name: 'load_balancer',
      description:
        'CPEM load-balancer integration: "metallb" (CPEM writes MetalLB IPAddressPool/BGPPeer/BGPAdvertisement objects in metallb-system), "kube-vip", "empty" (CPEM reserves Elastic IPs and BGP sessions, something else announces them) or "disabled" (no Service load balancers). Default: "disabled", also with the metallb component (MetalLB then assigns Service addresses from its address_pools; in "metallb" mode CPEM would reserve one Elastic IP per Service instead).',
      value: { type: 'string', enum: LOAD_BALANCERS },
    },
    {
      name: 'image',
      description: 'Container image of CPEM.',
      value: { type: 'string' },
      default: CPEM_DEFAULT_IMAGE,
    },
    {
      name: 'log_level',
      description:
        'klog verbosity (--v): 2 logs Metal API calls, 3 adds their bodies, 5 everything.',
      value: { type: 'number', integer: true, minimum: 0 },
      default: DEFAULT_LOG_LEVEL,
    },
    {
      name: 'api_key',
      description:
        'Equinix Metal API key CPEM uses (a secret; only for clusters loko did not create, with --kubeconfig). On clusters loko created, loko creates a project API key described "loko:cluster=<name>" and this attribute is ignored.',
      value: { type: 'string' },
    },
    {
      name: 'project_id',
      description:
        "Equinix Metal project UUID (only for clusters loko did not create; otherwise the cluster's project).",
      value: { type: 'string', pattern: UUID, format: 'a project UUID' },
    },
    {
      name: 'metro',
      description:
        "Metro code where CPEM reserves Elastic IPs for Services (only for clusters loko did not create; otherwise the cluster's metro).",
      value: {
        type: 'string',
        pattern: '^[A-Za-z]{2}$',
        format: 'a two-letter metro code, e.g. "da"',
      },
    },
  ],
  blocks: [],
};

/**
 * Decodes a spec-validated body. Spec checks (enum, pattern, integer) already ran; this adds the
 * upper bound of `log_level` (klog accepts any int, but above 10 nothing more is logged and a
 * typo such as 20 likely meant 2).
 */
export function decodeCpemConfig(
  body: DecodedBody,
  sink: DiagnosticSink,
  where: SourceRange | undefined,
): CpemConfig {
  const val = <T>(name: string): T | undefined => body.attrs.get(name)?.value as T | undefined;
  const range = (name: string): SourceRange | undefined =>
    body.attrs.get(name)?.attr?.expr.range ?? where;
  let logLevel = val<number>('log_level') ?? DEFAULT_LOG_LEVEL;
  if (logLevel > 10) {
    sink.error(
      `log_level ${logLevel} is above 10`,
      'klog verbosity 10 already logs everything; use 2 (API calls) to 5 (everything).',
      range('log_level'),
    );
    logLevel = DEFAULT_LOG_LEVEL;
  }
  const image = val<string>('image') ?? CPEM_DEFAULT_IMAGE;
  if (image.trim() === '') {
    sink.error('image is empty', `Remove it to use ${CPEM_DEFAULT_IMAGE}.`, range('image'));
  }
  const config: CpemConfig = { image: image.trim() === '' ? CPEM_DEFAULT_IMAGE : image, logLevel };
  const lb = val<LoadBalancer>('load_balancer');
  if (lb !== undefined) config.loadBalancer = lb;
  const apiKey = val<string>('api_key');
  if (apiKey !== undefined && apiKey !== '') config.apiKey = apiKey;
  const projectId = val<string>('project_id');
  if (projectId !== undefined) config.projectId = projectId.toLowerCase();
  const metro = val<string>('metro');
  if (metro !== undefined) config.metro = metro.toLowerCase();
  return config;
}
