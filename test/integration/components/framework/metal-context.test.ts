/**
 * `loko component render` with a cluster configuration and a Metal API (the emulator over HTTP,
 * `--api-url` + METAL_AUTH_TOKEN): the CCM's cloud-sa.json carries the project API key described
 * `loko:cluster=<name>` (looked up, never created) and the control-plane endpoint from the
 * cluster's admin kubeconfig; without a key the render shows placeholders, and an unreachable API
 * is a warning for render.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../../src/cli.js';
import { startTestEmulator, type TestEmulator } from '../../../harness/emulator.js';
import { memoryStreams } from '../../../unit/tasks/streams.js';

const PROJECT = '7f3e9a52-1c44-4d7e-9b1a-2a6f0c8d9e10';

describe('component render: the cluster API key and endpoint from the Metal API', () => {
  let emu: TestEmulator;
  let dir: string;
  beforeAll(async () => {
    emu = await startTestEmulator({ projectId: PROJECT });
    dir = await mkdtemp(path.join(os.tmpdir(), 'loko-metal-context-'));
    await writeFile(
      path.join(dir, 'cluster.lokocfg'),
      `cluster "equinixmetal" {
  cluster_name = "ctxdemo"
  project_id   = "${PROJECT}"
  metro        = "sv"
  asset_dir    = "./assets"
  worker_pool "general" {
    count = 1
  }
}
`,
    );
  });
  afterAll(async () => {
    await emu?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const render = async (env: Record<string, string>) => {
    const streams = memoryStreams({
      env: { HOME: path.join(dir, 'home'), NO_COLOR: '1', ...env },
    });
    const code = await main(
      ['node', 'loko', 'component', 'render', 'cloud-provider-equinix-metal', '--show-secrets'],
      { streams, cwd: dir, exit: () => {} },
    );
    const secret = parseAllDocuments(streams.out())
      .map((d) => d.toJS() as { kind: string; data?: Record<string, string> })
      .find((d) => d.kind === 'Secret');
    const cloud = secret?.data?.['cloud-sa.json']
      ? (JSON.parse(Buffer.from(secret.data['cloud-sa.json'], 'base64').toString('utf8')) as Record<
          string,
          unknown
        >)
      : undefined;
    return { code, stderr: streams.err(), cloud };
  };
  const api = () => ({ METAL_API_URL: emu.url, METAL_AUTH_TOKEN: emu.token });

  it('without a key for the cluster: placeholders, and nothing is created', async () => {
    const r = await render(api());
    expect(r.code, r.stderr).toBe(0);
    // No admin kubeconfig yet: no endpoint, so no eipTag (CPEM then leaves the control plane alone).
    expect(r.cloud!.eipTag).toBeUndefined();
    expect(r.cloud!.apiKey).not.toMatch(/^[A-Za-z0-9]{20,}$/);
    const keys = await emu.api<{ api_keys?: unknown[] }>('GET', `/projects/${PROJECT}/api-keys`);
    expect(keys.body.api_keys ?? []).toEqual([]);
  });

  it('with the key loko created and the admin kubeconfig: the real key, the endpoint and its tag', async () => {
    const created = await emu.api<{ token: string }>('POST', `/projects/${PROJECT}/api-keys`, {
      description: 'loko:cluster=ctxdemo',
      read_only: false,
    });
    expect(created.status).toBe(201);
    await mkdir(path.join(dir, 'assets', 'auth'), { recursive: true });
    await writeFile(
      path.join(dir, 'assets', 'auth', 'kubeconfig'),
      'apiVersion: v1\nkind: Config\nclusters:\n  - name: ctxdemo\n    cluster:\n      server: https://127.0.0.9:6443\n',
    );
    const r = await render(api());
    expect(r.code, r.stderr).toBe(0);
    expect(r.cloud!.apiKey).toBe(created.body.token);
    expect(r.cloud!.projectID).toBe(PROJECT);
    // The endpoint (found through the admin kubeconfig) gives CPEM the EIP's tag and port.
    expect(r.cloud!.eipTag).toBe('loko:control-plane-endpoint=ctxdemo');
    expect(r.cloud!.apiServerPort).toBe(6443);
    expect(r.stderr).not.toContain(created.body.token);
  });

  it('an unreachable Metal API is a warning for render, which shows placeholders', async () => {
    const r = await render({ METAL_API_URL: 'http://127.0.0.1:1/metal/v1', METAL_AUTH_TOKEN: 'x' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("warning: cannot read the cluster's API key from the Metal API");
    expect(r.cloud!.apiKey).not.toMatch(/^[A-Za-z0-9]{20,}$/);
  });
});
