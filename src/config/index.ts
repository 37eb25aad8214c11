/**
 * The config loader: HCL `*.lokocfg` files -> typed, validated {@link ClusterConfig} with every
 * diagnostic at once. Public surface of `src/config`; other layers import from here only.
 */
export { loadConfig, VARS_FILE } from './load.js';
export { formatDiagnostic } from './diagnostics.js';
export { configJsonSchema } from './schema.js';
export { CLUSTER_SPEC, WORKER_POOL_SPEC } from './spec.js';
export type { AttrSpec, BlockSpec, ValueSpec } from './spec.js';
export type * from './types.js';
