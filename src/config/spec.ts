/**
 * Declarative specs of every block and attribute loko accepts. The same specs drive validation
 * (decode.ts), the JSON Schema (schema.ts) and the did-you-mean lists, so they cannot drift apart.
 * Rules that relate several values (metro vs facility, reservations vs count, ...) live in
 * cluster.ts and rules.ts.
 */
import { DEFAULT_KUBERNETES_VERSION, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR } from './defaults.js';

/** Shape and constraints of a value. `pattern` is an ECMAScript regex usable in JSON Schema too. */
export type ValueSpec =
  | {
      type: 'string';
      enum?: readonly string[];
      pattern?: string;
      /** Human wording of `pattern`, completing "must be ...". */
      format?: string;
      maxLength?: number;
    }
  | { type: 'number'; integer?: boolean; minimum?: number; enum?: readonly number[] }
  | { type: 'bool' }
  | { type: 'list'; items: ValueSpec }
  | { type: 'map'; values: ValueSpec; keys?: KeySpec }
  /** Any value (variable defaults). */
  | { type: 'any' }
  /** A type expression such as `list(string)`: accepted, never evaluated. */
  | { type: 'type-expression' };

/** Constraint on the keys of a map. */
export interface KeySpec {
  pattern: string;
  /** Human wording of `pattern`, completing "must be ...". */
  format: string;
}

/** One attribute of a block. */
export interface AttrSpec {
  name: string;
  description: string;
  value: ValueSpec;
  required?: boolean;
  /** Default when unset; absent when the default comes from elsewhere (described in `description`). */
  default?: string | number | boolean | readonly string[] | Readonly<Record<string, string>>;
  /** Deprecation note: the attribute still works but warns. */
  deprecated?: string;
}

/** One label of a block, e.g. the platform of `cluster "equinixmetal"`. */
export interface LabelSpec {
  name: string;
  /** Lowercase phrase completing "Keyed by ...". */
  description: string;
  enum?: readonly string[];
  pattern?: string;
  format?: string;
  maxLength?: number;
}

/** One block type with its attributes, nested blocks and the lokoctl names loko rejects. */
export interface BlockSpec {
  type: string;
  description: string;
  labels: readonly LabelSpec[];
  /** May appear several times (worker pools, variables, components). */
  repeatable: boolean;
  attributes: readonly AttrSpec[];
  blocks: readonly BlockSpec[];
  /** At least one of these attributes must be set. */
  requireOneOf?: readonly string[];
  /** Body is free-form and validated elsewhere (components). */
  freeform?: boolean;
  /** lokoctl attribute/block names loko does not support -> why, and what to do instead. */
  unsupported?: Readonly<Record<string, string>>;
}

/** RFC 1123 label, lowercase; lengths are checked separately (maxLength). */
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const METRO = '^[A-Za-z]{2}$';
const FACILITY = '^[A-Za-z]{2}[0-9]{1,2}$';
const SSH_PUBKEY =
  '^(ssh-rsa|ssh-ed25519|ssh-dss|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\\.com|sk-ecdsa-sha2-nistp256@openssh\\.com) AAAA[A-Za-z0-9+/]+={0,3}( [^\\n]*)?\\s*$';
/** Kubernetes label/taint key `[prefix/]name`; lengths are checked in rules.ts. */
const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const LABEL_KEY_FORMAT = 'a Kubernetes label key: [prefix/]name, e.g. "example.com/role" or "tier"';
const OS_SLUG = '^[a-z0-9][a-z0-9_.-]*$';
/** `v<major>.<minor>.<patch>`, no pre-releases (pkgs.k8s.io has no packages for them). */
const KUBERNETES_VERSION = '^v(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$';
/** Dotted-quad IPv4 with a prefix length; alignment, sizes and overlap are checked in rules.ts. */
const IPV4_CIDR =
  '^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])$';
const PLAN_SLUG = '^[a-z0-9][a-z0-9_.-]*$';

const DNS_LABEL_FORMAT =
  'a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit';

const reservationIdsDefault: AttrSpec = {
  name: 'reservation_ids_default',
  description:
    'Hardware reservation for nodes without an entry in reservation_ids: "" (on-demand) or "next-available" (any free reservation of the plan in the metro).',
  value: { type: 'string', enum: ['', 'next-available'] },
  default: '',
};

const reservationMap = (role: 'controller' | 'worker'): ValueSpec => ({
  type: 'map',
  values: {
    type: 'string',
    pattern: UUID,
    format: 'a hardware reservation UUID ("next-available" belongs in reservation_ids_default)',
  },
  keys: {
    pattern: `^${role}-(0|[1-9][0-9]*)$`,
    format: `"${role}-<index>" with a 0-based index, e.g. "${role}-0"`,
  },
});

const tags = (what: string): AttrSpec => ({
  name: 'tags',
  description: `Extra tags for ${what}, as a map; each becomes a "key:value" tag on the devices. The key "loko" and keys starting with "loko:" are reserved.`,
  value: { type: 'map', values: { type: 'string' } },
  default: {},
});

const flatcarOs =
  'loko installs a stock Equinix Metal operating system image chosen by "os" (e.g. "ubuntu_24_04") and configures it with cloud-init; Flatcar channels, versions, architectures and iPXE are not used. Remove it and set "os" if needed.';
const clc =
  'Container Linux Config snippets are Flatcar-specific; loko boots Ubuntu and configures it with cloud-init. Remove it.';

/** `worker_pool "<name>"` inside the cluster block. */
export const WORKER_POOL_SPEC: BlockSpec = {
  type: 'worker_pool',
  description: 'A group of identical worker nodes named "<cluster>-<pool>-<index>".',
  labels: [
    {
      name: 'name',
      description: 'the pool name, used in hostnames ("controller" is reserved).',
      pattern: DNS_LABEL,
      format: DNS_LABEL_FORMAT,
      maxLength: 40,
    },
  ],
  repeatable: true,
  attributes: [
    {
      name: 'count',
      description: 'Number of worker nodes in the pool (0 or more).',
      value: { type: 'number', integer: true, minimum: 0 },
      required: true,
    },
    {
      name: 'node_type',
      description: 'Equinix Metal plan of the workers (e.g. "c3.small.x86").',
      value: { type: 'string', pattern: PLAN_SLUG, format: 'a plan slug such as "c3.small.x86"' },
      default: 'c3.small.x86',
    },
    {
      name: 'metro',
      description:
        'Metro of the workers (two letters, e.g. "sv"). Defaults to the cluster\'s metro.',
      value: { type: 'string', pattern: METRO, format: 'a two-letter metro code such as "sv"' },
    },
    {
      name: 'facility',
      description:
        'Deprecated: facility of the workers (e.g. "sv15"); its first two letters give the metro.',
      value: { type: 'string', pattern: FACILITY, format: 'a facility code such as "sv15"' },
      deprecated: 'Use "metro": Equinix Metal provisions by metro; facilities are retired.',
    },
    {
      name: 'os',
      description: "Operating system slug of the workers. Defaults to the cluster's os.",
      value: {
        type: 'string',
        pattern: OS_SLUG,
        format: 'an operating-system slug such as "ubuntu_24_04"',
      },
    },
    {
      name: 'labels',
      description: "Kubernetes labels for the pool's nodes (valid label keys and values).",
      value: {
        type: 'map',
        values: { type: 'string' },
        keys: { pattern: LABEL_KEY, format: LABEL_KEY_FORMAT },
      },
      default: {},
    },
    {
      name: 'taints',
      description:
        'Kubernetes taints for the pool\'s nodes, as key = "value:Effect" with Effect NoSchedule, PreferNoSchedule or NoExecute.',
      value: {
        type: 'map',
        values: {
          type: 'string',
          pattern:
            '^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?:(NoSchedule|PreferNoSchedule|NoExecute)$',
          format: '"value:Effect" with Effect NoSchedule, PreferNoSchedule or NoExecute',
        },
        keys: { pattern: LABEL_KEY, format: LABEL_KEY_FORMAT },
      },
      default: {},
    },
    {
      name: 'disable_bgp',
      description:
        'Do not run BGP (MetalLB / Elastic IP announcements) on these nodes; sets the node label loko.dev/bgp-enabled=false.',
      value: { type: 'bool' },
      default: false,
    },
    tags("the pool's devices"),
    {
      name: 'reservation_ids',
      description:
        'Hardware reservation UUID per worker, keys "worker-<index>" (0-based); must cover every worker of the pool.',
      value: reservationMap('worker'),
      default: {},
    },
    reservationIdsDefault,
  ],
  blocks: [],
  unsupported: {
    setup_raid:
      "loko does not set up RAID or extra disks; the operating system uses the plan's default disk layout. Remove it.",
    setup_raid_hdd:
      "loko does not set up RAID or extra disks; the operating system uses the plan's default disk layout. Remove it.",
    setup_raid_ssd:
      "loko does not set up RAID or extra disks; the operating system uses the plan's default disk layout. Remove it.",
    setup_raid_ssd_fs:
      "loko does not set up RAID or extra disks; the operating system uses the plan's default disk layout. Remove it.",
    clc_snippets: clc,
    os_channel: flatcarOs,
    os_version: flatcarOs,
    os_arch: flatcarOs,
    ipxe_script_url: flatcarOs,
    cpu_manager_policy:
      'The kubelet CPU manager policy is not configurable in loko (the kubelet default "none" applies). Remove it.',
  },
};

const notConfigurable = (what: string): string =>
  `${what} is not configurable in loko; it uses fixed, tested settings. Remove it.`;

/** `cluster "equinixmetal"`. */
export const CLUSTER_SPEC: BlockSpec = {
  type: 'cluster',
  description: 'The Kubernetes cluster on Equinix Metal: control plane, worker pools and project.',
  labels: [
    {
      name: 'platform',
      description: 'the platform, "equinixmetal" ("packet" is a deprecated alias).',
      enum: ['equinixmetal', 'packet'],
    },
  ],
  repeatable: false,
  attributes: [
    {
      name: 'cluster_name',
      description:
        'Cluster name, used in hostnames ("<cluster>-controller-0") and ownership tags. A DNS label of at most 40 characters.',
      value: { type: 'string', pattern: DNS_LABEL, format: DNS_LABEL_FORMAT, maxLength: 40 },
      required: true,
    },
    {
      name: 'project_id',
      description: 'Equinix Metal project UUID.',
      value: { type: 'string', pattern: UUID, format: 'a project UUID' },
      required: true,
    },
    {
      name: 'metro',
      description:
        'Metro code of the cluster (two letters, e.g. "sv"); lowercased. Required unless facility is set.',
      value: { type: 'string', pattern: METRO, format: 'a two-letter metro code such as "sv"' },
    },
    {
      name: 'facility',
      description:
        'Deprecated: facility code (e.g. "sv15"); its first two letters give the metro. If metro is also set, they must agree.',
      value: { type: 'string', pattern: FACILITY, format: 'a facility code such as "sv15"' },
      deprecated: 'Use "metro": Equinix Metal provisions by metro; facilities are retired.',
    },
    {
      name: 'asset_dir',
      description:
        'Directory for the cluster\'s PKI, admin kubeconfig, rendered manifests and logs. Relative paths resolve against the directory of the file that sets it; use pathexpand() for "~".',
      value: { type: 'string' },
      required: true,
    },
    {
      name: 'controller_count',
      description: 'Number of controller nodes: 1, 3 or 5 (etcd needs an odd number for quorum).',
      value: { type: 'number', integer: true, enum: [1, 3, 5] },
      default: 1,
    },
    {
      name: 'controller_type',
      description: 'Equinix Metal plan of the controllers.',
      value: { type: 'string', pattern: PLAN_SLUG, format: 'a plan slug such as "c3.small.x86"' },
      default: 'c3.small.x86',
    },
    {
      name: 'os',
      description: 'Operating system slug for all nodes unless a worker pool sets its own.',
      value: {
        type: 'string',
        pattern: OS_SLUG,
        format: 'an operating-system slug such as "ubuntu_24_04"',
      },
      default: 'ubuntu_24_04',
    },
    {
      name: 'ssh_pubkeys',
      description: 'OpenSSH public keys allowed to log in to every node.',
      value: {
        type: 'list',
        items: {
          type: 'string',
          pattern: SSH_PUBKEY,
          format: 'an OpenSSH public key ("ssh-ed25519 AAAA... comment")',
        },
      },
      default: [],
    },
    tags('all devices of the cluster'),
    {
      name: 'billing_cycle',
      description: 'Billing cycle of the devices.',
      value: { type: 'string', enum: ['hourly', 'daily', 'monthly', 'yearly'] },
      default: 'hourly',
    },
    {
      name: 'kubernetes_version',
      description:
        'Kubernetes version the machines install (kubelet, kubeadm, control plane), as v<major>.<minor>.<patch>, v1.31.0 or later. Used when a machine is created; changing it does not upgrade existing machines.',
      value: {
        type: 'string',
        pattern: KUBERNETES_VERSION,
        format: 'a Kubernetes version such as "v1.36.3"',
      },
      default: DEFAULT_KUBERNETES_VERSION,
    },
    {
      name: 'pod_cidr',
      description:
        'IPv4 CIDR of the pod network; every node gets a /24 of it. Must not overlap service_cidr. Fixed when the control plane is created.',
      value: { type: 'string', pattern: IPV4_CIDR, format: 'an IPv4 CIDR such as "10.2.0.0/16"' },
      default: DEFAULT_POD_CIDR,
    },
    {
      name: 'service_cidr',
      description:
        'IPv4 CIDR of Service cluster IPs, a /12 to a /28. Must not overlap pod_cidr. Fixed when the control plane is created.',
      value: { type: 'string', pattern: IPV4_CIDR, format: 'an IPv4 CIDR such as "10.3.0.0/16"' },
      default: DEFAULT_SERVICE_CIDR,
    },
    {
      name: 'reservation_ids',
      description:
        'Hardware reservation UUID per controller, keys "controller-<index>" (0-based); must cover every controller.',
      value: reservationMap('controller'),
      default: {},
    },
    reservationIdsDefault,
    {
      name: 'manifest_mirror',
      description:
        'Base URL (http:// or https://) of a mirror of the pinned upstream manifests, for clusters without internet access: an upstream URL "https://host/path" is fetched as "<manifest_mirror>/host/path" and its sha256 is checked as usual. The environment variable LOKO_MANIFEST_MIRROR overrides it.',
      value: {
        type: 'string',
        pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$',
        format: 'an http:// or https:// base URL such as "https://mirror.example.com/loko"',
      },
    },
    {
      name: 'manifest_dir',
      description:
        'Directory holding the pinned upstream manifests in the "host/path" layout of their URLs (e.g. raw.githubusercontent.com/metallb/metallb/v0.15.2/config/manifests/metallb-native.yaml), read instead of downloading; each file\'s sha256 is checked as usual. Relative paths resolve against the directory of the file that sets it.',
      value: { type: 'string' },
    },
  ],
  blocks: [WORKER_POOL_SPEC],
  requireOneOf: ['metro', 'facility'],
  unsupported: {
    auth_token:
      'loko never reads the API token from configuration, so it cannot end up in a repository or in rendered files. Remove it and set METAL_AUTH_TOKEN in the environment.',
    dns: 'loko serves the Kubernetes API on a control-plane Elastic IP, so it creates no DNS records and needs no DNS provider. Remove the dns block.',
    controller_clc_snippets: clc,
    clc_snippets: clc,
    os_channel: flatcarOs,
    os_version: flatcarOs,
    os_arch: flatcarOs,
    ipxe_script_url: flatcarOs,
    management_cidrs:
      "loko does not install lokoctl's Calico host-endpoint protection, so there is no management allow-list. Remove it and restrict access with your own firewall rules.",
    node_private_cidr:
      "loko reads each node's private address from the Equinix Metal API, so it needs no private CIDR list. Remove it.",
    node_private_cidrs:
      "loko reads each node's private address from the Equinix Metal API, so it needs no private CIDR list. Remove it.",
    enable_aggregation: 'The API aggregation layer is always enabled by loko. Remove it.',
    enable_tls_bootstrap:
      'Kubelets always join with bootstrap tokens and TLS bootstrapping in loko. Remove it.',
    encrypt_pod_traffic: notConfigurable('WireGuard pod-traffic encryption'),
    ignore_x509_cn_check:
      'This worked around CommonName-only certificates in old Lokomotive; loko issues certificates with SANs. Remove it.',
    network_mtu: notConfigurable('The pod network MTU'),
    cluster_domain_suffix: notConfigurable('The cluster DNS domain'),
    enable_reporting: 'Calico usage reporting is not part of loko. Remove it.',
    certs_validity_period_hours: notConfigurable('Certificate validity'),
    disable_self_hosted_kubelet:
      'loko never runs a self-hosted kubelet; the kubelet is a system service. Remove it.',
    conntrack_max_per_core: notConfigurable('The kube-proxy conntrack limit'),
    oidc: 'loko does not configure kube-apiserver OIDC authentication. Remove the oidc block.',
    enable_node_local_dns: 'NodeLocal DNSCache is not part of loko. Remove it.',
    node_local_dns_ip: 'NodeLocal DNSCache is not part of loko. Remove it.',
    kube_apiserver_extra_flags: notConfigurable('kube-apiserver flags'),
    network_ip_autodetection_method: notConfigurable('Calico IP autodetection'),
    nodes_depend_on: "This is internal to lokoctl's Terraform modules. Remove it.",
  },
};

/** `variable "<name>"`: `default`, `type` (its outer kind is checked) and `description`. */
export const VARIABLE_SPEC: BlockSpec = {
  type: 'variable',
  description:
    'An input variable, referenced as var.<name>. Values come from --var, LOKO_VAR_<name>, --var-file, lokocfg.vars or the default, in that order.',
  labels: [
    {
      name: 'name',
      description: 'the variable name.',
      pattern: '^[A-Za-z_][A-Za-z0-9_-]*$',
      format: 'an identifier (letters, digits, "_" and "-", not starting with a digit)',
    },
  ],
  repeatable: true,
  attributes: [
    {
      name: 'default',
      description: 'Value used when no other source sets the variable.',
      value: { type: 'any' },
    },
    {
      name: 'type',
      description:
        'Type constraint such as string, number or list(string); values of another type are errors.',
      value: { type: 'type-expression' },
    },
    { name: 'description', description: 'What the variable is for.', value: { type: 'string' } },
  ],
  blocks: [],
};

/** `component "<name>"`: its body is validated by the component itself. */
export const COMPONENT_SPEC: BlockSpec = {
  type: 'component',
  description: 'A cluster component (e.g. metallb) and its settings.',
  labels: [{ name: 'name', description: 'the component name.' }],
  repeatable: true,
  attributes: [],
  blocks: [],
  freeform: true,
};

/** The top level of a lokocfg file. */
export const TOP_LEVEL_BLOCKS: readonly BlockSpec[] = [CLUSTER_SPEC, VARIABLE_SPEC, COMPONENT_SPEC];

/** Top-level lokoctl blocks loko rejects, with the reason. */
export const TOP_LEVEL_UNSUPPORTED: Readonly<Record<string, string>> = {
  backend:
    'loko keeps no Terraform state: it discovers the resources it owns by their tags (loko:cluster=<name>) on Equinix Metal. Remove the backend block.',
};

/** The platform names loko accepts in `cluster "<platform>"`. */
export const PLATFORM = 'equinixmetal';
export const LEGACY_PLATFORM = 'packet';
