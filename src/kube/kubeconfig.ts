/**
 * Kubeconfig files: render loko's own (one cluster, one user, one context; the CA is always
 * verified), write them 0600, and load any kubeconfig into a `KubeConfig` of
 * `@kubernetes/client-node`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KubeconfigError } from './errors.js';

/** Credentials of the kubeconfig user: a client certificate or a bearer token. */
export type KubeconfigUser =
  { clientCertificatePem: string; clientKeyPem: string } | { token: string };

/** What loko writes into a kubeconfig. */
export interface KubeconfigSpec {
  /** API server URL, e.g. `https://203.0.113.10:6443`. */
  server: string;
  /** PEM of the CA that signed the API server's certificate (always verified). */
  caPem: string;
  user: KubeconfigUser;
  /** Cluster entry name (default `loko`). */
  clusterName?: string;
  /** User entry name (default `<clusterName>-admin`). */
  userName?: string;
  /** Context name (default `<userName>@<clusterName>`). */
  contextName?: string;
  /** Default namespace of the context. */
  namespace?: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
// JSON strings are valid YAML double-quoted scalars: no escaping rules of our own.
const q = (s: string) => JSON.stringify(s);

/** Names of the cluster, user and context entries `renderKubeconfig` uses for `spec`. */
export function kubeconfigNames(spec: KubeconfigSpec): {
  cluster: string;
  user: string;
  context: string;
} {
  const cluster = spec.clusterName ?? 'loko';
  const user = spec.userName ?? `${cluster}-admin`;
  return { cluster, user, context: spec.contextName ?? `${user}@${cluster}` };
}

/** Renders a kubeconfig (YAML) for `spec`. It never contains `insecure-skip-tls-verify`. */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  if (!/^https:\/\//.test(spec.server)) {
    throw new KubeconfigError(`server must be an https:// URL, got ${q(spec.server)}`);
  }
  if (!spec.caPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new KubeconfigError('caPem is not a PEM certificate');
  }
  const names = kubeconfigNames(spec);
  const user =
    'token' in spec.user
      ? [`    token: ${q(spec.user.token)}`]
      : [
          `    client-certificate-data: ${q(b64(spec.user.clientCertificatePem))}`,
          `    client-key-data: ${q(b64(spec.user.clientKeyPem))}`,
        ];
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${q(names.cluster)}`,
    '  cluster:',
    `    server: ${q(spec.server)}`,
    `    certificate-authority-data: ${q(b64(spec.caPem))}`,
    'users:',
    `- name: ${q(names.user)}`,
    '  user:',
    ...user,
    'contexts:',
    `- name: ${q(names.context)}`,
    '  context:',
    `    cluster: ${q(names.cluster)}`,
    `    user: ${q(names.user)}`,
    ...(spec.namespace ? [`    namespace: ${q(spec.namespace)}`] : []),
    `current-context: ${q(names.context)}`,
    'preferences: {}',
    '',
  ].join('\n');
}

/**
 * Writes a kubeconfig atomically with mode 0600 (its directory is created 0700 when missing).
 * `content` is a spec (rendered with `renderKubeconfig`) or kubeconfig text.
 */
export async function writeKubeconfig(
  path: string,
  content: KubeconfigSpec | string,
): Promise<void> {
  const text = typeof content === 'string' ? content : renderKubeconfig(content);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await chmod(tmp, 0o600); // the umask or an existing file may have changed the mode
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw new KubeconfigError(`cannot write: ${(err as Error).message}`, path, err);
  }
}

/** Options of `loadKubeconfig`. */
export interface LoadKubeconfigOptions {
  /** Context to use instead of the file's `current-context`. */
  context?: string;
  /**
   * Accept a cluster entry with `insecure-skip-tls-verify: true`. Off by default: loko talks to
   * clusters whose CA it knows.
   */
  allowInsecure?: boolean;
}

/** Checks that `kc` has a usable current context (and no TLS skip unless allowed). */
function check(kc: KubeConfig, path: string | undefined, opts: LoadKubeconfigOptions): KubeConfig {
  if (opts.context) {
    if (!kc.getContextObject(opts.context)) {
      throw new KubeconfigError(`has no context ${q(opts.context)}`, path);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentContext() || !kc.getContextObject(kc.getCurrentContext())) {
    throw new KubeconfigError('has no current context', path);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeconfigError('the current context names no known cluster', path);
  if (cluster.skipTLSVerify && !opts.allowInsecure) {
    throw new KubeconfigError(
      `cluster ${q(cluster.name)} sets insecure-skip-tls-verify; loko verifies the API server's CA`,
      path,
    );
  }
  return kc;
}

/** Loads a kubeconfig file. Throws `KubeconfigError` when it is missing, invalid or unusable. */
export function loadKubeconfig(path: string, opts: LoadKubeconfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new KubeconfigError(
      e.code === 'ENOENT' ? 'no such file' : `cannot load: ${e.message}`,
      path,
      err,
    );
  }
  return check(kc, path, opts);
}

/** Builds a `KubeConfig` from kubeconfig text (e.g. one held in memory). */
export function kubeconfigFromString(text: string, opts: LoadKubeconfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    throw new KubeconfigError(`cannot parse: ${(err as Error).message}`, undefined, err);
  }
  return check(kc, undefined, opts);
}

/** Builds a `KubeConfig` from a spec without touching the disk. */
export function kubeconfigFromSpec(spec: KubeconfigSpec): KubeConfig {
  return kubeconfigFromString(renderKubeconfig(spec));
}
