/**
 * Defaults of cluster attributes that other layers need too (the userdata renderers, the twin's
 * binary directory). One constant each, so nothing can drift.
 */

/**
 * The Kubernetes version a cluster gets when `kubernetes_version` is unset. It must equal
 * `kubernetes` in tools/k8s/versions.json: the version `npm run kube:build` builds, the emulator's
 * twin runs and the userdata tests validate against. A unit test keeps them equal
 * (test/unit/userdata/labels.test.ts, "versions"); the config does not read that file, which
 * belongs to the build tools.
 */
export const DEFAULT_KUBERNETES_VERSION = 'v1.36.3';

/**
 * The oldest Kubernetes minor loko can bootstrap: its userdata uses kubeadm's
 * `kubeadm.k8s.io/v1beta4` configuration, which kubeadm reads from v1.31 on.
 */
export const MIN_KUBERNETES_MINOR = 31;

/** Lokomotive's defaults, kept so that clusters moved from lokoctl keep their address plan. */
export const DEFAULT_POD_CIDR = '10.2.0.0/16';
export const DEFAULT_SERVICE_CIDR = '10.3.0.0/16';

/**
 * The per-node pod CIDR prefix: kube-controller-manager gives every node a /24 of the pod CIDR
 * (`--node-cidr-mask-size`, kubeadm's default), so the pod CIDR must hold one /24 per node.
 */
export const NODE_POD_CIDR_PREFIX = 24;
