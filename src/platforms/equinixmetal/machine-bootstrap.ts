/**
 * What new machines boot with: the cluster's {@link ClusterBootstrap} (endpoint, PKI, token) and
 * the bootstrap token itself. Tokens are short-lived (docs/bootstrap.md): controller 0's userdata
 * carries a fresh one that `kubeadm init` creates; machines created later get one minted through
 * the Kubernetes API. The first token is also kept in `<asset_dir>/auth/bootstrap-token.json`
 * (0600) until it expires, so a run interrupted before the API is up can resume creating machines
 * without waiting for controller 0 to finish `kubeadm init`.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClusterConfig } from '../../config/types.js';
import { BootstrapToken, type ClusterPki } from '../../pki/index.js';
import { clusterBootstrap, type ClusterBootstrap } from './userdata/index.js';

/** `<asset_dir>/auth`: the admin kubeconfig and the saved bootstrap token (0700). */
export function authDir(assetDir: string): string {
  return path.join(assetDir, 'auth');
}

/** `<asset_dir>/auth/kubeconfig`. */
export function kubeconfigPath(assetDir: string): string {
  return path.join(authDir(assetDir), 'kubeconfig');
}

/** `<asset_dir>/auth/bootstrap-token.json`. */
export function tokenPath(assetDir: string): string {
  return path.join(authDir(assetDir), 'bootstrap-token.json');
}

/**
 * A saved token is reused only while it has at least this long left: a machine created now must
 * provision (5–20 min on Metal), install packages and join before it expires.
 */
export const TOKEN_REUSE_MARGIN_MS = 60 * 60 * 1000;

/** The cluster's bootstrap material for the userdata of new machines. */
export function clusterBootstrapFor(
  cluster: ClusterConfig,
  m: { endpoint: string; pki: ClusterPki; token: BootstrapToken },
): ClusterBootstrap {
  return clusterBootstrap({
    clusterName: cluster.clusterName,
    controllerCount: cluster.controllerCount,
    controlPlaneEndpoint: m.endpoint,
    pki: m.pki,
    caCertHash: m.pki.caCertHash,
    bootstrapToken: m.token,
    kubernetesVersion: cluster.kubernetesVersion,
    podSubnet: cluster.podCidr,
    serviceSubnet: cluster.serviceCidr,
  });
}

/** A token and the time it stops working. */
export interface SavedToken {
  token: BootstrapToken;
  expires: Date;
}

/** Writes the token atomically with mode 0600 (its directory 0700). */
export async function saveToken(assetDir: string, saved: SavedToken): Promise<void> {
  const file = tokenPath(assetDir);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await chmod(path.dirname(file), 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  const body = { token: saved.token.reveal(), expires: saved.expires.toISOString() };
  try {
    await writeFile(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The saved token, or undefined when there is none or it is unreadable (it is only a cache). */
export async function loadToken(assetDir: string): Promise<SavedToken | undefined> {
  try {
    const raw = JSON.parse(await readFile(tokenPath(assetDir), 'utf8')) as {
      token?: unknown;
      expires?: unknown;
    };
    if (typeof raw.token !== 'string' || typeof raw.expires !== 'string') return undefined;
    const expires = new Date(raw.expires);
    if (Number.isNaN(expires.getTime())) return undefined;
    return { token: BootstrapToken.parse(raw.token), expires };
  } catch {
    return undefined;
  }
}

/** True when `saved` is still good for a machine created at `now`. */
export function tokenUsable(saved: SavedToken | undefined, now: Date): saved is SavedToken {
  return !!saved && saved.expires.getTime() - now.getTime() >= TOKEN_REUSE_MARGIN_MS;
}
