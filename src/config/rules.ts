/**
 * Named validation rules that look inside map keys or relate several values: Kubernetes labels and
 * taints, user tags, and lokoctl's hardware-reservation rules.
 */
import type { Attribute } from './ast.js';
import { DiagnosticSink, formatPosition } from './diagnostics.js';
import { keyRange, valueRange } from './decode.js';
import { MIN_KUBERNETES_MINOR, NODE_POD_CIDR_PREFIX } from './defaults.js';
import type { SourceRange, Taint } from './types.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Why `key` is not a valid Kubernetes label (or taint) key, or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `"${key}" has more than one "/"; a key is [prefix/]name.`;
  const name = parts[parts.length - 1]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `The prefix "${prefix}" must be a DNS subdomain (lowercase letters, digits, "-" and ".", at most 253 characters).`;
  }
  if (name.length > 63 || !LABEL_NAME.test(name)) {
    return `The name "${name}" must be at most 63 characters of letters, digits, "-", "_" and ".", starting and ending with a letter or digit.`;
  }
  return undefined;
}

/** Why `value` is not a valid Kubernetes label value, or undefined. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !LABEL_NAME.test(value)) {
    return `"${value}" must be empty or at most 63 characters of letters, digits, "-", "_" and ".", starting and ending with a letter or digit.`;
  }
  return undefined;
}

/** Keys in kubernetes.io / k8s.io namespaces that the NodeRestriction admission lets a kubelet set. */
const KUBELET_ALLOWED = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);

/**
 * Why a kubelet may not register a node with this label, or undefined. Node labels are passed to
 * the kubelet, which refuses to start with labels in the kubernetes.io / k8s.io namespaces
 * (NodeRestriction), and loko owns the loko.dev namespace.
 */
export function nodeLabelProblem(key: string): string | undefined {
  const prefix = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
  const under = (ns: string): boolean => prefix === ns || prefix.endsWith(`.${ns}`);
  if (prefix === 'loko.dev' || prefix.endsWith('.loko.dev')) {
    return `Labels under loko.dev/ are set by loko (e.g. loko.dev/bgp-enabled follows disable_bgp); choose another prefix.`;
  }
  if ((under('kubernetes.io') || under('k8s.io')) && !KUBELET_ALLOWED.has(key)) {
    if (under('kubelet.kubernetes.io') || under('node.kubernetes.io')) return undefined;
    return `A kubelet may not set labels in the kubernetes.io or k8s.io namespaces (NodeRestriction admission), so "${key}" would keep nodes from registering. Use your own prefix, e.g. "example.com/role", or a node.kubernetes.io/ key.`;
  }
  return undefined;
}

/** Validates a pool's `labels` map; reports each bad entry at its key or value. */
export function checkLabels(
  labels: Record<string, string>,
  attr: Attribute | undefined,
  path: string,
  fallback: SourceRange,
  sink: DiagnosticSink,
): boolean {
  let ok = true;
  for (const [k, v] of Object.entries(labels)) {
    const keyProblem = labelKeyProblem(k) ?? nodeLabelProblem(k);
    if (keyProblem) {
      sink.error(`Invalid label key "${k}" in ${path}`, keyProblem, keyRange(attr, k, fallback));
      ok = false;
    }
    const valueProblem = labelValueProblem(v);
    if (valueProblem) {
      sink.error(
        `Invalid label value for "${k}" in ${path}`,
        valueProblem,
        valueRange(attr, k, fallback),
      );
      ok = false;
    }
  }
  return ok;
}

/** Parses `taints = { key = "value:Effect" }` (formats already checked by the spec) into taints. */
export function parseTaints(
  taints: Record<string, string>,
  attr: Attribute | undefined,
  path: string,
  fallback: SourceRange,
  sink: DiagnosticSink,
): Taint[] {
  const out: Taint[] = [];
  for (const [key, raw] of Object.entries(taints)) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) {
      sink.error(
        `Invalid taint key "${key}" in ${path}`,
        keyProblem,
        keyRange(attr, key, fallback),
      );
      continue;
    }
    const at = raw.lastIndexOf(':');
    const value = raw.slice(0, at);
    // The spec's pattern checks the characters; the kubelet also limits the length.
    const valueProblem = labelValueProblem(value);
    if (valueProblem) {
      sink.error(
        `Invalid taint value for "${key}" in ${path}`,
        valueProblem,
        valueRange(attr, key, fallback),
      );
      continue;
    }
    out.push({ key, value, effect: raw.slice(at + 1) as Taint['effect'] });
  }
  return out;
}

/**
 * User tags map -> sorted `key:value` strings. Tags starting with `loko` are refused: loko finds
 * the resources it owns by `loko:` tags, so a user tag could make it adopt or delete devices.
 */
export function userTags(
  tags: Record<string, string>,
  attr: Attribute | undefined,
  path: string,
  fallback: SourceRange,
  sink: DiagnosticSink,
): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(tags)) {
    if (k === '' || /^loko(:|$)/i.test(k)) {
      sink.error(
        `Invalid tag key "${k}" in ${path}`,
        k === ''
          ? 'Tag keys cannot be empty.'
          : 'The tag key "loko" and keys starting with "loko:" are reserved: loko finds the resources it owns by them. Rename the key.',
        keyRange(attr, k, fallback),
      );
      continue;
    }
    out.push(`${k}:${v}`);
  }
  return out.sort();
}

/** Operating systems loko can boot: its userdata is cloud-init for Ubuntu (kubeadm from apt). */
export const SUPPORTED_OS = ['ubuntu_22_04', 'ubuntu_24_04'] as const;

/**
 * `os` of the cluster or a pool: only the Ubuntu releases loko's cloud-init userdata is written
 * for. Other slugs would pass the API's checks and then fail on every machine, so they are refused.
 */
export function checkOs(
  os: string,
  where: string,
  range: SourceRange,
  sink: DiagnosticSink,
): boolean {
  if ((SUPPORTED_OS as readonly string[]).includes(os)) return true;
  const supported = SUPPORTED_OS.map((s) => `"${s}"`).join(' or ');
  let why: string;
  if (os === 'custom_ipxe') {
    why =
      'loko boots a stock Ubuntu image and configures it with cloud-init userdata; iPXE boot (custom_ipxe) is not supported.';
  } else if (os.startsWith('flatcar')) {
    why =
      'loko configures machines with cloud-init userdata written for Ubuntu; Flatcar (Ignition) is not supported.';
  } else {
    why =
      'loko configures machines with cloud-init userdata written for Ubuntu (kubeadm packages from apt); other operating systems are not supported.';
  }
  sink.error(`Unsupported operating system "${os}" in ${where}`, `${why} Use ${supported}.`, range);
  return false;
}

/** The reservation attributes of one block, as decoded. */
export interface ReservationInput {
  role: 'controller' | 'worker';
  /** `cluster` or `worker_pool "web"`, for messages. */
  where: string;
  /** Name of the count attribute in messages (`controller_count` or `count`). */
  countName: string;
  count: number | undefined;
  ids: Record<string, string>;
  idsAttr: Attribute | undefined;
  dflt: string;
  dfltAttr: Attribute | undefined;
  header: SourceRange;
}

/**
 * lokoctl's reservation rules that relate several values: not both `reservation_ids` and
 * `reservation_ids_default`, and every index 0..count-1 present exactly once (key format and UUID
 * values are spec checks). Returns index -> UUID.
 */
export function checkReservations(
  r: ReservationInput,
  sink: DiagnosticSink,
): Record<number, string> {
  const out: Record<number, string> = {};
  const entries = Object.entries(r.ids);
  if (entries.length === 0) return out;
  const mapRange = r.idsAttr?.expr.range ?? r.header;
  if (r.dflt !== '') {
    sink.error(
      `Cannot set both reservation_ids and reservation_ids_default in ${r.where}`,
      'Use reservation_ids to pin each node to a reservation, or reservation_ids_default = "next-available" to take any free one, not both.',
      r.dfltAttr?.expr.range ?? r.header,
    );
  }
  let keysOk = true;
  for (const [key, id] of entries) {
    // Key format and UUID values are checked by the spec; here only the indexes against the count.
    const index = Number(key.slice(r.role.length + 1));
    if (r.count !== undefined && index >= r.count) {
      sink.error(
        `Reservation key "${key}" is out of range in ${r.where}`,
        `${r.countName} is ${r.count}, so indexes run from 0 to ${r.count - 1}.`,
        keyRange(r.idsAttr, key, mapRange),
      );
      keysOk = false;
      continue;
    }
    out[index] = id.toLowerCase();
  }
  if (keysOk && r.count !== undefined) {
    const missing: string[] = [];
    for (let i = 0; i < r.count; i++)
      if (!(`${r.role}-${i}` in r.ids)) missing.push(`${r.role}-${i}`);
    if (missing.length > 0) {
      sink.error(
        `reservation_ids does not match ${r.countName} in ${r.where}`,
        `${r.countName} is ${r.count} but reservation_ids has ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}; missing ${missing.join(', ')}. Give every node a reservation, or use reservation_ids_default instead.`,
        mapRange,
      );
    }
  }
  return out;
}

/** Reports a hardware reservation used by two nodes (a reservation holds one device). */
export function checkReservationReuse(
  uses: { id: string; what: string; range: SourceRange }[],
  sink: DiagnosticSink,
): void {
  const first = new Map<string, { what: string; range: SourceRange }>();
  for (const u of uses) {
    const prev = first.get(u.id);
    if (prev) {
      sink.error(
        `Reservation ${u.id} is used twice`,
        `${u.what} uses the reservation already given to ${prev.what} at ${formatPosition(prev.range)}; a reservation holds one device.`,
        u.range,
      );
    } else first.set(u.id, u);
  }
}

/** `v1.36.3` -> its minor (36); the spec's pattern has checked the form. */
function minorOf(version: string): number {
  return Number(version.split('.')[1]);
}

/**
 * `kubernetes_version`: loko's userdata speaks kubeadm's v1beta4 configuration, which kubeadm
 * reads from v1.31 on; a version newer than the one loko was tested with gets a warning.
 */
export function checkKubernetesVersion(
  version: string,
  tested: string,
  range: SourceRange,
  sink: DiagnosticSink,
): boolean {
  if (!version.startsWith('v1.') || minorOf(version) < MIN_KUBERNETES_MINOR) {
    sink.error(
      `Kubernetes ${version} is too old for loko`,
      `loko bootstraps machines with kubeadm's v1beta4 configuration, which needs Kubernetes v1.${MIN_KUBERNETES_MINOR}.0 or later. The default is ${tested}.`,
      range,
    );
    return false;
  }
  if (minorOf(version) > minorOf(tested)) {
    sink.warning(
      `Kubernetes ${version} is newer than loko was tested with (${tested})`,
      'New machines will install it, but kubeadm configuration or package layout may have changed; prefer the tested version for production.',
      range,
    );
  }
  return true;
}

/** An IPv4 CIDR as numbers (the spec's pattern has checked the form). */
interface Cidr {
  text: string;
  start: number;
  prefix: number;
  size: number;
}

function parseCidr(text: string): Cidr {
  const [ip, bits] = text.split('/') as [string, string];
  const n = ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
  const prefix = Number(bits);
  return { text, start: n, prefix, size: 2 ** (32 - prefix) };
}

function ipv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** One of `pod_cidr` / `service_cidr` as decoded. */
export interface NetworkInput {
  name: 'pod_cidr' | 'service_cidr';
  value: string;
  range: SourceRange;
}

/**
 * `pod_cidr` and `service_cidr`: network addresses (no host bits), sizes Kubernetes accepts (a
 * /24 of the pod network per node; kube-apiserver takes a service range of /12 or smaller, and
 * the cluster DNS Service uses its tenth address, so /28 at most), and no overlap.
 */
export function checkNetworks(
  pod: NetworkInput,
  service: NetworkInput,
  nodeCount: number,
  sink: DiagnosticSink,
): boolean {
  let ok = true;
  const parsed = new Map<string, Cidr>();
  for (const n of [pod, service]) {
    const c = parseCidr(n.value);
    if (c.start % c.size !== 0) {
      const base = ipv4(c.start - (c.start % c.size));
      sink.error(
        `${n.name} "${n.value}" has host bits set`,
        `Write the network address: "${base}/${c.prefix}".`,
        n.range,
      );
      ok = false;
      continue;
    }
    parsed.set(n.name, c);
  }
  const p = parsed.get('pod_cidr');
  if (p) {
    const blocks = p.prefix > NODE_POD_CIDR_PREFIX ? 0 : 2 ** (NODE_POD_CIDR_PREFIX - p.prefix);
    if (blocks < Math.max(1, nodeCount)) {
      sink.error(
        `pod_cidr "${pod.value}" is too small for ${nodeCount} node${nodeCount === 1 ? '' : 's'}`,
        `Every node gets a /${NODE_POD_CIDR_PREFIX} of the pod network, so "${pod.value}" holds ${blocks}. Use a larger network such as "10.2.0.0/16".`,
        pod.range,
      );
      ok = false;
    }
  }
  const s = parsed.get('service_cidr');
  if (s && (s.prefix < 12 || s.prefix > 28)) {
    sink.error(
      `service_cidr "${service.value}" must be a /12 to a /28`,
      s.prefix < 12
        ? 'kube-apiserver refuses a Service range larger than /12 for IPv4.'
        : 'The cluster DNS Service takes the tenth address of the range, so it needs at least 16 addresses.',
      service.range,
    );
    ok = false;
  }
  if (p && s && p.start <= s.start + s.size - 1 && s.start <= p.start + p.size - 1) {
    sink.error(
      `pod_cidr "${pod.value}" overlaps service_cidr "${service.value}"`,
      'Pod IPs and Service IPs must come from separate ranges; the defaults are "10.2.0.0/16" and "10.3.0.0/16".',
      pod.range,
    );
    ok = false;
  }
  return ok;
}
