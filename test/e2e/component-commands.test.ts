/**
 * `loko component ...` as a user runs it: list (with and without a configuration), render of an
 * unknown name, a bad component block naming file:line:col, Secret redaction in render, a real
 * component rendered from pinned upstream bytes in a manifest_dir, and the refusals of apply and
 * delete that need no cluster.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metallb } from '../../src/components/metallb/index.js';
import { describeUpstream, writeManifestDir } from '../harness/upstream/index.js';
import { baseEnv, loko, requireBuild } from './helpers.js';

let tmp: string;
/** A fresh directory holding `files`; HOME points into the run's temp dir. */
async function dirWith(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmp, 'cfg-'));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}
const env = () =>
  baseEnv({ HOME: path.join(tmp, 'home'), XDG_CACHE_HOME: path.join(tmp, 'cache') });

beforeAll(async () => {
  requireBuild();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'loko-e2e-component-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const METALLB_BLOCK =
  'component "metallb" {\n  address_pools = {\n    default = ["203.0.113.16/28"]\n  }\n}\n';

describe('loko component list', () => {
  it('lists every component without a configuration', async () => {
    const cwd = await dirWith({});
    const r = await loko(['component', 'list'], { cwd, env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+NAMESPACE\s+BOOTSTRAP\s+CONFIGURED\s+DESCRIPTION$/);
    expect(lines[1]).toMatch(/^cloud-provider-equinix-metal\s+kube-system\s+yes\s+no\s+/);
    expect(lines[2]).toMatch(/^flannel\s+kube-flannel\s+yes\s+no\s+/);
    expect(lines[3]).toMatch(/^metallb\s+metallb-system\s+no\s+no\s+/);
  });

  it('-o json says which components the configuration has blocks for', async () => {
    const cwd = await dirWith({ 'c.lokocfg': METALLB_BLOCK });
    const r = await loko(['component', 'list', '-o', 'json'], { cwd, env: env() });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      components: { name: string; bootstrap: boolean; configured: boolean; namespace: string }[];
    };
    expect(doc.components.map((c) => [c.name, c.bootstrap, c.configured])).toEqual([
      ['cloud-provider-equinix-metal', true, false],
      ['flannel', true, false],
      ['metallb', false, true],
    ]);
  });

  it('a bad attribute in a component block fails naming file:line:col and the fix', async () => {
    const cwd = await dirWith({
      'c.lokocfg':
        'component "metallb" {\n  address_pools = {\n    default = ["203.0.113.16/28"]\n  }\n  speaker_tolerations = []\n}\n',
    });
    const r = await loko(['component', 'list'], { cwd, env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('c.lokocfg:5:3: error: Unsupported attribute "speaker_tolerations"');
    expect(r.stderr).toContain('Did you mean "speaker_toleration"?');
    expect(r.stderr).toContain('error: the configuration has 1 error');

    const json = await loko(['component', 'list', '-o', 'json'], { cwd, env: env() });
    const doc = JSON.parse(json.stdout) as {
      error: { diagnostics: { file: string; line: number; column: number }[] };
    };
    expect(doc.error.diagnostics.map((d) => [path.basename(d.file), d.line, d.column])).toEqual([
      ['c.lokocfg', 5, 3],
    ]);
  });

  it('an unknown component block names its label and the valid components', async () => {
    const cwd = await dirWith({ 'c.lokocfg': 'component "metal-lb" {}\n' });
    const r = await loko(['component', 'list'], { cwd, env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('c.lokocfg:1:11: error: Unknown component "metal-lb"');
    expect(r.stderr).toContain(
      'Did you mean "metallb"? Valid components: cloud-provider-equinix-metal, flannel, metallb',
    );
  });
});

describe('loko component render', () => {
  it('an unknown name exits 1 with a did-you-mean and the valid names, printing nothing', async () => {
    const cwd = await dirWith({});
    const r = await loko(['component', 'render', 'metalb'], { cwd, env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: unknown component "metalb"');
    expect(r.stderr).toContain(
      'Did you mean "metallb"? Valid components: "cloud-provider-equinix-metal", "flannel" and "metallb".',
    );
  });

  it('redacts Secret values unless --show-secrets', async () => {
    const cwd = await dirWith({});
    const r = await loko(['component', 'render', 'cloud-provider-equinix-metal'], {
      cwd,
      env: env(),
    });
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Record<string, unknown>);
    const secret = docs.find((d) => d.kind === 'Secret') as { data: Record<string, string> };
    expect(Object.values(secret.data)).toEqual(['<redacted>']);
    expect(r.stderr).toContain('pass --show-secrets');

    const shown = await loko(
      ['component', 'render', 'cloud-provider-equinix-metal', '--show-secrets'],
      { cwd, env: env() },
    );
    const shownSecret = parseAllDocuments(shown.stdout)
      .map((d) => d.toJS() as Record<string, unknown>)
      .find((d) => d.kind === 'Secret') as { data: Record<string, string> };
    const json = JSON.parse(
      Buffer.from(Object.values(shownSecret.data)[0]!, 'base64').toString('utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(json)).toContain('apiKey');
    // Everything but the Secret's values is the same document.
    const strip = (text: string) =>
      parseAllDocuments(text)
        .map((d) => d.toJS() as Record<string, unknown>)
        .filter((d) => d.kind !== 'Secret');
    expect(strip(shown.stdout)).toEqual(strip(r.stdout));
  });
});

describeUpstream('loko component render from a manifest_dir', metallb.upstream, () => {
  it('renders metallb from the pinned bytes, with the configured pool', async () => {
    const manifests = path.join(tmp, 'manifests');
    writeManifestDir(manifests, metallb.upstream);
    const cwd = await dirWith({
      'cluster.lokocfg': `cluster "equinixmetal" {
  cluster_name = "demo"
  project_id   = "8e1c7f0a-4b2d-4c3e-9f10-123456789abc"
  metro        = "sv"
  asset_dir    = "./assets"
  manifest_dir = "${manifests}"
  worker_pool "general" {
    count = 1
  }
}
${METALLB_BLOCK}`,
    });
    const r = await loko(['component', 'render', 'metallb', '-c', cwd], { cwd, env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('error');
    const docs = parseAllDocuments(r.stdout).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string }; spec?: unknown },
    );
    expect(docs.filter((d) => d.kind === 'CustomResourceDefinition').length).toBeGreaterThan(0);
    const pool = docs.find((d) => d.kind === 'IPAddressPool');
    expect(pool?.metadata.name).toBe('default');
    expect(JSON.stringify(pool?.spec)).toContain('203.0.113.16/28');
  });
});

describe('loko component apply / delete without a cluster', () => {
  it('apply without a cluster block or --kubeconfig says what to pass', async () => {
    const cwd = await dirWith({ 'c.lokocfg': METALLB_BLOCK });
    const r = await loko(['component', 'apply'], { cwd, env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'error: no cluster to talk to: no cluster block in the configuration',
    );
    expect(r.stderr).toContain('--kubeconfig <file>');
  });

  it('apply of an unknown name lists the valid ones before anything else', async () => {
    const cwd = await dirWith({});
    const r = await loko(['component', 'apply', 'flanel', '--kubeconfig', 'nowhere'], {
      cwd,
      env: env(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown component "flanel"');
    expect(r.stderr).toContain('Did you mean "flannel"?');
  });

  it('delete on a non-TTY without --yes refuses before touching the cluster', async () => {
    const cwd = await dirWith({
      kubeconfig: `apiVersion: v1
kind: Config
clusters:
  - name: c
    cluster:
      server: https://127.0.0.1:1
      certificate-authority-data: ${Buffer.from('not a real CA').toString('base64')}
users:
  - name: u
    user:
      token: t
contexts:
  - name: c
    context: { cluster: c, user: u }
current-context: c
`,
    });
    const r = await loko(['component', 'delete', 'metallb', '--kubeconfig', 'kubeconfig'], {
      cwd,
      env: env(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'refusing to delete metallb without confirmation: stdin is not a terminal',
    );
    expect(r.stderr).toContain('Pass --yes');
  });
});
