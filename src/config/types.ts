/**
 * Typed cluster configuration produced by the config loader (`src/config`).
 *
 * Field names follow lokoctl's HCL attributes (see ../shared/reference/lokomotive.md §2) so users of
 * lokoctl recognise them. Every value carries no position; positions live in {@link SourceIndex}.
 */
import type { DecodedBody } from './decode.js';
import type { BlockSpec } from './spec.js';

/** A position in a config file: 1-based line and column. */
export interface SourcePos {
  line: number;
  column: number;
}

/** A range in one config file. `file` is the path as given to the loader (absolute). */
export interface SourceRange {
  file: string;
  start: SourcePos;
  end: SourcePos;
}

/** Severity of a config diagnostic. Warnings never stop a command. */
export type Severity = 'error' | 'warning';

/**
 * One problem found in the configuration. `range` is taken from the syntax tree, never from
 * searching text. `summary` is one short sentence, `detail` says how to fix it.
 */
export interface Diagnostic {
  severity: Severity;
  summary: string;
  detail?: string;
  range?: SourceRange;
}

/** Billing cycles accepted by the Metal API (DeviceCreateInput.billing_cycle). */
export type BillingCycle = 'hourly' | 'daily' | 'monthly' | 'yearly';

/** A Kubernetes taint as written in a pool's `taints` map: `key = "value:Effect"`. */
export interface Taint {
  key: string;
  value: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** One `worker_pool "<name>"` block. Unset optional values are already defaulted from the cluster. */
export interface WorkerPoolConfig {
  name: string;
  count: number;
  /** Metal plan slug, default `c3.small.x86`. */
  nodeType: string;
  /** Metro code (lowercase), defaulted from the cluster's metro. */
  metro: string;
  /** Legacy `facility` of this pool, kept for messages; devices are always created by metro. */
  facility?: string;
  /** Operating-system slug, defaulted from the cluster's `os`. */
  os: string;
  labels: Record<string, string>;
  taints: Taint[];
  disableBgp: boolean;
  /** Extra user tags (`key:value` strings) added to the cluster tags. */
  tags: string[];
  /**
   * Hardware reservation per worker index (`worker-<i>` keys in HCL), or the default for all
   * (`reservation_ids_default`, `""` or `next-available`). Index -> reservation UUID.
   */
  reservationIds: Record<number, string>;
  reservationIdsDefault: '' | 'next-available';
}

/** The `cluster "equinixmetal"` block after defaults and validation. */
export interface ClusterConfig {
  /** `equinixmetal`; `packet` is accepted as a deprecated alias and normalised. */
  platform: 'equinixmetal';
  clusterName: string;
  projectId: string;
  /** Metro code (lowercase). When only legacy `facility` is given, its metro prefix (`sv15` -> `sv`). */
  metro: string;
  /** Legacy `facility`, kept for messages; devices are always created by metro. */
  facility?: string;
  /** Absolute path; relative `asset_dir` values resolve against the declaring file's directory. */
  assetDir: string;
  controllerCount: number;
  controllerType: string;
  os: string;
  sshPubkeys: string[];
  /** User tags as `key:value` strings (HCL map `tags = { k = "v" }`). */
  tags: string[];
  billingCycle: BillingCycle;
  /** Index -> reservation UUID for controllers (`controller-<i>` keys). */
  reservationIds: Record<number, string>;
  reservationIdsDefault: '' | 'next-available';
  /** `v1.36.3`: what new machines install (create-only). */
  kubernetesVersion: string;
  /** IPv4 CIDR of the pod network (kubeadm `podSubnet`), e.g. `10.2.0.0/16`. */
  podCidr: string;
  /** IPv4 CIDR of Service cluster IPs (kubeadm `serviceSubnet`), e.g. `10.3.0.0/16`. */
  serviceCidr: string;
  workerPools: WorkerPoolConfig[];
  /**
   * `manifest_mirror`: base URL (http or https, no trailing slash) that serves pinned upstream
   * manifests for offline clusters; an upstream URL `https://host/path` is fetched as
   * `<mirror>/host/path`. Unset: fetched from the upstream URL.
   */
  manifestMirror?: string;
  /**
   * `manifest_dir`: absolute directory holding pinned upstream manifests in the same `host/path`
   * layout (relative values resolve against the declaring file's directory). Unset: not used.
   */
  manifestDir?: string;
}

/** Config-path -> source range, e.g. `cluster.controller_count` or `cluster.worker_pool.web.count`. */
export type SourceIndex = Map<string, SourceRange>;

/** Result of loading a configuration directory or file. */
export interface LoadResult {
  /** Present only when there is no error diagnostic. */
  cluster?: ClusterConfig;
  /** `component "<name>"` blocks; key = component name (see {@link ConfiguredBlock}). */
  components: Map<string, ConfiguredBlock>;
  diagnostics: Diagnostic[];
  /** Where each value came from, for preflight diagnostics (metro, plan, os, ...). */
  sources: SourceIndex;
  /** The files that were read, in load order. */
  files: string[];
}

/**
 * One `component "<name>"` block. `body` is its body decoded with the component's spec (see
 * {@link LoadOptions.componentSpecs}); undefined when no spec was given for the load or the body
 * had errors (then diagnostics name them).
 */
export interface ConfiguredBlock {
  /** The whole block. */
  range: SourceRange;
  /** `component "<name>"`, where messages about the block as a whole point. */
  headerRange: SourceRange;
  body?: DecodedBody;
}

/** Options for {@link LoadResult} producing loads. */
export interface LoadOptions {
  /** A directory (all `*.lokocfg`, non-recursive) or one file. */
  path: string;
  /** `--var name=value`, highest precedence. */
  vars?: Record<string, string>;
  /** `--var-file` paths (HCL attribute files like `lokocfg.vars`). */
  varFiles?: string[];
  /** Environment, for `LOKO_VAR_<name>` and `env()`; defaults to process.env. */
  env?: Record<string, string | undefined>;
  /**
   * Body spec per known component name (from the component registry, which src/config does not
   * import). Given: every `component` body is decoded with its spec (same diagnostics as the
   * cluster block) and an unknown name is an error at its label listing the valid ones. Not
   * given: component bodies are only recorded (no body decoding, any name accepted).
   */
  componentSpecs?: ReadonlyMap<string, BlockSpec>;
}
