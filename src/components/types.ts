/**
 * The contract every loko component implements. A component is a typed config (decoded from a
 * `component "<name>" { ... }` block with the same declarative specs as the cluster block, so
 * diagnostics carry file:line), a pure `render(config, context) -> objects`, its namespace, what it
 * needs from upstream (pinned manifests) and how to tell it is ready.
 *
 * Render is pure: everything it needs from outside (the cluster's facts, the Metal API key,
 * verified upstream manifest bytes) arrives in {@link ComponentContext}. Fetching, verifying and
 * applying live in the framework (fetch in `upstream/`, apply in `apply.ts`).
 */
import type { DecodedBody } from '../config/decode.js';
import type { BlockSpec } from '../config/spec.js';
import type { DiagnosticSink } from '../config/diagnostics.js';
import type { SourceRange } from '../config/types.js';
import type { KubeObject } from '../kube/objects.js';

/**
 * Annotation a render puts on an object holding placeholder values (e.g. the CCM's Secret without
 * the cluster's API key): comma-separated keys. The applier refuses such objects, so a render
 * without the real values can never overwrite live ones.
 */
export const PLACEHOLDER_ANNOTATION = 'loko.dev/placeholder-keys';

/** Node label carrying a worker pool's BGP choice (DESIGN.md §3). */
export const BGP_ENABLED_LABEL = 'loko.dev/bgp-enabled';

/**
 * A third-party manifest pinned by URL and digest. The URL is tag-pinned (never a branch); the
 * digest is the sha256 of the exact bytes served there, checked before any use.
 */
export interface UpstreamManifest {
  /** Key in {@link ComponentContext.upstream}, e.g. `metallb-native`. */
  name: string;
  /** Tag-pinned https URL, e.g. `https://raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml`. */
  url: string;
  /** Lowercase hex sha256 of the file. */
  sha256: string;
  /**
   * Where tests (and `npm run kube:build`) find the very same bytes: a Go module version and the
   * file's path inside the module, e.g. `{ module: 'go.universe.tf/metallb', version: 'v0.16.2',
   * path: 'config/manifests/metallb-native.yaml' }`.
   */
  goModule: { module: string; version: string; path: string };
}

/** What a component's render may know about the cluster. */
export interface ComponentContext {
  /** `cluster.name`; undefined when rendering without a cluster block (`--kubeconfig` use). */
  clusterName?: string;
  /** Equinix Metal project UUID. */
  projectId?: string;
  /** Metro code of the cluster, e.g. `da`. */
  metro?: string;
  /** Pod network CIDR (kubeadm `podSubnet`), e.g. `10.2.0.0/16`. */
  podCidr?: string;
  /** Service CIDR (kubeadm `serviceSubnet`). */
  serviceCidr?: string;
  /**
   * The control-plane Elastic IP: its address, the API server port, and the tag that marks it
   * uniquely as this cluster's endpoint (CPEM `eipTag`).
   */
  controlPlaneEndpoint?: { address: string; port: number; eipTag: string };
  /**
   * The project-scoped Metal API key loko created for the cluster (a secret). Undefined when not
   * known (e.g. `component render` without a cluster): components render a placeholder.
   */
  metalApiKey?: string;
  /** Verified upstream manifest texts by {@link UpstreamManifest.name}. */
  upstream: ReadonlyMap<string, string>;
  /** Names of all components in this apply/render (configured + bootstrap), for cross-component choices. */
  components: ReadonlySet<string>;
}

/** A readiness check run after a component's objects are applied. */
export interface ReadinessCheck {
  /** Human description, e.g. `MetalLB webhook serves`. */
  description: string;
  /** Resolves when ready; throws (naming what is missing) when `signal` aborts or time runs out. */
  wait(ctx: ReadinessContext): Promise<void>;
}

/** What a readiness check gets. */
export interface ReadinessContext {
  client: import('../kube/client.js').KubeClient;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A component loko knows. `C` is its typed config. */
export interface ComponentDefinition<C = unknown> {
  /** Registry name and `component "<name>"` label, e.g. `metallb`. */
  name: string;
  /** One line for `component list`. */
  description: string;
  /** Namespace its namespaced objects live in. */
  namespace: string;
  /** Installed by every `cluster apply` right after nodes register (CCM, CNI). */
  bootstrap: boolean;
  /** Components that must be applied before this one. */
  dependsOn: readonly string[];
  /** Spec of the block body (attributes, nested blocks) - also feeds the JSON Schema. */
  spec: BlockSpec;
  /**
   * Turns a spec-validated body into the typed config. Reports cross-field problems to `sink`
   * with ranges from the body. Called with an empty body when the component has no block.
   */
  decode(body: DecodedBody, sink: DiagnosticSink, where: SourceRange | undefined): C;
  /** Pinned third-party manifests this component renders from. */
  upstream: readonly UpstreamManifest[];
  /** Objects to apply, in any order (the applier orders them). Pure. */
  render(config: C, ctx: ComponentContext): KubeObject[];
  /**
   * Objects whose presence means the component's custom resources can be applied (e.g. the
   * webhook must serve before MetalLB CRs): the applier applies `render` output in two steps,
   * everything but these kinds first, waits for `ready`, then these. Kinds by `apiVersion/kind`
   * group, e.g. `metallb.io`.
   */
  customResourceGroups?: readonly string[];
  /** Checks after apply (and between the two steps above). */
  ready?: readonly ReadinessCheck[];
}
