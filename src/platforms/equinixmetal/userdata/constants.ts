/**
 * Versions, paths and pins that the rendered userdata uses. Changing any of these changes only
 * machines created afterwards: userdata is create-only (DESIGN.md §3).
 */

import {
  DEFAULT_KUBERNETES_VERSION,
  DEFAULT_POD_CIDR,
  DEFAULT_SERVICE_CIDR,
} from '../../../config/defaults.js';

/**
 * The Kubernetes version loko installs unless the cluster names one (`kubernetes_version`); the
 * one constant lives in src/config/defaults.ts.
 */
export { DEFAULT_KUBERNETES_VERSION };

/** pkgs.k8s.io's Debian revision of every package (`kubelet=1.36.3-1.1`). */
export const KUBERNETES_PACKAGE_REVISION = '1.1';

/** `pod_cidr` / `service_cidr` defaults (Lokomotive's), from src/config/defaults.ts. */
export const DEFAULT_POD_SUBNET = DEFAULT_POD_CIDR;
export const DEFAULT_SERVICE_SUBNET = DEFAULT_SERVICE_CIDR;
export const DEFAULT_DNS_DOMAIN = 'cluster.local';

/** The port of the control-plane endpoint (Elastic IP) and of every kube-apiserver. */
export const API_SERVER_PORT = 6443;

/** Where the userdata puts the kubeadm configuration on the machine (mode 0600: it holds a token). */
export const KUBEADM_CONFIG_PATH = '/etc/kubernetes/kubeadm.yaml';
/** kubeadm's `certificatesDir`. */
export const KUBERNETES_PKI_DIR = '/etc/kubernetes/pki';
export const CRI_SOCKET = 'unix:///run/containerd/containerd.sock';
/** The oneshot unit that puts the control-plane Elastic IP on `lo` of controller 0. */
export const ENDPOINT_UNIT = 'loko-control-plane-endpoint.service';

/**
 * OpenPGP fingerprints of the apt repositories' signing keys. cloud-init fetches a key by its full
 * fingerprint from {@link APT_KEYSERVER} (GnuPG refuses a key whose fingerprint differs), so a
 * key whose expiry the publisher extends keeps working without a new loko release. A caller can
 * embed an armored key instead ({@link AptSigningKeys}).
 */
export const KUBERNETES_APT_KEY_FINGERPRINT = 'DE15B14486CD377B9E876E1A234654DA9A296436';
export const DOCKER_APT_KEY_FINGERPRINT = '9DC858229FC7DD38854AE2D88D81803C0EBFCD88';
export const APT_KEYSERVER = 'keyserver.ubuntu.com';
