/**
 * kubeadm configuration (`kubeadm.k8s.io/v1beta4`) for each kind of machine:
 * - controller 0: `InitConfiguration` + `ClusterConfiguration` + `KubeletConfiguration` for
 *   `kubeadm init`, with the cluster's bootstrap token;
 * - controllers 1..n-1: `JoinConfiguration` with `controlPlane` (stacked etcd); the shared CA files
 *   are pre-written by the userdata, so no certificate key is needed;
 * - workers: `JoinConfiguration` with token discovery pinned to the CA hash.
 * Every document is validated in tests by the real `kubeadm config validate`.
 */
import { stringify } from 'yaml';
import type { Taint } from '../../../config/types.js';
import type { ClusterBootstrap, NodeBootstrap } from './bootstrap.js';
import { API_SERVER_PORT, CRI_SOCKET, KUBERNETES_PKI_DIR } from './constants.js';
import { nodeLabelsArg } from './labels.js';

const KUBEADM_API = 'kubeadm.k8s.io/v1beta4';

/** What a machine runs: `kubeadm init` (controller 0) or `kubeadm join`. */
export type KubeadmAction = 'init' | 'join-control-plane' | 'join-worker';

/** One YAML document of a kubeadm config file. */
export type KubeadmDocument = { apiVersion: string; kind: string } & Record<string, unknown>;

/** A machine's kubeadm configuration. `yaml` holds the bootstrap token: treat it as a secret. */
export interface KubeadmConfig {
  action: KubeadmAction;
  documents: KubeadmDocument[];
  yaml: string;
}

/**
 * How long a joining machine keeps retrying discovery: machines of one apply boot in parallel and
 * one may reach `kubeadm join` well before controller 0 has finished `kubeadm init`.
 */
export const JOIN_DISCOVERY_TIMEOUT = '30m0s';

/**
 * How long a joining controller retries etcd calls (adding itself as a learner, promoting it):
 * etcd admits one learner at a time, so controllers that boot together wait for each other.
 */
export const JOIN_ETCD_API_TIMEOUT = '10m0s';

export function kubeadmAction(node: NodeBootstrap): KubeadmAction {
  if (node.role === 'worker') return 'join-worker';
  return node.index === 0 ? 'init' : 'join-control-plane';
}

/** `<EIP>:6443`. */
export function controlPlaneAddress(cluster: ClusterBootstrap): string {
  return `${cluster.controlPlaneEndpoint}:${API_SERVER_PORT}`;
}

/** The kubeadm configuration of `node`. Pure. */
export function kubeadmConfig(cluster: ClusterBootstrap, node: NodeBootstrap): KubeadmConfig {
  const action = kubeadmAction(node);
  const documents =
    action === 'init'
      ? [initConfiguration(cluster, node), clusterConfiguration(cluster), kubeletConfiguration()]
      : [joinConfiguration(cluster, node, action === 'join-control-plane')];
  return { action, documents, yaml: toYaml(documents) };
}

/** Documents as one multi-document YAML file (YAML 1.1 quoting, as Go's YAML decoders read it). */
export function toYaml(documents: object[]): string {
  return documents.map((d) => stringify(d, { version: '1.1', lineWidth: 0 })).join('---\n');
}

function initConfiguration(cluster: ClusterBootstrap, node: NodeBootstrap): KubeadmDocument {
  const token = cluster.bootstrapToken;
  return {
    apiVersion: KUBEADM_API,
    kind: 'InitConfiguration',
    bootstrapTokens: [
      {
        token: token.reveal(),
        description: `loko: machines of cluster ${cluster.clusterName} join with this token`,
        ttl: token.ttl,
        usages: ['signing', 'authentication'],
        groups: ['system:bootstrappers:kubeadm:default-node-token'],
      },
    ],
    nodeRegistration: nodeRegistration(node),
  };
}

function clusterConfiguration(cluster: ClusterBootstrap): KubeadmDocument {
  return {
    apiVersion: KUBEADM_API,
    kind: 'ClusterConfiguration',
    clusterName: cluster.clusterName,
    kubernetesVersion: cluster.kubernetesVersion,
    controlPlaneEndpoint: controlPlaneAddress(cluster),
    certificatesDir: KUBERNETES_PKI_DIR,
    // The certificates kubeadm issues match loko's CAs: ECDSA P-256.
    encryptionAlgorithm: 'ECDSA-P256',
    networking: {
      podSubnet: cluster.podSubnet,
      serviceSubnet: cluster.serviceSubnet,
      dnsDomain: cluster.dnsDomain,
    },
    apiServer: { certSANs: [cluster.controlPlaneEndpoint] },
    // Stacked etcd on every controller (kubeadm's default `local`).
    etcd: { local: { dataDir: '/var/lib/etcd' } },
  };
}

/** Cluster-wide kubelet settings; kubeadm stores them for joining machines (`kubelet-config`). */
function kubeletConfiguration(): KubeadmDocument {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'systemd',
  };
}

function joinConfiguration(
  cluster: ClusterBootstrap,
  node: NodeBootstrap,
  controlPlane: boolean,
): KubeadmDocument {
  return {
    apiVersion: KUBEADM_API,
    kind: 'JoinConfiguration',
    discovery: {
      bootstrapToken: {
        token: cluster.bootstrapToken.reveal(),
        apiServerEndpoint: controlPlaneAddress(cluster),
        caCertHashes: [cluster.caCertHash],
      },
    },
    nodeRegistration: nodeRegistration(node),
    ...(controlPlane ? { controlPlane: { localAPIEndpoint: { bindPort: API_SERVER_PORT } } } : {}),
    timeouts: controlPlane
      ? { discovery: JOIN_DISCOVERY_TIMEOUT, etcdAPICall: JOIN_ETCD_API_TIMEOUT }
      : { discovery: JOIN_DISCOVERY_TIMEOUT },
  };
}

function nodeRegistration(node: NodeBootstrap): Record<string, unknown> {
  return {
    name: node.hostname,
    criSocket: CRI_SOCKET,
    kubeletExtraArgs: [
      // The Equinix Metal CCM initialises the node (providerID, addresses, zone labels) and removes
      // the node.cloudprovider.kubernetes.io/uninitialized taint the kubelet adds with this flag.
      { name: 'cloud-provider', value: 'external' },
      { name: 'node-labels', value: nodeLabelsArg(node.labels) },
    ],
    taints: node.taints.map(kubeadmTaint),
  };
}

function kubeadmTaint(t: Taint): Record<string, string> {
  return t.value === ''
    ? { key: t.key, effect: t.effect }
    : { key: t.key, value: t.value, effect: t.effect };
}
