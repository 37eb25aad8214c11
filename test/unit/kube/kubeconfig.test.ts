import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  KubeClient,
  KubeconfigError,
  kubeconfigFromSpec,
  loadKubeconfig,
  renderKubeconfig,
  writeKubeconfig,
  type KubeconfigSpec,
} from '../../../src/kube/index.js';

// Not a real certificate: kubeconfigs carry PEM text, nothing here parses it.
const PEM = (what: string) =>
  `-----BEGIN ${what}-----\nMIIBfake${what.length}\n-----END ${what}-----\n`;
const spec: KubeconfigSpec = {
  server: 'https://127.0.0.1:6443',
  caPem: PEM('CERTIFICATE'),
  clusterName: 'quickstart',
  user: { clientCertificatePem: PEM('CERTIFICATE'), clientKeyPem: PEM('EC PRIVATE KEY') },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loko-kubeconfig-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('kubeconfig', () => {
  it('renders one cluster, user and context that verify the CA', () => {
    const text = renderKubeconfig(spec);
    expect(text).not.toMatch(/insecure-skip-tls-verify/);
    expect(text).toContain(
      `certificate-authority-data: "${Buffer.from(spec.caPem).toString('base64')}"`,
    );
    const kc = kubeconfigFromSpec(spec);
    expect(kc.getCurrentContext()).toBe('quickstart-admin@quickstart');
    expect(kc.getCurrentCluster()).toMatchObject({
      name: 'quickstart',
      server: 'https://127.0.0.1:6443',
      caData: Buffer.from(spec.caPem).toString('base64'),
      skipTLSVerify: false,
    });
    expect(kc.getCurrentUser()?.certData).toBe(Buffer.from(PEM('CERTIFICATE')).toString('base64'));
    expect(new KubeClient(kc).server).toBe('https://127.0.0.1:6443');
  });

  it('renders a token user and a namespace', () => {
    const kc = kubeconfigFromSpec({
      ...spec,
      user: { token: 'abc.def' },
      namespace: 'kube-system',
    });
    expect(kc.getCurrentUser()?.token).toBe('abc.def');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('kube-system');
  });

  it('refuses a plain-http server or a CA that is not PEM', () => {
    expect(() => renderKubeconfig({ ...spec, server: 'http://127.0.0.1:8080' })).toThrow(
      KubeconfigError,
    );
    expect(() => renderKubeconfig({ ...spec, caPem: 'nope' })).toThrow(
      /caPem is not a PEM certificate/,
    );
  });

  it('writes 0600 (also over an existing looser file) and loads it back', async () => {
    const path = join(dir, 'auth', 'kubeconfig');
    await writeKubeconfig(path, spec);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'auth'))).mode & 0o777).toBe(0o700);
    await writeFile(path, 'old', { mode: 0o644 });
    await writeKubeconfig(path, spec);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, 'utf8')).toBe(renderKubeconfig(spec));
    expect(loadKubeconfig(path).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('names the file and the problem when loading fails', async () => {
    expect(() => loadKubeconfig(join(dir, 'missing'))).toThrow(
      `kubeconfig ${join(dir, 'missing')}: no such file`,
    );
    const path = join(dir, 'kc');
    await writeKubeconfig(path, spec);
    expect(() => loadKubeconfig(path, { context: 'other' })).toThrow(/has no context "other"/);
    const insecure = (await readFile(path, 'utf8')).replace(
      /certificate-authority-data: .*/,
      'insecure-skip-tls-verify: true',
    );
    await writeFile(path, insecure);
    expect(() => loadKubeconfig(path)).toThrow(
      /sets insecure-skip-tls-verify; loko verifies the API server's CA/,
    );
    expect(loadKubeconfig(path, { allowInsecure: true }).getCurrentCluster()?.skipTLSVerify).toBe(
      true,
    );
  });
});
