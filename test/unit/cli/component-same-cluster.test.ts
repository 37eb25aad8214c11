/**
 * `component apply --kubeconfig` next to a cluster configuration: the cluster block's identity
 * (Metal API key, Elastic IP tag) may only go to that very cluster's API server.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSameCluster } from '../../../src/commands/component/session.js';
import type { ClusterConfig } from '../../../src/config/types.js';
import { LokoError } from '../../../src/util/errors.js';

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server}
contexts:
- name: c
  context: { cluster: c, user: u }
current-context: c
users:
- name: u
  user: { token: t }
`;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function setup(own: string | undefined, target: string) {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loko-same-cluster-'));
  const assetDir = path.join(dir, 'assets');
  if (own) {
    await mkdir(path.join(assetDir, 'auth'), { recursive: true });
    await writeFile(path.join(assetDir, 'auth', 'kubeconfig'), kubeconfig(own));
  }
  const file = path.join(dir, 'other');
  await writeFile(file, kubeconfig(target));
  return { file, cluster: { clusterName: 'demo', assetDir } as ClusterConfig };
}

describe('assertSameCluster', () => {
  it('passes for the cluster own API server', async () => {
    const { file, cluster } = await setup('https://127.0.0.1:6443', 'https://127.0.0.1:6443');
    await expect(assertSameCluster(file, cluster)).resolves.toBeUndefined();
  });

  it('refuses another API server, naming both and the way out', async () => {
    const { file, cluster } = await setup('https://127.0.0.1:6443', 'https://127.0.0.2:6443');
    const err = await assertSameCluster(file, cluster).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain('https://127.0.0.2:6443');
    expect((err as LokoError).message).toContain('https://127.0.0.1:6443');
    expect((err as LokoError).hint).toContain('drop --kubeconfig');
  });

  it('refuses when the cluster has no admin kubeconfig yet', async () => {
    const { file, cluster } = await setup(undefined, 'https://127.0.0.2:6443');
    const err = await assertSameCluster(file, cluster).catch((e: unknown) => e);
    expect((err as LokoError).message).toContain('no admin kubeconfig yet');
  });
});
