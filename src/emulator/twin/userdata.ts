/**
 * What a machine would do with its userdata, read the way cloud-init and kubeadm read it: a
 * `#cloud-config` document whose `write_files` hold the PKI under `/etc/kubernetes/pki/` and a
 * kubeadm configuration (`InitConfiguration` + `ClusterConfiguration` on the first controller,
 * `JoinConfiguration` on every other machine). Anything else (a shell script, cloud-config
 * without kubeadm, unparsable YAML) is "not a Kubernetes machine" and the twin leaves it alone.
 */
import { gunzipSync } from 'node:zlib';
import { parse, parseAllDocuments } from 'yaml';

/** What kubeadm does on the machine. */
export type MachineAction = 'init' | 'join-control-plane' | 'join-worker';

/** A taint as kubeadm's `nodeRegistration.taints` lists it. */
export interface TaintSpec {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** An entry of `InitConfiguration.bootstrapTokens`. */
export interface BootstrapTokenSpec {
  token: string;
  /** Go duration (`4h0m0s`); kubeadm's default is 24 h. */
  ttl?: string;
  description?: string;
  usages?: string[];
  groups?: string[];
}

/** The cluster-wide settings of `ClusterConfiguration` the twin uses. */
export interface ClusterSpec {
  clusterName: string;
  kubernetesVersion: string;
  podSubnet?: string;
  serviceSubnet: string;
  dnsDomain: string;
  certSANs: string[];
  /** The document as written, stored in the `kubeadm-config` ConfigMap like kubeadm does. */
  document: Record<string, unknown>;
}

/** A Kubernetes machine as its userdata describes it. */
export interface MachineSpec {
  action: MachineAction;
  /** `nodeRegistration.name` (else the cloud-config hostname). */
  nodeName: string | undefined;
  /** Labels the kubelet registers with (`--node-labels`). */
  labels: Record<string, string>;
  taints: TaintSpec[];
  /** Whether the kubelet runs with `cloud-provider: external` (then a CCM initialises the node). */
  externalCloudProvider: boolean;
  /**
   * Where the API is: `controlPlaneEndpoint` on the first controller, `discovery.bootstrapToken.
   * apiServerEndpoint` on the others. `host` is an IP address or a name; `port` defaults to 6443.
   */
  endpoint: { host: string; port: number };
  /** First controller: the tokens `kubeadm init` creates. */
  bootstrapTokens: BootstrapTokenSpec[];
  /** First controller: the cluster configuration. */
  cluster?: ClusterSpec;
  /** Joining machines: token discovery. */
  discovery?: {
    token: string;
    caCertHashes: string[];
    unsafeSkipCAVerification: boolean;
    /** The token used for the TLS bootstrap (`discovery.tlsBootstrapToken`, else `token`). */
    tlsBootstrapToken: string;
    /** How long kubeadm keeps retrying discovery (Go duration; kubeadm's default 5m0s). */
    timeout?: string;
  };
  /** Files written under the certificates directory, by name relative to it (`ca.crt`, `etcd/ca.key`). */
  pki: Record<string, string>;
}

/** Why userdata is not a Kubernetes machine the twin can be, or how it is broken. */
export class MachineSpecError extends Error {
  override name = 'MachineSpecError';
}

const KUBEADM_GROUP = 'kubeadm.k8s.io/';
const DEFAULT_PKI_DIR = '/etc/kubernetes/pki';
const CONTROL_PLANE_TAINT: TaintSpec = {
  key: 'node-role.kubernetes.io/control-plane',
  effect: 'NoSchedule',
};

type Doc = Record<string, unknown>;

function isObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Decodes a `write_files` entry's content (`encoding`: b64, gzip, gz+b64, …). */
function fileContent(entry: Doc): string {
  const content = typeof entry.content === 'string' ? entry.content : '';
  const encoding = String(entry.encoding ?? '')
    .toLowerCase()
    .trim();
  if (encoding === '' || encoding === 'text/plain') return content;
  const b64 = ['b64', 'base64'];
  const gz = ['gz', 'gzip'];
  const both = ['gz+base64', 'gzip+base64', 'gz+b64', 'gzip+b64'];
  if (b64.includes(encoding)) return Buffer.from(content, 'base64').toString('utf8');
  if (gz.includes(encoding)) return gunzipSync(Buffer.from(content, 'binary')).toString('utf8');
  if (both.includes(encoding)) {
    return gunzipSync(Buffer.from(content, 'base64')).toString('utf8');
  }
  throw new MachineSpecError(
    `write_files entry ${String(entry.path)}: unknown encoding ${encoding}`,
  );
}

/** The kubeadm documents in a file's text, or undefined when it holds none. */
function kubeadmDocuments(text: string): Doc[] | undefined {
  if (!text.includes(KUBEADM_GROUP)) return undefined;
  let docs: Doc[];
  try {
    docs = parseAllDocuments(text, { version: '1.1' })
      .map((d) => d.toJS() as unknown)
      .filter(isObject);
  } catch {
    return undefined;
  }
  return docs.some((d) => str(d.apiVersion)?.startsWith(KUBEADM_GROUP)) ? docs : undefined;
}

/** `host:port` → parts (port 6443 when absent). */
export function splitEndpoint(value: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(value.trim());
  if (!m?.[1]) throw new MachineSpecError(`"${value}" is not a host:port endpoint`);
  return { host: m[1], port: m[2] ? Number(m[2]) : 6443 };
}

/** kubelet flags from `kubeletExtraArgs`: v1beta4's list of `{name, value}` or v1beta3's map. */
function kubeletArgs(reg: Doc): Record<string, string> {
  const raw = reg.kubeletExtraArgs;
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const a of raw) {
      if (isObject(a) && typeof a.name === 'string') out[a.name] = String(a.value ?? '');
    }
  } else if (isObject(raw)) {
    for (const [k, v] of Object.entries(raw)) out[k] = String(v ?? '');
  }
  return out;
}

/** `a=b,c=d` → labels. */
function parseLabels(arg: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of (arg ?? '').split(',')) {
    const p = part.trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq < 0) labels[p] = '';
    else labels[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return labels;
}

function parseTaints(raw: unknown, action: MachineAction): TaintSpec[] {
  // kubeadm: no `taints` key on a controller means the control-plane taint; `[]` means none.
  if (raw === undefined || raw === null) {
    return action === 'join-worker' ? [] : [CONTROL_PLANE_TAINT];
  }
  if (!Array.isArray(raw)) throw new MachineSpecError('nodeRegistration.taints is not a list');
  return raw.filter(isObject).map((t) => {
    const effect = str(t.effect);
    if (
      !str(t.key) ||
      !effect ||
      !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)
    ) {
      throw new MachineSpecError(`nodeRegistration.taints has an invalid taint`);
    }
    const value = str(t.value);
    return {
      key: t.key as string,
      ...(value ? { value } : {}),
      effect: effect as TaintSpec['effect'],
    };
  });
}

/**
 * Reads a device's userdata. Returns undefined when it is not kubeadm cloud-config (the machine
 * is not a Kubernetes node); throws {@link MachineSpecError} when it is, but is unusable.
 */
export function parseMachineUserdata(userdata: string): MachineSpec | undefined {
  if (!userdata.startsWith('#cloud-config')) return undefined;
  let config: unknown;
  try {
    config = parse(userdata, { version: '1.1' });
  } catch {
    return undefined;
  }
  if (!isObject(config) || !Array.isArray(config.write_files)) return undefined;
  const files = config.write_files.filter(isObject);

  let docs: Doc[] | undefined;
  for (const f of files) {
    docs = kubeadmDocuments(fileContent(f));
    if (docs) break;
  }
  if (!docs) return undefined;

  const byKind = (kind: string) =>
    docs!.find((d) => d.kind === kind && str(d.apiVersion)?.startsWith(KUBEADM_GROUP));
  const init = byKind('InitConfiguration');
  const clusterDoc = byKind('ClusterConfiguration');
  const join = byKind('JoinConfiguration');
  if (!init && !join) return undefined;

  const action: MachineAction = init
    ? 'init'
    : isObject(join!.controlPlane)
      ? 'join-control-plane'
      : 'join-worker';
  const reg = isObject((init ?? join)!.nodeRegistration)
    ? ((init ?? join)!.nodeRegistration as Doc)
    : {};
  const args = kubeletArgs(reg);

  const pkiDir = (str(clusterDoc?.certificatesDir) ?? DEFAULT_PKI_DIR).replace(/\/+$/, '');
  const pki: Record<string, string> = {};
  for (const f of files) {
    const path = str(f.path);
    if (path?.startsWith(`${pkiDir}/`)) pki[path.slice(pkiDir.length + 1)] = fileContent(f);
  }

  const spec: MachineSpec = {
    action,
    nodeName: str(reg.name) ?? str(config.hostname),
    labels: parseLabels(args['node-labels']),
    taints: parseTaints(reg.taints, action),
    externalCloudProvider: args['cloud-provider'] === 'external',
    endpoint: { host: '', port: 6443 },
    bootstrapTokens: [],
    pki,
  };

  if (init) {
    if (!clusterDoc) {
      throw new MachineSpecError('InitConfiguration without a ClusterConfiguration');
    }
    const endpoint = str(clusterDoc.controlPlaneEndpoint);
    if (!endpoint) {
      throw new MachineSpecError('ClusterConfiguration has no controlPlaneEndpoint');
    }
    spec.endpoint = splitEndpoint(endpoint);
    const net = isObject(clusterDoc.networking) ? clusterDoc.networking : {};
    const apiServer = isObject(clusterDoc.apiServer) ? clusterDoc.apiServer : {};
    spec.cluster = {
      clusterName: str(clusterDoc.clusterName) ?? 'kubernetes',
      kubernetesVersion: str(clusterDoc.kubernetesVersion) ?? '',
      ...(str(net.podSubnet) ? { podSubnet: str(net.podSubnet)! } : {}),
      serviceSubnet: str(net.serviceSubnet) ?? '10.96.0.0/12',
      dnsDomain: str(net.dnsDomain) ?? 'cluster.local',
      certSANs: Array.isArray(apiServer.certSANs) ? apiServer.certSANs.map(String) : [],
      document: clusterDoc,
    };
    const tokens = Array.isArray(init.bootstrapTokens) ? init.bootstrapTokens : [];
    spec.bootstrapTokens = tokens.filter(isObject).flatMap((t) => {
      const token = str(t.token);
      if (!token) return [];
      return [
        {
          token,
          ...(str(t.ttl) ? { ttl: str(t.ttl)! } : {}),
          ...(str(t.description) ? { description: str(t.description)! } : {}),
          ...(Array.isArray(t.usages) ? { usages: t.usages.map(String) } : {}),
          ...(Array.isArray(t.groups) ? { groups: t.groups.map(String) } : {}),
        },
      ];
    });
  } else {
    const discovery = isObject(join!.discovery) ? join!.discovery : {};
    const bt = isObject(discovery.bootstrapToken) ? discovery.bootstrapToken : undefined;
    const token = str(bt?.token);
    const apiServerEndpoint = str(bt?.apiServerEndpoint);
    if (!bt || !token || !apiServerEndpoint) {
      throw new MachineSpecError(
        'JoinConfiguration without discovery.bootstrapToken {token, apiServerEndpoint} ' +
          '(file discovery is not emulated)',
      );
    }
    spec.endpoint = splitEndpoint(apiServerEndpoint);
    spec.discovery = {
      token,
      caCertHashes: Array.isArray(bt.caCertHashes) ? bt.caCertHashes.map(String) : [],
      unsafeSkipCAVerification: bt.unsafeSkipCAVerification === true,
      tlsBootstrapToken: str(discovery.tlsBootstrapToken) ?? token,
    };
    // v1beta4: timeouts.discovery; v1beta3: discovery.timeout.
    const timeouts = isObject(join!.timeouts) ? join!.timeouts : {};
    const timeout = str(timeouts.discovery) ?? str(discovery.timeout);
    if (timeout) spec.discovery.timeout = timeout;
  }
  return spec;
}
