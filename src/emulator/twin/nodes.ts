/**
 * The machines' side of the twin: what a kubelet registers, what `kubeadm join` checks before it
 * lets a machine join, and what the Equinix Metal CCM adds once it runs.
 *
 * A joining machine goes through kubeadm's token discovery against the twin's apiserver, for
 * real: it fetches `kube-public/cluster-info` anonymously, requires the controller-manager's JWS
 * signature for its token id and verifies it with the token's secret, pins the CA in it against
 * `caCertHashes`, and then authenticates with the token (the apiserver's bootstrap-token
 * authenticator checks it against the `bootstrap-token-<id>` Secret: existence, secret,
 * expiration, usage). Only then does its Node appear. kwok then plays its kubelet.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse } from 'yaml';
import { isCcmContainer } from './ccm.js';
import { caCertHash } from './certs.js';
import type { KubeApi } from './kube-api.js';
import { NETWORK_ANNOTATION, NETWORK_READY } from './stages.js';
import type { MachineSpec, TaintSpec } from './userdata.js';

/** What the emulator knows of a device (as the Metal API shows it). */
export interface DeviceFacts {
  id: string;
  hostname: string;
  plan: string;
  metro: string;
  facility: string;
  publicV4?: string;
  privateV4?: string;
  /** Logical CPUs and memory of the plan, for the node's capacity. */
  cpus?: number;
  memoryBytes?: number;
}

/** Names the twin sets besides what a kubelet would. */
export const DEVICE_ANNOTATION = 'emulator.loko.dev/device-id';
export const UNINITIALIZED_TAINT: TaintSpec = {
  key: 'node.cloudprovider.kubernetes.io/uninitialized',
  value: 'true',
  effect: 'NoSchedule',
};

/** The labels, providerID and addresses the Equinix Metal CCM gives a node. */
export function cloudFacts(device: DeviceFacts): {
  providerID: string;
  labels: Record<string, string>;
  addresses: Array<{ type: string; address: string }>;
} {
  return {
    providerID: `equinixmetal://${device.id}`,
    labels: {
      'node.kubernetes.io/instance-type': device.plan,
      'topology.kubernetes.io/region': device.metro,
      'topology.kubernetes.io/zone': device.facility,
    },
    addresses: [
      { type: 'Hostname', address: device.hostname },
      ...(device.publicV4 ? [{ type: 'ExternalIP', address: device.publicV4 }] : []),
      ...(device.privateV4 ? [{ type: 'InternalIP', address: device.privateV4 }] : []),
    ],
  };
}

/**
 * The CPU architecture a kubelet on `plan` reports (`kubernetes.io/arch`): `arm64` for Metal's Arm
 * plans (`c3.large.arm64`, `m3.large.arm64`… the name says so), `amd64` for every x86 plan.
 */
export function archOf(plan: string): 'amd64' | 'arm64' {
  return /arm/i.test(plan) ? 'arm64' : 'amd64';
}

/**
 * The Node a machine's kubelet registers. With `initialized` the CCM's additions are already in
 * (the CCM gate is off, or there is no external cloud provider); otherwise the node carries the
 * `uninitialized` taint and the kubelet's own view of its address. `networkReady` lets kwok mark
 * it Ready.
 */
export function nodeObject(
  spec: MachineSpec,
  device: DeviceFacts,
  opts: { initialized: boolean; networkReady: boolean; kubeletVersion: string },
): Record<string, unknown> {
  const name = spec.nodeName ?? device.hostname;
  const controlPlane = spec.action !== 'join-worker';
  const cloud = cloudFacts(device);
  const arch = archOf(device.plan);
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': arch,
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    ...spec.labels,
    // kubeadm's mark-control-plane phase.
    ...(controlPlane
      ? {
          'node-role.kubernetes.io/control-plane': '',
          'node.kubernetes.io/exclude-from-external-load-balancers': '',
        }
      : {}),
    ...(opts.initialized ? cloud.labels : {}),
  };
  const taints = [
    ...spec.taints,
    ...(opts.initialized || !spec.externalCloudProvider ? [] : [UNINITIALIZED_TAINT]),
  ];
  const capacity = {
    cpu: String(device.cpus ?? 8),
    memory: `${Math.floor((device.memoryBytes ?? 32 * 2 ** 30) / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': `${480 * 2 ** 20}Ki`,
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels,
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        [DEVICE_ANNOTATION]: device.id,
        ...(opts.networkReady ? { [NETWORK_ANNOTATION]: NETWORK_READY } : {}),
      },
    },
    spec: {
      ...(taints.length > 0 ? { taints } : {}),
      ...(opts.initialized ? { providerID: cloud.providerID } : {}),
    },
    status: {
      addresses: opts.initialized
        ? cloud.addresses
        : [
            ...(device.publicV4 ? [{ type: 'InternalIP', address: device.publicV4 }] : []),
            { type: 'Hostname', address: name },
          ],
      capacity,
      allocatable: capacity,
      nodeInfo: {
        architecture: arch,
        operatingSystem: 'linux',
        osImage: 'Ubuntu 24.04 LTS',
        kernelVersion: '6.8.0-emulated',
        containerRuntimeVersion: 'containerd://2.1.0',
        kubeletVersion: opts.kubeletVersion,
        kubeProxyVersion: '',
        machineID: device.id.replace(/-/g, ''),
        systemUUID: device.id,
        bootID: '',
      },
    },
  };
}

/** Outcome of a join attempt: the node may register, or why not (yet). */
export type JoinCheck = { ok: true; user: string } | { ok: false; reason: string };

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

function base64url(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

/** Verifies a detached JWS (`<header>..<signature>`, HS256) over `payload` with `key`. */
export function verifyDetachedJws(jws: string, payload: string, key: string): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return false;
  const [header, , signature] = parts as [string, string, string];
  try {
    const alg = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string })
      .alg;
    if (alg !== 'HS256') return false;
  } catch {
    return false;
  }
  const expected = createHmac('sha256', key)
    .update(`${header}.${base64url(payload)}`)
    .digest();
  const got = Buffer.from(signature, 'base64url');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/**
 * kubeadm's token discovery and TLS bootstrap authentication for a joining machine, against the
 * twin's apiserver (`api`: the server; credentials are replaced per step). The reasons read like
 * kubeadm's own messages.
 */
export async function checkJoin(api: KubeApi, spec: MachineSpec): Promise<JoinCheck> {
  const d = spec.discovery;
  if (!d) return { ok: false, reason: 'no token discovery in the JoinConfiguration' };
  const m = TOKEN.exec(d.token);
  if (!m)
    return { ok: false, reason: 'the discovery token is not of the form [a-z0-9]{6}.[a-z0-9]{16}' };
  const [, id, secret] = m as unknown as [string, string, string];

  // 1. cluster-info, fetched without trusting the server yet (kubeadm does the same).
  const anon = api.as({});
  let info;
  try {
    info = await anon.request<{ data?: Record<string, string> }>(
      'GET',
      '/api/v1/namespaces/kube-public/configmaps/cluster-info',
    );
  } catch (err) {
    return { ok: false, reason: `cannot reach the API server: ${(err as Error).message}` };
  } finally {
    anon.close();
  }
  if (info.status !== 200 || !info.body?.data?.kubeconfig) {
    return {
      ok: false,
      reason: `the cluster-info ConfigMap is not readable yet (HTTP ${info.status})`,
    };
  }
  const kubeconfig = info.body.data.kubeconfig;

  // 2. The controller-manager signs cluster-info with every token that may be used for signing.
  const jws = info.body.data[`jws-kubeconfig-${id}`];
  if (!jws) {
    return {
      ok: false,
      reason:
        `there is no JWS signed token in the cluster-info ConfigMap. This token id "${id}" is ` +
        'invalid for this cluster, or it has expired',
    };
  }
  if (!verifyDetachedJws(jws, kubeconfig, secret)) {
    return {
      ok: false,
      reason:
        "failed to verify JWS signature of received cluster info object, can't trust this API Server",
    };
  }

  // 3. Pin the CA.
  let caPem: string;
  try {
    const cfg = parse(kubeconfig) as {
      clusters?: Array<{ cluster?: { 'certificate-authority-data'?: string } }>;
    };
    caPem = Buffer.from(
      cfg.clusters?.[0]?.cluster?.['certificate-authority-data'] ?? '',
      'base64',
    ).toString('utf8');
  } catch {
    return { ok: false, reason: 'the cluster-info ConfigMap holds no readable kubeconfig' };
  }
  let hash: string;
  try {
    hash = caCertHash(caPem);
  } catch {
    return { ok: false, reason: 'the cluster-info ConfigMap holds no readable CA certificate' };
  }
  if (d.caCertHashes.length === 0 && !d.unsafeSkipCAVerification) {
    return {
      ok: false,
      reason:
        'discovery.bootstrapToken: Invalid value: "": using token-based discovery without caCertHashes can be unsafe',
    };
  }
  if (d.caCertHashes.length > 0 && !d.caCertHashes.map((h) => h.toLowerCase()).includes(hash)) {
    return {
      ok: false,
      reason: `cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "${hash}" are pinned`,
    };
  }

  // 4. TLS bootstrap: authenticate with the token, now trusting the pinned CA.
  const boot = api.as({ caPem, bearerToken: d.tlsBootstrapToken });
  try {
    const r = await boot.request<{ status?: { userInfo?: { username?: string } } }>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    );
    if (r.status === 401) {
      return {
        ok: false,
        reason:
          'the API server refused the bootstrap token (Unauthorized): unknown, wrong or expired',
      };
    }
    if (r.status !== 201 && r.status !== 200) {
      return { ok: false, reason: `TLS bootstrap failed: HTTP ${r.status}` };
    }
    return { ok: true, user: r.body?.status?.userInfo?.username ?? `system:bootstrap:${id}` };
  } catch (err) {
    return { ok: false, reason: `TLS bootstrap failed: ${(err as Error).message}` };
  } finally {
    boot.close();
  }
}

/** Registers the node (201), or finds it registered already (409). */
export async function registerNode(api: KubeApi, node: Record<string, unknown>): Promise<void> {
  await api.create('/api/v1/nodes', node);
}

function nodePath(name: string): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}`;
}

/**
 * What the CCM does to a new node: addresses, providerID, labels, and off with the taint. The
 * addresses go first, so a node that shows its providerID has its cloud addresses too.
 */
export async function initializeNode(
  api: KubeApi,
  name: string,
  device: DeviceFacts,
): Promise<void> {
  const cloud = cloudFacts(device);
  await api.mergePatch(`${nodePath(name)}/status`, { status: { addresses: cloud.addresses } });
  for (let attempt = 0; attempt < 5; attempt++) {
    const node = await api.get<{
      metadata: { labels?: Record<string, string> };
      spec: { taints?: TaintSpec[]; providerID?: string };
    }>(nodePath(name));
    if (!node) return;
    node.metadata.labels = { ...node.metadata.labels, ...cloud.labels };
    node.spec.providerID = cloud.providerID;
    const taints = (node.spec.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT.key);
    node.spec.taints = taints;
    if (await api.replace(nodePath(name), node)) break;
  }
}

/** Lets kwok mark the node Ready (its CNI runs). */
export async function markNetworkReady(api: KubeApi, name: string): Promise<void> {
  await api.mergePatch(nodePath(name), {
    metadata: { annotations: { [NETWORK_ANNOTATION]: NETWORK_READY } },
  });
}

/** Deletes a node; false when it was not there. */
export function deleteNode(api: KubeApi, name: string): Promise<boolean> {
  return api.delete(nodePath(name));
}

/** A pod as far as the gates look at it. */
export interface PodView {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    nodeName?: string;
    hostNetwork?: boolean;
    volumes?: Array<{
      name?: string;
      hostPath?: { path?: string };
      secret?: { secretName?: string; items?: Array<{ key: string; path: string }> };
    }>;
    containers?: Array<{
      name?: string;
      image?: string;
      command?: string[];
      args?: string[];
      env?: Array<{
        name: string;
        value?: string;
        valueFrom?: { secretKeyRef?: { name?: string; key?: string; optional?: boolean } };
      }>;
      volumeMounts?: Array<{ name: string; mountPath: string; subPath?: string }>;
    }>;
  };
  status?: { phase?: string };
}

/**
 * True for a running Equinix Metal cloud controller manager: a Running pod whose container runs
 * with `--cloud-provider=equinixmetal` or from a `cloud-provider-equinix-metal` image.
 */
export function isCcmPod(pod: PodView): boolean {
  if (pod.status?.phase !== 'Running') return false;
  return (pod.spec?.containers ?? []).some(isCcmContainer);
}

/**
 * The node a running CNI pod serves, or undefined: a Running host-network pod that mounts the
 * host's `/etc/cni/net.d` (where every CNI plugin installs its configuration).
 */
export function cniNodeOf(pod: PodView): string | undefined {
  if (pod.status?.phase !== 'Running' || !pod.spec?.hostNetwork || !pod.spec.nodeName)
    return undefined;
  const mountsCni = (pod.spec.volumes ?? []).some((v) =>
    (v.hostPath?.path ?? '').replace(/\/+$/, '').startsWith('/etc/cni/net.d'),
  );
  return mountsCni ? pod.spec.nodeName : undefined;
}
