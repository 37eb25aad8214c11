/**
 * The kinds a component's objects may have: the built-in kinds loko components render, and the
 * kinds served by the CRDs loko applied for a component. Delete searches all of them, and apply's
 * prune searches them besides the kinds of the current render (an object whose whole kind the
 * component no longer renders is still found).
 */
import type { KubeClient } from '../kube/client.js';
import { componentSelector, KIND_ORDER } from '../kube/index.js';

/** Built-in kinds a component can hold objects of, searched on every delete. */
export const BUILTIN_KINDS: { apiVersion: string; kind: string }[] = (() => {
  const api: Record<string, string> = {
    Namespace: 'v1',
    CustomResourceDefinition: 'apiextensions.k8s.io/v1',
    PriorityClass: 'scheduling.k8s.io/v1',
    NetworkPolicy: 'networking.k8s.io/v1',
    ResourceQuota: 'v1',
    LimitRange: 'v1',
    PodDisruptionBudget: 'policy/v1',
    ServiceAccount: 'v1',
    Secret: 'v1',
    ConfigMap: 'v1',
    StorageClass: 'storage.k8s.io/v1',
    ClusterRole: 'rbac.authorization.k8s.io/v1',
    ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
    Role: 'rbac.authorization.k8s.io/v1',
    RoleBinding: 'rbac.authorization.k8s.io/v1',
    Service: 'v1',
    DaemonSet: 'apps/v1',
    Deployment: 'apps/v1',
    StatefulSet: 'apps/v1',
    Job: 'batch/v1',
    CronJob: 'batch/v1',
    IngressClass: 'networking.k8s.io/v1',
    APIService: 'apiregistration.k8s.io/v1',
    MutatingWebhookConfiguration: 'admissionregistration.k8s.io/v1',
    ValidatingWebhookConfiguration: 'admissionregistration.k8s.io/v1',
  };
  return KIND_ORDER.filter((k) => api[k]).map((kind) => ({ apiVersion: api[kind]!, kind }));
})();

/**
 * Kinds served by the CRDs loko applied for `component` (so their custom resources are found
 * even when the component is not rendered).
 */
export async function componentCrdKinds(
  client: KubeClient,
  component: string,
): Promise<{ apiVersion: string; kind: string }[]> {
  const crds = await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition', {
    labelSelector: componentSelector(component),
  });
  const out: { apiVersion: string; kind: string }[] = [];
  for (const crd of crds) {
    const spec = crd.spec as
      | {
          group?: string;
          names?: { kind?: string };
          versions?: { name?: string; served?: boolean }[];
        }
      | undefined;
    const version = spec?.versions?.find((v) => v.served !== false)?.name;
    if (spec?.group && spec.names?.kind && version)
      out.push({ apiVersion: `${spec.group}/${version}`, kind: spec.names.kind });
  }
  return out;
}
