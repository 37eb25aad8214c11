/**
 * CPEM's RBAC, split as packet-ccm issue #109 "Reduce RBAC grants for CCM" asked (cpem.md §2.5):
 * what CPEM only does in its own namespace goes into a kube-system Role, the rest stays in a
 * ClusterRole, and the `metallb.io` rules exist only when CPEM manages MetalLB objects.
 *
 * The upstream grant is one ClusterRole (cpem.md §2.2, K:deploy/template/deployment.yaml); every
 * rule below is one of its rows, moved or narrowed:
 * - Leader election (`--leader-elect=true`) takes a Lease in kube-system (the default
 *   `--leader-elect-resource-namespace`; cpem.md §7.2) -> Role.
 * - CPEM writes Endpoints only for `kube-system/cloud-provider-equinix-metal-kubernetes-external`
 *   (server-side apply from `syncEndpoints`, K:metal/eip_controlplane_reconciliation.go) ->
 *   create/update/patch in the Role. But the same file builds its Endpoints informer from
 *   `informers.NewSharedInformerFactory` without a namespace, i.e. a cluster-wide list/watch
 *   (it filters for `default/kubernetes` client-side): without cluster-wide get/list/watch the
 *   informer never syncs and `WaitForCacheSync` blocks the control-plane EIP manager forever. So
 *   the reads stay in the ClusterRole; only the writes are namespaced.
 * - `configmaps` stay cluster-wide: the maintainer rejected scoping them because the MetalLB
 *   ConfigMap namespace is user-configurable (issue #109 thread).
 * - The RoleBinding to `extension-apiserver-authentication-reader` lets the CCM's delegated
 *   authentication read `kube-system/extension-apiserver-authentication` (issue #109; Lokomotive's
 *   packet-ccm chart bound it too, lokomotive.md §3).
 */
import type { KubeObject } from '../../kube/objects.js';
import { CPEM_NAME } from './config.js';

/** One RBAC PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Namespace of everything CPEM runs with. */
export const CPEM_NAMESPACE = 'kube-system';

/** Read/write verbs upstream grants on leases, endpoints, configmaps and events. */
const RW = ['create', 'get', 'list', 'watch', 'update', 'patch'];

/** Rules of the kube-system Role: leader election and the external Service's Endpoints. */
export function roleRules(): PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...RW] },
    { apiGroups: [''], resources: ['endpoints'], verbs: ['create', 'update', 'patch'] },
  ];
}

/**
 * Rules of the ClusterRole. `metallb` adds the `metallb.io` rules CPEM's CRD mode needs (added in
 * v3.6.0, `0814e3f`; cpem.md §2.2): it creates IPAddressPools, BGPPeers and BGPAdvertisements.
 */
export function clusterRoleRules(metallb: boolean): PolicyRule[] {
  const rules: PolicyRule[] = [
    // The kube-system Namespace UID is CPEM's cluster ID (cpem.md §2.2, §5.1).
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    // The cluster-wide Endpoints informer (see the module comment).
    { apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'list', 'watch'] },
    // cloud-node and cloud-node-lifecycle controllers: initialise, label, delete nodes.
    { apiGroups: [''], resources: ['nodes'], verbs: ['*'] },
    { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    // The service controller (LB Services cluster-wide) and the control-plane external Service.
    {
      apiGroups: [''],
      resources: ['services'],
      verbs: ['get', 'list', 'patch', 'update', 'watch', 'create'],
    },
    {
      apiGroups: [''],
      resources: ['services/status'],
      verbs: ['list', 'patch', 'update', 'watch'],
    },
    { apiGroups: [''], resources: ['configmaps'], verbs: [...RW] },
    { apiGroups: [''], resources: ['events'], verbs: [...RW] },
  ];
  if (metallb) {
    rules.push({
      apiGroups: ['metallb.io'],
      resources: ['ipaddresspools', 'bgppeers', 'bgpadvertisements'],
      verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
    });
  }
  return rules;
}

const subject = { kind: 'ServiceAccount', name: CPEM_NAME, namespace: CPEM_NAMESPACE };

/** ServiceAccount, Role(+Binding), ClusterRole(+Binding) and the auth-reader RoleBinding. */
export function rbacObjects(metallb: boolean): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: CPEM_NAME, namespace: CPEM_NAMESPACE },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: CPEM_NAME, namespace: CPEM_NAMESPACE },
      rules: roleRules(),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: CPEM_NAME, namespace: CPEM_NAMESPACE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CPEM_NAME },
      subjects: [subject],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: {
        name: `${CPEM_NAME}:extension-apiserver-authentication-reader`,
        namespace: CPEM_NAMESPACE,
      },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'extension-apiserver-authentication-reader',
      },
      subjects: [subject],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: CPEM_NAME },
      rules: clusterRoleRules(metallb),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: CPEM_NAME },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CPEM_NAME },
      subjects: [subject],
    },
  ];
}
