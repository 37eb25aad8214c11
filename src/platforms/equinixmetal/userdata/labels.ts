/**
 * Node labels and taints as the kubelet registers them (`--node-labels`, kubeadm
 * `nodeRegistration.taints`), with the checks the kubelet and the NodeRestriction admission plugin
 * apply, so a bad label fails at render time on the operator's machine instead of leaving a kubelet
 * that refuses to start on a machine nobody watches.
 */
import type { Taint } from '../../../config/types.js';
import { UserdataError } from './errors.js';

/** `true|false` from the pool's `disable_bgp`; controllers carry `false`. */
export const BGP_ENABLED_LABEL = 'loko.dev/bgp-enabled';
/** The worker pool a node belongs to. */
export const POOL_LABEL = 'loko.dev/pool';
/** The taint kubeadm puts on control-plane nodes (it omits it only when taints are given). */
export const CONTROL_PLANE_TAINT: Taint = {
  key: 'node-role.kubernetes.io/control-plane',
  value: '',
  effect: 'NoSchedule',
};

/**
 * Label keys in the `kubernetes.io`/`k8s.io` namespaces that a kubelet may still set on its own
 * Node (k8s.io/kubelet `well_known_labels.go`). Any other key there makes the kubelet refuse to
 * start (`--node-labels`), and NodeRestriction would reject it anyway.
 */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
]);
/** Namespaces (and their subdomains) of `kubernetes.io` a kubelet may use freely. */
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label or taint key, or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return 'its prefix must be a lowercase DNS subdomain';
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return 'its name must be 1-63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric';
  }
  return undefined;
}

/** Why `value` is not a valid label or taint value, or undefined. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !NAME.test(value)) {
    return 'it must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric';
  }
  return undefined;
}

/**
 * True when a kubelet may set `key` on its own Node: any key outside the `kubernetes.io` and
 * `k8s.io` namespaces (so `loko.dev/...` is fine), or one of the few allowed inside them.
 */
export function kubeletMaySetLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const ns = key.slice(0, slash);
  const restricted = ['kubernetes.io', 'k8s.io'].some((d) => ns === d || ns.endsWith(`.${d}`));
  if (!restricted) return true;
  if (KUBELET_LABELS.has(key)) return true;
  return KUBELET_LABEL_NAMESPACES.some((d) => ns === d || ns.endsWith(`.${d}`));
}

/**
 * Checks user labels (a pool's `labels`) and merges them with loko's own labels, sorted by key.
 * Throws {@link UserdataError} naming the offending key; `where` names the pool for the message.
 */
export function nodeLabels(
  user: Record<string, string>,
  own: Record<string, string>,
  where: string,
): Record<string, string> {
  for (const [key, value] of Object.entries(user)) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem)
      throw new UserdataError(`${where}: label key "${key}" is invalid: ${keyProblem}`);
    const valueProblem = labelValueProblem(value);
    if (valueProblem) {
      throw new UserdataError(`${where}: value of label "${key}" is invalid: ${valueProblem}`);
    }
    if (!kubeletMaySetLabel(key)) {
      throw new UserdataError(`${where}: a kubelet may not set label "${key}" on its own node`, {
        hint:
          'Labels in the kubernetes.io and k8s.io namespaces are reserved (NodeRestriction); ' +
          'only node.kubernetes.io/*, kubelet.kubernetes.io/* and a few well-known keys are ' +
          'allowed. Use your own prefix, e.g. example.com/role.',
      });
    }
    if (key in own && own[key] !== value) {
      throw new UserdataError(`${where}: label "${key}" is set by loko and cannot be overridden`, {
        hint: key === BGP_ENABLED_LABEL ? 'Use the pool attribute disable_bgp instead.' : undefined,
      });
    }
  }
  const merged = { ...user, ...own };
  return Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k]!]),
  );
}

/** Checks taints (keys, values); throws {@link UserdataError} naming the offending key. */
export function checkTaints(taints: Taint[], where: string): Taint[] {
  for (const t of taints) {
    const keyProblem = labelKeyProblem(t.key);
    if (keyProblem)
      throw new UserdataError(`${where}: taint key "${t.key}" is invalid: ${keyProblem}`);
    const valueProblem = labelValueProblem(t.value);
    if (valueProblem) {
      throw new UserdataError(`${where}: value of taint "${t.key}" is invalid: ${valueProblem}`);
    }
  }
  return taints;
}

/** `k=v,k2=v2`: the kubelet's `--node-labels` value (keys and values cannot contain `,` or `=`). */
export function nodeLabelsArg(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
