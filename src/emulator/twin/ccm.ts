/**
 * What the twin's CCM gate checks before it lets a running Equinix Metal CCM pod initialise
 * nodes: that the pod's configuration would work against this emulator.
 *
 * CPEM v3.8.1 reads its config from the JSON file named by `--cloud-config` (the upstream
 * manifest mounts Secret `kube-system/metal-cloud-config` at `/etc/cloud-sa` and passes
 * `--cloud-config=/etc/cloud-sa/cloud-sa.json`), keys matched case-insensitively (Go
 * encoding/json), with `METAL_API_KEY` / `METAL_PROJECT_ID` environment variables taking
 * precedence when set and non-empty; without an API key or project id it fails at start-up with
 * `environment variable "…" is required if not in config file`
 * (../shared/reference/cpem.md §1.1–1.3). The twin resolves the same file from the pod spec (the
 * mount, the Secret volume and its items) and env (`value` or `secretKeyRef`), reads the Secret
 * from the cluster, and asks the emulator whether the key may use the project.
 */
import type { KubeApi } from './kube-api.js';
import type { PodView } from './nodes.js';

/** Whether the emulator accepts an API key for a project (the key never appears in a reason). */
export type CredentialCheck = { ok: true } | { ok: false; reason: string };

/** The CCM's Metal credentials as the twin resolved them, or why they cannot be. */
export type CcmCredentials =
  { ok: true; apiKey: string; projectId: string; from: string } | { ok: false; reason: string };

type Container = NonNullable<NonNullable<PodView['spec']>['containers']>[number];

/** True for the container that runs CPEM (its `--cloud-provider=equinixmetal` or its image). */
export function isCcmContainer(c: Container): boolean {
  return (
    (c.image ?? '').includes('cloud-provider-equinix-metal') ||
    [...(c.command ?? []), ...(c.args ?? [])].some((a) =>
      /^--cloud-provider[= ]equinixmetal$/.test(a),
    )
  );
}

/** The value of `--cloud-config` (`--cloud-config=x` or `--cloud-config x`). */
export function cloudConfigPath(c: Container): string | undefined {
  const argv = [...(c.command ?? []), ...(c.args ?? [])];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--cloud-config=')) return a.slice('--cloud-config='.length);
    if (a === '--cloud-config') return argv[i + 1];
  }
  return undefined;
}

/** Where a file in the container comes from: a key of a Secret, or why the twin cannot tell. */
export function secretKeyForFile(
  pod: PodView,
  c: Container,
  file: string,
): { secret: string; key: string } | { error: string } {
  const mounts = (c.volumeMounts ?? [])
    .filter((m) => file === m.mountPath || file.startsWith(m.mountPath.replace(/\/+$/, '') + '/'))
    .sort((a, b) => b.mountPath.length - a.mountPath.length);
  const mount = mounts[0];
  if (!mount) return { error: `no volume is mounted at ${file}` };
  const rel = mount.subPath ?? file.slice(mount.mountPath.replace(/\/+$/, '').length + 1);
  const volume = (pod.spec?.volumes ?? []).find((v) => v.name === mount.name);
  const secret = volume?.secret;
  if (!secret?.secretName) {
    return { error: `volume ${mount.name} mounted at ${mount.mountPath} is not a Secret volume` };
  }
  if (secret.items && secret.items.length > 0) {
    const item = secret.items.find((it) => it.path === rel);
    if (!item) return { error: `Secret volume ${mount.name} does not project ${rel}` };
    return { secret: secret.secretName, key: item.key };
  }
  return { secret: secret.secretName, key: rel };
}

interface SecretView {
  data?: Record<string, string>;
}

/** Go encoding/json's case-insensitive match of a string field. */
function field(obj: Record<string, unknown>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) {
    if (k.toLowerCase() === lower && typeof v === 'string') return v;
  }
  return undefined;
}

/**
 * The API key and project id the CCM container of `pod` would run with, read from the cluster
 * through `api` (the twin's admin client). The reasons name the Secret and key, never the values.
 */
export async function ccmCredentials(api: KubeApi, pod: PodView): Promise<CcmCredentials> {
  const ns = pod.metadata?.namespace ?? 'default';
  const c = (pod.spec?.containers ?? []).find(isCcmContainer);
  if (!c) return { ok: false, reason: 'the pod has no Equinix Metal CCM container' };
  const secrets = new Map<string, SecretView | undefined>();
  const readSecret = async (name: string): Promise<SecretView | undefined> => {
    if (!secrets.has(name)) {
      secrets.set(
        name,
        await api.get<SecretView>(
          `/api/v1/namespaces/${encodeURIComponent(ns)}/secrets/${encodeURIComponent(name)}`,
        ),
      );
    }
    return secrets.get(name);
  };
  const secretValue = async (name: string, key: string): Promise<string | { error: string }> => {
    const s = await readSecret(name);
    if (!s) return { error: `Secret ${ns}/${name} does not exist` };
    const b64 = s.data?.[key];
    if (b64 === undefined) return { error: `Secret ${ns}/${name} has no key ${key}` };
    return Buffer.from(b64, 'base64').toString('utf8');
  };

  let apiKey: string | undefined;
  let projectId: string | undefined;
  const from: string[] = [];
  const file = cloudConfigPath(c);
  if (file) {
    const where = secretKeyForFile(pod, c, file);
    if ('error' in where) {
      return { ok: false, reason: `--cloud-config=${file}: ${where.error}` };
    }
    const text = await secretValue(where.secret, where.key);
    if (typeof text !== 'string') return { ok: false, reason: text.error };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        ok: false,
        reason: `${where.key} of Secret ${ns}/${where.secret} is not JSON (--cloud-config=${file})`,
      };
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      return {
        ok: false,
        reason: `${where.key} of Secret ${ns}/${where.secret} is not a JSON object`,
      };
    }
    apiKey = field(json as Record<string, unknown>, 'apiKey');
    projectId = field(json as Record<string, unknown>, 'projectID');
    from.push(`Secret ${ns}/${where.secret} key ${where.key}`);
  }
  // Env wins over the file when set and non-empty.
  for (const e of c.env ?? []) {
    if (e.name !== 'METAL_API_KEY' && e.name !== 'METAL_PROJECT_ID') continue;
    let value: string | undefined = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref?.name && ref.key) {
      const v = await secretValue(ref.name, ref.key);
      if (typeof v !== 'string') {
        if (ref.optional) continue;
        return { ok: false, reason: `env ${e.name}: ${v.error}` };
      }
      value = v;
    }
    if (!value) continue;
    if (e.name === 'METAL_API_KEY') apiKey = value;
    else projectId = value;
    from.push(`env ${e.name}`);
  }
  if (!apiKey) {
    return {
      ok: false,
      reason: 'environment variable "METAL_API_KEY" is required if not in config file',
    };
  }
  if (!projectId) {
    return {
      ok: false,
      reason: 'environment variable "METAL_PROJECT_ID" is required if not in config file',
    };
  }
  return { ok: true, apiKey: apiKey.trim(), projectId: projectId.trim(), from: from.join(', ') };
}
