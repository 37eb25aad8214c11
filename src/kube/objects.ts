/**
 * The shapes the Kubernetes layer works with: plain JSON objects as the API serves them (no typed
 * model classes, so no field is ever dropped or re-encoded on the way), and references to them.
 */

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update' | string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** `metadata` of an object; only the fields this layer reads are typed. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: { apiVersion: string; kind: string; name: string; controller?: boolean }[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** Points at one object: `apiVersion`, `kind`, `name` and, for namespaced kinds, `namespace`. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/** The reference of an object. */
export function refOf(obj: KubeObject): ObjectRef {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
  };
}

/** API group of an `apiVersion` (`''` for the core group `v1`). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/**
 * Identity of an object independent of the API version it was read with:
 * `group/kind/namespace/name` (e.g. `apps/Deployment/kube-system/coredns`).
 */
export function objectKey(ref: ObjectRef): string {
  return `${groupOf(ref.apiVersion)}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** Label every object loko manages carries (value `loko`). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of `MANAGED_BY_LABEL`. */
export const MANAGED_BY_VALUE = 'loko';
/** Label naming the loko component an object belongs to (e.g. `cni`, `ccm`, `metallb`). */
export const COMPONENT_LABEL = 'loko.dev/component';

/** Label selector matching every object of `component` that loko manages. */
export function componentSelector(component: string): string {
  return `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${COMPONENT_LABEL}=${component}`;
}

/**
 * A copy of `obj` carrying the managed-by and component labels (the input is not changed).
 * Throws when the object already sets one of them to another value.
 */
export function withComponentLabels<T extends KubeObject>(obj: T, component: string): T {
  const labels = { ...(obj.metadata.labels ?? {}) };
  for (const [k, v] of [
    [MANAGED_BY_LABEL, MANAGED_BY_VALUE],
    [COMPONENT_LABEL, component],
  ] as const) {
    if (labels[k] !== undefined && labels[k] !== v) {
      throw new Error(
        `${obj.kind} ${obj.metadata.name}: label ${k}=${labels[k]} conflicts with ${k}=${v}`,
      );
    }
    labels[k] = v;
  }
  return { ...obj, metadata: { ...obj.metadata, labels } };
}
