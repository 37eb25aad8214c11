/**
 * The CNI: flannel with its VXLAN backend, rendered from the pinned upstream
 * `Documentation/kube-flannel.yml` of flannel v0.28.10 with the pod network set to the cluster's
 * pod CIDR (docs/components/flannel.md says why flannel).
 *
 * Why flannel: the long-time CNI of kubeadm tutorials, one manifest with no operator or CRDs,
 * and it speaks no BGP: Calico's BIRD binds TCP 179 on every node, which the BGP issue's
 * port-179 guard keeps free for MetalLB's speakers; flannel's VXLAN uses UDP 8472.
 */
import type { DecodedBody } from '../../config/decode.js';
import { DEFAULT_POD_CIDR } from '../../config/defaults.js';
import type { DiagnosticSink } from '../../config/diagnostics.js';
import type { BlockSpec } from '../../config/spec.js';
import type { SourceRange } from '../../config/types.js';
import type { KubeObject } from '../../kube/objects.js';
import { LokoError } from '../../util/errors.js';
import type { ComponentContext, ComponentDefinition, UpstreamManifest } from '../types.js';
import { upstreamObjects } from '../upstream/parse.js';

/** Registry name and `component "flannel"` label. */
export const FLANNEL_NAME = 'flannel';
/** Namespace of the upstream manifest. */
export const FLANNEL_NAMESPACE = 'kube-flannel';
/** ConfigMap holding `net-conf.json` (upstream name). */
export const FLANNEL_CONFIGMAP = 'kube-flannel-cfg';
/** The DaemonSet (upstream name). */
export const FLANNEL_DAEMONSET = 'kube-flannel-ds';

/**
 * flannel v0.28.10's manifest, pinned by tag and digest (sha256 verified against the tag's raw
 * file and the Go module zip `github.com/flannel-io/flannel@v0.28.10`; images
 * `ghcr.io/flannel-io/flannel:v0.28.10` and `ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel3`).
 */
export const FLANNEL_MANIFEST: UpstreamManifest = {
  name: 'kube-flannel',
  url: 'https://raw.githubusercontent.com/flannel-io/flannel/v0.28.10/Documentation/kube-flannel.yml',
  sha256: '944a3c1f925f117727a1b7272a323c80965da642498397ec7e6ea9bef0f9e6c5',
  goModule: {
    module: 'github.com/flannel-io/flannel',
    version: 'v0.28.10',
    path: 'Documentation/kube-flannel.yml',
  },
};

/** The typed config of the flannel component. */
export interface FlannelConfig {
  /**
   * UDP port of the VXLAN backend (flannel's `Backend.Port`); undefined keeps flannel's default
   * 8472 (the Linux kernel's VXLAN port, not IANA's 4789).
   */
  vxlanPort?: number;
  /** Pod network (`pod_cidr`) for a cluster loko did not create; else the cluster block's. */
  podCidr?: string;
}

/** The block spec: the CNI needs nothing from the user; only the VXLAN port is tunable. */
export const FLANNEL_SPEC: BlockSpec = {
  type: 'component',
  description:
    'The CNI: flannel v0.28.10 with the VXLAN backend, pod network = the cluster pod CIDR. Always installed by cluster apply; this block only tunes it.',
  labels: [{ name: 'name', description: 'the component name.' }],
  repeatable: false,
  attributes: [
    {
      name: 'vxlan_port',
      description:
        "UDP port of the VXLAN overlay between nodes (flannel Backend.Port). Default: flannel's 8472. Set 4789 (IANA) when a firewall between nodes only allows that. Changing it on a running cluster needs the flannel pods restarted on every node at once.",
      value: { type: 'number', integer: true, minimum: 1 },
    },
    {
      name: 'pod_cidr',
      description:
        "Pod network for a cluster loko did not create (component apply --kubeconfig without a cluster block): it must equal kube-controller-manager's --cluster-cidr (kubeadm podSubnet). Default: the cluster block's pod_cidr.",
      value: {
        type: 'string',
        pattern:
          '^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])$',
        format: 'an IPv4 CIDR such as "10.244.0.0/16"',
      },
    },
  ],
  blocks: [],
};

function decodeFlannel(
  body: DecodedBody,
  sink: DiagnosticSink,
  _where: SourceRange | undefined,
): FlannelConfig {
  const out: FlannelConfig = {};
  const cidr = body.attrs.get('pod_cidr');
  if (typeof cidr?.value === 'string') out.podCidr = cidr.value;
  const port = body.attrs.get('vxlan_port');
  if (port?.value === undefined || typeof port.value !== 'number') return out;
  if (port.value > 65535) {
    sink.error(
      'Invalid value for "vxlan_port"',
      `vxlan_port must be a UDP port 1..65535, got ${port.value}.`,
      port.attr?.expr.range,
    );
    return out;
  }
  return { ...out, vxlanPort: port.value };
}

/**
 * Rewrites flannel's `net-conf.json`: `Network` = the pod CIDR, backend VXLAN (with `Port` when
 * configured); every other key of upstream's file (e.g. `EnableNFTables`) is kept. Pure;
 * deterministic (two-space JSON with a trailing newline, like upstream).
 */
export function renderNetConf(upstreamText: string, podCidr: string, cfg: FlannelConfig): string {
  let conf: Record<string, unknown>;
  try {
    conf = JSON.parse(upstreamText) as Record<string, unknown>;
  } catch (err) {
    throw new LokoError(
      `flannel: the pinned manifest's net-conf.json is not JSON: ${(err as Error).message}`,
    );
  }
  const backend: Record<string, unknown> = {
    ...((conf.Backend as Record<string, unknown> | undefined) ?? {}),
    Type: 'vxlan',
  };
  if (cfg.vxlanPort !== undefined) backend.Port = cfg.vxlanPort;
  return `${JSON.stringify({ ...conf, Network: podCidr, Backend: backend }, null, 2)}\n`;
}

/** Renders flannel's objects: upstream's, with `net-conf.json` set from the context. Pure. */
export function renderFlannel(cfg: FlannelConfig, ctx: ComponentContext): KubeObject[] {
  const objects = upstreamObjects(ctx.upstream, FLANNEL_MANIFEST.name, FLANNEL_NAME);
  const podCidr = cfg.podCidr ?? ctx.podCidr ?? DEFAULT_POD_CIDR;
  let found = false;
  for (const obj of objects) {
    if (obj.kind === 'ConfigMap' && obj.metadata.name === FLANNEL_CONFIGMAP) {
      const data = (obj.data ?? {}) as Record<string, string>;
      const net = data['net-conf.json'];
      if (net === undefined) break;
      obj.data = { ...data, 'net-conf.json': renderNetConf(net, podCidr, cfg) };
      found = true;
    }
  }
  if (!found) {
    throw new LokoError(
      `flannel: the pinned manifest has no ConfigMap ${FLANNEL_NAMESPACE}/${FLANNEL_CONFIGMAP} with net-conf.json`,
    );
  }
  return objects;
}

/** The flannel component (bootstrap: installed by every cluster apply). */
export const flannel: ComponentDefinition<FlannelConfig> = {
  name: FLANNEL_NAME,
  description: 'CNI: flannel v0.28.10 (VXLAN), pod network from the cluster pod CIDR',
  namespace: FLANNEL_NAMESPACE,
  bootstrap: true,
  dependsOn: [],
  spec: FLANNEL_SPEC,
  decode: decodeFlannel,
  upstream: [FLANNEL_MANIFEST],
  render: renderFlannel,
};
