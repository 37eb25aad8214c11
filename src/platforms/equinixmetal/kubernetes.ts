/**
 * The cluster's Kubernetes API as `cluster apply` and `loko health` use it: is the API serving
 * loko's admin, which nodes are registered and Ready, and minting a bootstrap token for machines
 * created after the first apply. {@link ClusterApi} is the seam unit tests fake; the real one
 * ({@link clusterApiFromKubeConfig}) goes through src/kube, loaded only when used.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Taint } from '../../config/types.js';
import type { KubeconfigSpec } from '../../kube/kubeconfig.js';
import type { KubeObject } from '../../kube/objects.js';
import type { BootstrapToken, ClusterPki } from '../../pki/index.js';
import { endpointUrl } from './endpoint.js';

/** The group kubeadm's node bootstrap RBAC binds (join, CSR auto-approval). */
export const NODE_BOOTSTRAP_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

/** A Node as apply and health need it. */
export interface NodeStatus {
  name: string;
  ready: boolean;
  /** `reason: message` of the Ready condition when it is not True (or "no Ready condition"). */
  detail?: string;
  labels: Record<string, string>;
  taints: Taint[];
}

/** One check of the API: serving loko's admin, or why not (in words). */
export type ApiProbe = { ready: true } | { ready: false; state: string };

/** What apply and health do with the cluster's API. */
export interface ClusterApi {
  /** `https://<endpoint>:6443`. */
  readonly server: string;
  /**
   * One check: `/readyz` answers 200 and loko's admin may read `kube-system` (a 403 right after
   * `kubeadm init`, until kubeadm binds `kubeadm:cluster-admins`, is "not yet"). Never throws for
   * an unreachable or refusing API; it says why in `state`.
   */
  probe(signal?: AbortSignal): Promise<ApiProbe>;
  /** `GET /readyz?verbose`: status and the per-check lines. Throws when there is no answer. */
  readyz(signal?: AbortSignal): Promise<{ status: number; body: string }>;
  /** Every Node. */
  listNodes(): Promise<NodeStatus[]>;
  /** Creates the bootstrap-token Secret of `token` ({@link bootstrapTokenSecret}). */
  createBootstrapToken(token: BootstrapToken, expires: Date): Promise<void>;
}

/** Builds the API client for a kubeconfig spec (apply: from the PKI and the endpoint). */
export type ConnectClusterApi = (spec: KubeconfigSpec) => Promise<ClusterApi>;

/** The admin kubeconfig of the cluster: CA-verifying, loko's admin client certificate. */
export function adminKubeconfig(
  clusterName: string,
  endpoint: string,
  pki: Pick<ClusterPki, 'ca' | 'admin'>,
): KubeconfigSpec {
  return {
    server: endpointUrl(endpoint),
    caPem: pki.ca.certPem,
    user: { clientCertificatePem: pki.admin.certPem, clientKeyPem: pki.admin.key.reveal() },
    clusterName,
    userName: `${clusterName}-admin`,
    contextName: `${clusterName}-admin@${clusterName}`,
  };
}

/**
 * The Secret kubeadm's token authenticator reads (`bootstrap-token-<id>` in kube-system), shaped
 * as `kubeadm token create` makes it: usable for authentication (TLS bootstrap) and signing (the
 * `cluster-info` discovery), in the group kubeadm's join RBAC binds, expiring at `expires`.
 * Holds the secret half of the token: never print it.
 */
export function bootstrapTokenSecret(
  token: BootstrapToken,
  expires: Date,
  description = 'loko: joins machines created by `loko cluster apply`',
): KubeObject {
  const [id, secret] = token.reveal().split('.') as [string, string];
  const data: Record<string, string> = {
    'token-id': id,
    'token-secret': secret,
    expiration: expires.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
    'auth-extra-groups': NODE_BOOTSTRAP_GROUP,
    description,
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
  } as KubeObject;
}

interface NodeObject extends KubeObject {
  metadata: KubeObject['metadata'] & { labels?: Record<string, string> };
  spec?: { taints?: Array<{ key: string; value?: string; effect: string }> };
  status?: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

/** A Node object -> {@link NodeStatus}. */
export function nodeStatus(n: NodeObject): NodeStatus {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  const ok = ready?.status === 'True';
  const detail = ok
    ? undefined
    : ready
      ? [ready.reason, ready.message].filter(Boolean).join(': ') || `Ready=${ready.status}`
      : 'no Ready condition yet';
  return {
    name: n.metadata.name,
    ready: ok,
    ...(detail ? { detail } : {}),
    labels: { ...(n.metadata.labels ?? {}) },
    taints: (n.spec?.taints ?? []).map((t) => ({
      key: t.key,
      value: t.value ?? '',
      effect: t.effect as Taint['effect'],
    })),
  };
}

/** The real {@link ClusterApi} over `kc` (src/kube, loaded on first use). */
export async function clusterApiFromKubeConfig(kc: KubeConfig): Promise<ClusterApi> {
  const kube = await import('../../kube/index.js');
  const client = new kube.KubeClient(kc, { requestTimeoutMs: 15_000 });
  const get = (p: string, signal?: AbortSignal) =>
    kube.kubeGet(kc, p, { timeoutMs: 10_000, ...(signal ? { signal } : {}) });
  return {
    server: client.server,
    async probe(signal) {
      try {
        const r = await get('/readyz', signal);
        if (r.status !== 200) return { ready: false, state: `/readyz answered ${describe(r)}` };
        const ns = await get('/api/v1/namespaces/kube-system', signal);
        if (ns.status === 200) return { ready: true };
        if (ns.status === 403) {
          return {
            ready: false,
            state:
              "loko's admin is not authorized yet (403); kubeadm binds kubeadm:cluster-admins right after init",
          };
        }
        if (ns.status === 401) {
          return {
            ready: false,
            state:
              "the API does not accept loko's admin certificate (401): is it a control plane of this cluster's CA?",
          };
        }
        return { ready: false, state: `GET kube-system answered ${describe(ns)}` };
      } catch (err) {
        if (err instanceof kube.KubeConnectionError)
          return { ready: false, state: apiErrorReason(err) };
        throw err;
      }
    },
    readyz: (signal) => get('/readyz?verbose', signal),
    async listNodes() {
      const nodes = await client.list<NodeObject>('v1', 'Node');
      return nodes.map(nodeStatus).sort((a, b) => a.name.localeCompare(b.name));
    },
    async createBootstrapToken(token, expires) {
      await client.apply(bootstrapTokenSecret(token, expires));
    },
  };
}

/**
 * The real {@link ConnectClusterApi}. The Kubernetes client (heavy to load) is loaded only once
 * something listens on the endpoint: until then a probe is one TCP connect, so a run that finds no
 * API (machines only, or a control plane still booting) does not pay for it.
 */
export const connectClusterApi: ConnectClusterApi = async (spec) => {
  let real: Promise<ClusterApi> | undefined;
  const load = (): Promise<ClusterApi> =>
    (real ??= import('../../kube/index.js').then((kube) =>
      clusterApiFromKubeConfig(kube.kubeconfigFromSpec(spec)),
    ));
  const url = new URL(spec.server);
  return {
    server: spec.server,
    async probe(signal) {
      const refused = await tcpRefused(url.hostname, Number(url.port || 443), signal);
      if (refused) return { ready: false, state: refused };
      return (await load()).probe(signal);
    },
    readyz: async (signal) => (await load()).readyz(signal),
    listNodes: async () => (await load()).listNodes(),
    createBootstrapToken: async (token, expires) =>
      (await load()).createBootstrapToken(token, expires),
  };
};

/** Why a TCP connection to `host:port` fails (e.g. `connect ECONNREFUSED …`), or undefined. */
async function tcpRefused(
  host: string,
  port: number,
  signal?: AbortSignal,
  timeoutMs = 5_000,
): Promise<string | undefined> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs, signal });
    const done = (why: string | undefined): void => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`connect ETIMEDOUT ${host}:${port}`));
    socket.once('error', (err) => done(err.message));
  });
}

/** Why a request to the API failed, without the `Kubernetes API at <server> unreachable:` prefix. */
export function apiErrorReason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/^Kubernetes API at \S+ unreachable: /, '');
}

function describe(r: { status: number; body: string }): string {
  const first = r.body.trim().split('\n').find(Boolean)?.slice(0, 200);
  return `HTTP ${r.status}${first ? ` (${first})` : ''}`;
}
