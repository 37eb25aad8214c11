/**
 * The inputs of userdata rendering: what is shared by the cluster ({@link ClusterBootstrap}) and
 * what differs per machine ({@link NodeBootstrap}). Built from a {@link ClusterConfig} plus what
 * only apply knows (the Elastic IP, the loaded PKI, the token); checked once here so that the
 * renderers can stay simple.
 */
import type { ClusterConfig, Taint, WorkerPoolConfig } from '../../../config/types.js';
import type { BootstrapToken, ControlPlanePki } from '../../../pki/index.js';
import { CA_CERT_HASH_PATTERN } from '../../../pki/index.js';
import { controllerHostname, workerHostname, type DeviceRole } from '../tags.js';
import {
  DEFAULT_DNS_DOMAIN,
  DEFAULT_KUBERNETES_VERSION,
  DEFAULT_POD_SUBNET,
  DEFAULT_SERVICE_SUBNET,
} from './constants.js';
import { UserdataError } from './errors.js';
import {
  BGP_ENABLED_LABEL,
  checkTaints,
  CONTROL_PLANE_TAINT,
  nodeLabels,
  POOL_LABEL,
} from './labels.js';

/** Armored OpenPGP public keys to embed instead of fetching them by fingerprint. */
export interface AptSigningKeys {
  kubernetes?: string;
  docker?: string;
}

/** Everything the machines of one cluster share. */
export interface ClusterBootstrap {
  clusterName: string;
  /** `v1.36.3`. */
  kubernetesVersion: string;
  /** The control-plane Elastic IP (IPv4, no prefix): endpoint, apiserver SAN, kubeconfig server. */
  controlPlaneEndpoint: string;
  podSubnet: string;
  serviceSubnet: string;
  dnsDomain: string;
  controllerCount: number;
  /** The shared control-plane PKI; written into controllers' userdata only. */
  pki: ControlPlanePki;
  /** `sha256:<hex>` of the cluster CA's public key, pinned by every joining machine. */
  caCertHash: string;
  /** Created by `kubeadm init` on controller 0 and used by every other machine to join. */
  bootstrapToken: BootstrapToken;
  aptSigningKeys: AptSigningKeys;
}

/** Options of {@link clusterBootstrap}; the optional ones have loko's defaults. */
export interface ClusterBootstrapInput {
  clusterName: string;
  controllerCount: number;
  controlPlaneEndpoint: string;
  pki: ControlPlanePki;
  caCertHash: string;
  bootstrapToken: BootstrapToken;
  /** Default {@link DEFAULT_KUBERNETES_VERSION}. */
  kubernetesVersion?: string;
  /** Default {@link DEFAULT_POD_SUBNET}. */
  podSubnet?: string;
  /** Default {@link DEFAULT_SERVICE_SUBNET}. */
  serviceSubnet?: string;
  /** Default {@link DEFAULT_DNS_DOMAIN}. */
  dnsDomain?: string;
  aptSigningKeys?: AptSigningKeys;
}

/** One machine. Built by {@link nodeBootstraps} (or the two helpers) from the cluster config. */
export interface NodeBootstrap {
  hostname: string;
  role: DeviceRole;
  /** 0-based index among the controllers or within the pool. */
  index: number;
  /** Worker pool name; absent for controllers. */
  pool?: string;
  /** Final node labels (pool labels + loko's), sorted by key. */
  labels: Record<string, string>;
  /** Final taints (controllers: kubeadm's control-plane taint). */
  taints: Taint[];
}

const KUBERNETES_VERSION = /^v(\d+)\.(\d+)\.(\d+)$/;
const HOSTNAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Checks `input` and fills defaults. Throws {@link UserdataError} naming the bad value. */
export function clusterBootstrap(input: ClusterBootstrapInput): ClusterBootstrap {
  const kubernetesVersion = input.kubernetesVersion ?? DEFAULT_KUBERNETES_VERSION;
  if (!KUBERNETES_VERSION.test(kubernetesVersion)) {
    throw new UserdataError(
      `kubernetes version "${kubernetesVersion}" is not of the form v<major>.<minor>.<patch>`,
    );
  }
  if (!isIpv4(input.controlPlaneEndpoint)) {
    throw new UserdataError(
      `control-plane endpoint "${input.controlPlaneEndpoint}" is not an IPv4 address`,
    );
  }
  const podSubnet = input.podSubnet ?? DEFAULT_POD_SUBNET;
  const serviceSubnet = input.serviceSubnet ?? DEFAULT_SERVICE_SUBNET;
  for (const [what, cidr] of [
    ['pod subnet', podSubnet],
    ['service subnet', serviceSubnet],
  ] as const) {
    if (!isIpv4Cidr(cidr)) throw new UserdataError(`${what} "${cidr}" is not an IPv4 CIDR`);
  }
  if (cidrsOverlap(podSubnet, serviceSubnet)) {
    throw new UserdataError(`pod subnet ${podSubnet} overlaps service subnet ${serviceSubnet}`);
  }
  if (!Number.isInteger(input.controllerCount) || input.controllerCount < 1) {
    throw new UserdataError(`controller count must be at least 1, got ${input.controllerCount}`);
  }
  if (!CA_CERT_HASH_PATTERN.test(input.caCertHash)) {
    throw new UserdataError('the CA certificate hash is not of the form sha256:<64 hex digits>');
  }
  return {
    clusterName: input.clusterName,
    kubernetesVersion,
    controlPlaneEndpoint: input.controlPlaneEndpoint,
    podSubnet,
    serviceSubnet,
    dnsDomain: input.dnsDomain ?? DEFAULT_DNS_DOMAIN,
    controllerCount: input.controllerCount,
    pki: input.pki,
    caCertHash: input.caCertHash,
    bootstrapToken: input.bootstrapToken,
    aptSigningKeys: input.aptSigningKeys ?? {},
  };
}

/** Controller `index` of `clusterName`: no BGP, kubeadm's control-plane taint. */
export function controllerNode(clusterName: string, index: number): NodeBootstrap {
  const hostname = checkHostname(controllerHostname(clusterName, index));
  return {
    hostname,
    role: 'controller',
    index,
    labels: nodeLabels({}, { [BGP_ENABLED_LABEL]: 'false' }, hostname),
    taints: [CONTROL_PLANE_TAINT],
  };
}

/** Worker `index` of `pool`: the pool's labels and taints, `loko.dev/bgp-enabled` from `disable_bgp`. */
export function workerNode(
  clusterName: string,
  pool: Pick<WorkerPoolConfig, 'name' | 'labels' | 'taints' | 'disableBgp'>,
  index: number,
): NodeBootstrap {
  const hostname = checkHostname(workerHostname(clusterName, pool.name, index));
  const where = `worker pool "${pool.name}"`;
  return {
    hostname,
    role: 'worker',
    index,
    pool: pool.name,
    labels: nodeLabels(
      pool.labels,
      { [BGP_ENABLED_LABEL]: pool.disableBgp ? 'false' : 'true', [POOL_LABEL]: pool.name },
      where,
    ),
    taints: checkTaints(pool.taints, where),
  };
}

/** Every machine of `cluster`, in {@link desiredState}'s order: controllers, then pools by index. */
export function nodeBootstraps(cluster: ClusterConfig): NodeBootstrap[] {
  const nodes: NodeBootstrap[] = [];
  for (let i = 0; i < cluster.controllerCount; i++) {
    nodes.push(controllerNode(cluster.clusterName, i));
  }
  for (const pool of cluster.workerPools) {
    for (let i = 0; i < pool.count; i++) nodes.push(workerNode(cluster.clusterName, pool, i));
  }
  return nodes;
}

/** `major.minor` of a `vX.Y.Z` version: the pkgs.k8s.io repository (`v1.36`). */
export function kubernetesMinor(version: string): string {
  const m = KUBERNETES_VERSION.exec(version);
  if (!m) throw new UserdataError(`kubernetes version "${version}" is not of the form vX.Y.Z`);
  return `v${m[1]}.${m[2]}`;
}

function checkHostname(hostname: string): string {
  if (!HOSTNAME.test(hostname)) {
    throw new UserdataError(
      `hostname "${hostname}" cannot be a node name: it must be 1-63 characters of [a-z0-9-], ` +
        'starting and ending alphanumeric',
      { hint: 'Use a lowercase cluster name and pool names of letters, digits and dashes.' },
    );
  }
  return hostname;
}

function isIpv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

function isIpv4Cidr(s: string): boolean {
  const [ip, bits, ...rest] = s.split('/');
  return (
    rest.length === 0 &&
    ip !== undefined &&
    isIpv4(ip) &&
    bits !== undefined &&
    /^(0|[1-9]\d?)$/.test(bits) &&
    Number(bits) <= 32
  );
}

function cidrsOverlap(a: string, b: string): boolean {
  const [na, ma] = cidrRange(a);
  const [nb, mb] = cidrRange(b);
  return na <= mb && nb <= ma;
}

function cidrRange(cidr: string): [number, number] {
  const [ip, bits] = cidr.split('/') as [string, string];
  const n = ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
  const size = 2 ** (32 - Number(bits));
  const start = n - (n % size);
  return [start, start + size - 1];
}
