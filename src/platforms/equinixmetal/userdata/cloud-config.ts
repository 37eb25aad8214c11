/**
 * cloud-init `#cloud-config` for the default Ubuntu LTS image (`ubuntu_24_04`). cloud-init runs
 * the sections in its own module order, which the layout relies on:
 *
 * 1. init stage — `write_files`: sysctls, kernel modules, the PKI (controllers), the kubeadm config,
 *    the control-plane endpoint unit (controller 0);
 * 2. config stage — `apt`: the pkgs.k8s.io and Docker (containerd 2.x) repositories with pinned keys;
 * 3. final stage — `packages` (containerd, kubelet/kubeadm/kubectl at the cluster's version), then
 *    the deferred `write_files` (containerd's config over the package's), then `runcmd`: kernel
 *    settings, containerd restart, package holds and `kubeadm init`/`kubeadm join`.
 *
 * Only keys and options present in both Debian 12's cloud-init 22.4 (the validator in tests) and
 * Ubuntu 24.04's are used.
 */
import { stringify } from 'yaml';
import { kubeadmPkiFiles } from '../../../pki/index.js';
import { type ClusterBootstrap, kubernetesMinor, type NodeBootstrap } from './bootstrap.js';
import {
  APT_KEYSERVER,
  DOCKER_APT_KEY_FINGERPRINT,
  ENDPOINT_UNIT,
  KUBEADM_CONFIG_PATH,
  KUBERNETES_APT_KEY_FINGERPRINT,
  KUBERNETES_PACKAGE_REVISION,
  KUBERNETES_PKI_DIR,
} from './constants.js';
import { kubeadmConfig } from './kubeadm.js';

/** One `write_files` entry. */
export interface WriteFile {
  path: string;
  content: string;
  permissions: string;
  owner?: string;
  defer?: boolean;
}

/** The subset of cloud-config loko renders. */
export interface CloudConfig {
  hostname: string;
  preserve_hostname: boolean;
  package_update: boolean;
  apt: { sources: Record<string, AptSource> };
  packages: Array<string | [string, string]>;
  write_files: WriteFile[];
  runcmd: Array<string | string[]>;
}

interface AptSource {
  source: string;
  keyid?: string;
  keyserver?: string;
  key?: string;
}

export const KUBERNETES_PACKAGES = ['kubelet', 'kubeadm', 'kubectl'] as const;

const SYSCTL = [
  '# loko: Kubernetes networking',
  'net.ipv4.ip_forward = 1',
  'net.ipv6.conf.all.forwarding = 1',
  'net.bridge.bridge-nf-call-iptables = 1',
  'net.bridge.bridge-nf-call-ip6tables = 1',
  '',
].join('\n');

const SYSCTL_PATH = '/etc/sysctl.d/90-kubernetes.conf';

const MODULES = ['# loko: Kubernetes networking', 'overlay', 'br_netfilter', ''].join('\n');

/**
 * containerd 2.x config (version 3). Replaces the containerd.io package's file, which disables the
 * CRI plugin. The systemd cgroup driver matches the kubelet's.
 */
const CONTAINERD_CONFIG = [
  '# loko: containerd for the kubelet',
  'version = 3',
  '',
  "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
  '  SystemdCgroup = true',
  '',
].join('\n');

/** The cloud-config object of `node` (secrets revealed: it is what the machine receives). */
export function cloudConfig(cluster: ClusterBootstrap, node: NodeBootstrap): CloudConfig {
  const kubeadm = kubeadmConfig(cluster, node);
  const version = cluster.kubernetesVersion.slice(1);
  const pkgVersion = `${version}-${KUBERNETES_PACKAGE_REVISION}`;
  const isController = node.role === 'controller';
  const isFirst = kubeadm.action === 'init';

  const writeFiles: WriteFile[] = [
    { path: '/etc/modules-load.d/kubernetes.conf', content: MODULES, permissions: '0644' },
    { path: SYSCTL_PATH, content: SYSCTL, permissions: '0644' },
  ];
  if (isController) {
    for (const f of kubeadmPkiFiles(cluster.pki)) {
      writeFiles.push({
        path: `${KUBERNETES_PKI_DIR}/${f.name}`,
        content: typeof f.content === 'string' ? f.content : f.content.reveal(),
        permissions: '0600',
        owner: 'root:root',
      });
    }
  }
  writeFiles.push({
    path: KUBEADM_CONFIG_PATH,
    content: kubeadm.yaml,
    permissions: '0600',
    owner: 'root:root',
  });
  if (isFirst) {
    writeFiles.push({
      path: `/etc/systemd/system/${ENDPOINT_UNIT}`,
      content: endpointUnit(cluster.controlPlaneEndpoint),
      permissions: '0644',
    });
  }
  writeFiles.push({
    path: '/etc/containerd/config.toml',
    content: CONTAINERD_CONFIG,
    permissions: '0644',
    // After `packages`, so it replaces the package's own file.
    defer: true,
  });

  const kubeadmCmd =
    kubeadm.action === 'init'
      ? ['kubeadm', 'init', '--config', KUBEADM_CONFIG_PATH, '--skip-token-print']
      : ['kubeadm', 'join', '--config', KUBEADM_CONFIG_PATH];

  return {
    hostname: node.hostname,
    preserve_hostname: false,
    package_update: true,
    apt: { sources: aptSources(cluster) },
    packages: [
      'containerd.io',
      'conntrack',
      'socat',
      ...KUBERNETES_PACKAGES.map((p): [string, string] => [p, pkgVersion]),
    ],
    write_files: writeFiles,
    runcmd: [
      // runcmd is one sh script: stop at the first failure instead of running kubeadm on a
      // half-prepared machine.
      'set -eu',
      ['swapoff', '-a'],
      ['sed', '-ri', '/\\sswap\\s/s/^#?/#/', '/etc/fstab'],
      ['modprobe', 'overlay'],
      ['modprobe', 'br_netfilter'],
      ['sysctl', '-p', SYSCTL_PATH],
      ['systemctl', 'daemon-reload'],
      ...(isFirst ? [['systemctl', 'enable', '--now', ENDPOINT_UNIT]] : []),
      ['systemctl', 'restart', 'containerd'],
      ['systemctl', 'enable', 'containerd', 'kubelet'],
      ['apt-mark', 'hold', 'containerd.io', ...KUBERNETES_PACKAGES],
      kubeadmCmd,
    ],
  };
}

/** `#cloud-config` userdata of `node`. Pure; the result holds secrets (token, CA keys). */
export function renderUserdata(cluster: ClusterBootstrap, node: NodeBootstrap): string {
  return (
    '#cloud-config\n' + stringify(cloudConfig(cluster, node), { version: '1.1', lineWidth: 0 })
  );
}

function aptSources(cluster: ClusterBootstrap): Record<string, AptSource> {
  const minor = kubernetesMinor(cluster.kubernetesVersion);
  const keys = cluster.aptSigningKeys;
  return {
    // $KEY_FILE: cloud-init stores the key in its own keyring file and names it here, so the
    // repository is trusted for its own packages only (no apt-key, no global trust).
    kubernetes: {
      source: `deb [signed-by=$KEY_FILE] https://pkgs.k8s.io/core:/stable:/${minor}/deb/ /`,
      ...keyOf(keys.kubernetes, KUBERNETES_APT_KEY_FINGERPRINT),
    },
    docker: {
      source: 'deb [signed-by=$KEY_FILE] https://download.docker.com/linux/ubuntu $RELEASE stable',
      ...keyOf(keys.docker, DOCKER_APT_KEY_FINGERPRINT),
    },
  };
}

function keyOf(armored: string | undefined, fingerprint: string): Omit<AptSource, 'source'> {
  return armored ? { key: armored } : { keyid: fingerprint, keyserver: APT_KEYSERVER };
}

/**
 * Controller 0 answers on the Elastic IP: Metal routes it to the machine, and the address must be
 * on an interface for the kernel to accept it (and for local clients using the endpoint).
 */
function endpointUnit(address: string): string {
  return [
    '[Unit]',
    'Description=loko: control-plane Elastic IP on lo',
    'Before=kubelet.service',
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=/usr/sbin/ip address replace ${address}/32 dev lo`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
