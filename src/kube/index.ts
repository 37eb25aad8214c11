/**
 * The Kubernetes layer of loko (DESIGN.md §6): server-side apply with field manager `loko`,
 * ordering (Namespaces and CRDs first, wait for `Established`), rollout waiters, prune by label,
 * kubeconfig files, typed errors. It never prints: progress goes through callbacks, failures
 * through the errors of ./errors.ts.
 */
export * from './errors.js';
export * from './objects.js';
export * from './kubeconfig.js';
export {
  FIELD_MANAGER,
  KubeClient,
  parseConflictCause,
  toKubeError,
  type ApplyRequestOptions,
  type DeleteOptions,
  type FieldValidation,
  type KubeClientOptions,
  type ListOptions,
  type ResourceInfo,
} from './client.js';
export * from './apply.js';
export * from './rollout.js';
export * from './retry.js';
export * from './wait.js';
export * from './raw.js';
export * from './merge.js';
