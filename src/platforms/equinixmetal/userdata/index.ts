/**
 * kubeadm bootstrap through cloud-init userdata (docs/bootstrap.md). Pure: given the cluster's
 * bootstrap material ({@link clusterBootstrap}) and a machine ({@link NodeBootstrap}), renders the
 * `#cloud-config` the machine boots with.
 */
export {
  clusterBootstrap,
  controllerNode,
  kubernetesMinor,
  nodeBootstraps,
  workerNode,
  type AptSigningKeys,
  type ClusterBootstrap,
  type ClusterBootstrapInput,
  type NodeBootstrap,
} from './bootstrap.js';
export {
  cloudConfig,
  KUBERNETES_PACKAGES,
  renderUserdata,
  type CloudConfig,
  type WriteFile,
} from './cloud-config.js';
export * from './constants.js';
export { UserdataError } from './errors.js';
export {
  controlPlaneAddress,
  JOIN_DISCOVERY_TIMEOUT,
  JOIN_ETCD_API_TIMEOUT,
  kubeadmAction,
  kubeadmConfig,
  toYaml,
  type KubeadmAction,
  type KubeadmConfig,
  type KubeadmDocument,
} from './kubeadm.js';
export {
  BGP_ENABLED_LABEL,
  CONTROL_PLANE_TAINT,
  kubeletMaySetLabel,
  labelKeyProblem,
  labelValueProblem,
  nodeLabelsArg,
  POOL_LABEL,
} from './labels.js';
