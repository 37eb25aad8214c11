/**
 * What `kubeadm init` creates in a new cluster that joining machines and the admin rely on: the
 * bootstrap-token Secrets of the InitConfiguration, the `kube-public/cluster-info` ConfigMap
 * (signed per token by the controller-manager's bootstrap signer) with its anonymous read access,
 * the RBAC that lets token holders join and get their client certificates approved, the
 * `kubeadm:cluster-admins` binding behind loko's admin certificate, and the `kubeadm-config`
 * ConfigMap. Names and contents follow kubeadm's phases `bootstrap-token` and `upload-config`.
 */
import { stringify } from 'yaml';
import type { KubeApi } from './kube-api.js';
import type { BootstrapTokenSpec, MachineSpec } from './userdata.js';

const MANAGER = 'kubeadm';
const NODE_BOOTSTRAP_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** Seconds of a Go duration (`4h0m0s`, `30m`, `1.5h`, `0s`). */
export function parseGoDuration(s: string): number | undefined {
  const text = s.trim();
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(h|m|s|ms)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed = re.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** The Secret `kubeadm init` creates for a bootstrap token (`bootstrap-token-<id>`). */
export function tokenSecret(t: BootstrapTokenSpec, now: Date): Record<string, unknown> {
  const m = TOKEN_PATTERN.exec(t.token);
  if (!m) throw new Error('a bootstrap token in the InitConfiguration is malformed');
  const ttl = parseGoDuration(t.ttl ?? '24h0m0s') ?? 24 * 3600;
  const usages = t.usages ?? ['signing', 'authentication'];
  const groups = t.groups ?? [NODE_BOOTSTRAP_GROUP];
  const data: Record<string, string> = {
    'token-id': m[1]!,
    'token-secret': m[2]!,
    ...(t.description ? { description: t.description } : {}),
    ...(ttl > 0
      ? { expiration: new Date(now.getTime() + ttl * 1000).toISOString().replace(/\.\d+Z$/, 'Z') }
      : {}),
    ...Object.fromEntries(usages.map((u) => [`usage-bootstrap-${u}`, 'true'])),
    ...(groups.length > 0 ? { 'auth-extra-groups': groups.join(',') } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${m[1]}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: data,
  };
}

/** kube-public/cluster-info: the endpoint and CA, readable anonymously. */
export function clusterInfo(server: string, caPem: string): Record<string, unknown> {
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: '',
        cluster: { 'certificate-authority-data': Buffer.from(caPem).toString('base64'), server },
      },
    ],
    contexts: null,
    'current-context': '',
    preferences: {},
    users: null,
  });
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cluster-info', namespace: 'kube-public' },
    data: { kubeconfig },
  };
}

type Obj = Record<string, unknown>;

function clusterRoleBinding(name: string, role: string, group: string): Obj {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  };
}

function role(name: string, namespace: string, configMap: string): Obj {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [configMap], verbs: ['get'] },
    ],
  };
}

function roleBinding(
  name: string,
  namespace: string,
  subjects: Array<{ kind: 'User' | 'Group'; name: string }>,
): Obj {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: subjects.map((s) => ({ apiGroup: 'rbac.authorization.k8s.io', ...s })),
  };
}

/** API path of an object (core and named groups, namespaced or not). */
export function objectPath(obj: Obj, name = (obj.metadata as { name: string }).name): string {
  const apiVersion = String(obj.apiVersion);
  const kind = String(obj.kind);
  const ns = (obj.metadata as { namespace?: string }).namespace;
  const plural = kind.toLowerCase().endsWith('y')
    ? `${kind.toLowerCase().slice(0, -1)}ies`
    : `${kind.toLowerCase()}s`;
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${ns ? `/namespaces/${ns}` : ''}/${plural}/${name}`;
}

/** Everything `kubeadm init` would have created, except the tokens (see {@link createTokens}). */
export function initObjects(spec: MachineSpec, server: string, caPem: string): Obj[] {
  const cluster = spec.cluster!;
  return [
    clusterInfo(server, caPem),
    role('kubeadm:bootstrap-signer-clusterinfo', 'kube-public', 'cluster-info'),
    roleBinding('kubeadm:bootstrap-signer-clusterinfo', 'kube-public', [
      { kind: 'User', name: 'system:anonymous' },
    ]),
    clusterRoleBinding(
      'kubeadm:kubelet-bootstrap',
      'system:node-bootstrapper',
      NODE_BOOTSTRAP_GROUP,
    ),
    clusterRoleBinding(
      'kubeadm:node-autoapprove-bootstrap',
      'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      NODE_BOOTSTRAP_GROUP,
    ),
    clusterRoleBinding(
      'kubeadm:node-autoapprove-certificate-rotation',
      'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
      'system:nodes',
    ),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'kubeadm:get-nodes' },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
    },
    clusterRoleBinding('kubeadm:get-nodes', 'kubeadm:get-nodes', NODE_BOOTSTRAP_GROUP),
    // loko's admin certificate is in this group (kubeadm's admin.conf since 1.29).
    clusterRoleBinding('kubeadm:cluster-admins', 'cluster-admin', 'kubeadm:cluster-admins'),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kubeadm-config', namespace: 'kube-system' },
      data: { ClusterConfiguration: stringify(cluster.document) },
    },
    role('kubeadm:nodes-kubeadm-config', 'kube-system', 'kubeadm-config'),
    roleBinding('kubeadm:nodes-kubeadm-config', 'kube-system', [
      { kind: 'Group', name: NODE_BOOTSTRAP_GROUP },
      { kind: 'Group', name: 'system:nodes' },
    ]),
  ];
}

/** Applies {@link initObjects} (idempotent: server-side apply as field manager `kubeadm`). */
export async function applyInitObjects(
  api: KubeApi,
  spec: MachineSpec,
  server: string,
  caPem: string,
): Promise<void> {
  for (const obj of initObjects(spec, server, caPem)) {
    await api.apply(objectPath(obj), obj, MANAGER);
  }
}

/**
 * Creates the InitConfiguration's bootstrap tokens as Secrets, once: an existing Secret is left
 * as it is, so its expiration keeps counting from the first `kubeadm init`.
 */
export async function createTokens(api: KubeApi, spec: MachineSpec, now: Date): Promise<void> {
  for (const t of spec.bootstrapTokens) {
    await api.create('/api/v1/namespaces/kube-system/secrets', tokenSecret(t, now));
  }
}
