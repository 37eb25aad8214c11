/**
 * Helpers of the Kubernetes twin suites: the skip/fail rule for missing binaries (the harness's:
 * skip with a notice outside CI, fail under CI=true), a cluster's userdata rendered by loko's own
 * renderer against an Elastic IP reserved from the emulator, and a Kubernetes client that verifies
 * the userdata's CA and authenticates with loko's admin certificate.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Taint } from '../../../src/config/types.js';
import {
  clusterBootstrap,
  controllerNode,
  renderUserdata,
  workerNode,
  type ClusterBootstrap,
  type NodeBootstrap,
} from '../../../src/platforms/equinixmetal/userdata/index.js';
import { BootstrapToken, ensureClusterPki, type ClusterPki } from '../../../src/pki/index.js';
import { startEmulator } from '../../../src/emulator/index.js';
import { wrap, type TestEmulator } from '../../harness/emulator.js';
import {
  checkBinaries,
  CONTROLLER_BINARIES,
  CORE_BINARIES,
  isCI,
  missingNotice,
} from '../../harness/kube/binaries.js';

/** True while `pid` exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** `describe` for a twin suite: skipped with a notice without binaries, failing under CI=true. */
export function describeTwin(name: string, fn: () => void): void {
  const { binDir, missing } = checkBinaries([...CORE_BINARIES, ...CONTROLLER_BINARIES]);
  if (missing.length === 0) {
    describe(name, fn);
    return;
  }
  const notice = missingNotice(binDir, missing);
  if (isCI()) {
    describe(name, () => {
      it('has the Kubernetes binaries (required when CI=true)', () => {
        throw new Error(notice);
      });
    });
    return;
  }
  console.warn(`[twin] skipping "${name}": ${notice}`);
  describe.skip(name, fn);
}

/** Polls `check` until it returns a value (not undefined/false), or fails naming `what`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 240_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A cluster's bootstrap material and each machine's userdata. */
export interface ClusterFixture {
  assetDir: string;
  pki: ClusterPki;
  eip: string;
  bootstrap: ClusterBootstrap;
  nodes: NodeBootstrap[];
  userdata: Map<string, string>;
}

/** What the helpers need of an emulator: its project and a Metal API call with the token. */
export type MetalHandle = Pick<TestEmulator, 'api' | 'projectId'>;

/** A {@link MetalHandle} for an emulator known only by its ready file (`loko emulator start`). */
export function metalHandle(ready: { url: string; token: string; projectId: string }): MetalHandle {
  return {
    projectId: ready.projectId,
    api: async (method, p, body) => {
      const res = await fetch(`${ready.url}${p}`, {
        method,
        headers: {
          'x-auth-token': ready.token,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        body: text ? JSON.parse(text) : undefined,
      };
    },
  };
}

/** Reserves a /32 public IPv4 in `metro` and returns its address (loopback in the emulator). */
export async function reserveEip(emu: MetalHandle, metro = 'sv'): Promise<string> {
  const r = await emu.api('POST', `/projects/${emu.projectId}/ips`, {
    type: 'public_ipv4',
    metro,
    quantity: 1,
    tags: ['loko:cluster=twin', 'loko:role=control-plane-endpoint'],
  });
  expect(r.status).toBe(201);
  return r.body.address as string;
}

/**
 * A cluster `name` with `controllers` controllers and a pool `pool` of `workers` workers (labels
 * and a taint), its PKI in a fresh asset dir, userdata rendered by loko's own renderer.
 */
export async function makeCluster(
  emu: MetalHandle,
  opts: { name: string; controllers?: number; workers?: number },
): Promise<ClusterFixture> {
  const assetDir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-assets-'));
  const pki = await ensureClusterPki(assetDir);
  const eip = await reserveEip(emu);
  const bootstrap = clusterBootstrap({
    clusterName: opts.name,
    controllerCount: opts.controllers ?? 1,
    controlPlaneEndpoint: eip,
    pki,
    caCertHash: pki.caCertHash,
    bootstrapToken: BootstrapToken.generate(),
  });
  const nodes: NodeBootstrap[] = [];
  for (let i = 0; i < (opts.controllers ?? 1); i++) nodes.push(controllerNode(opts.name, i));
  const pool = {
    name: 'pool',
    labels: { 'example.com/tier': 'web' },
    taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' } satisfies Taint],
    disableBgp: false,
  };
  for (let i = 0; i < (opts.workers ?? 0); i++) nodes.push(workerNode(opts.name, pool, i));
  const userdata = new Map(nodes.map((n) => [n.hostname, renderUserdata(bootstrap, n)]));
  return { assetDir, pki, eip, bootstrap, nodes, userdata };
}

/** Creates a device with `userdata` through the Metal API; returns its id. */
export async function createDevice(
  emu: MetalHandle,
  hostname: string,
  userdata: string,
): Promise<string> {
  const r = await emu.api('POST', `/projects/${emu.projectId}/devices`, {
    metro: 'sv',
    plan: 'c3.small.x86',
    operating_system: 'ubuntu_24_04',
    hostname,
    userdata,
    tags: ['loko:cluster=twin'],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id as string;
}

/**
 * A fresh emulator (state in a new temp dir `<prefix>*`) whose twin runs with `gates`, with
 * cluster `name` made on it: every machine created with its userdata and the clock advanced so
 * they are active. The caller stops `emu` and removes `dir`.
 */
export async function bootTwinCluster(opts: {
  prefix: string;
  name: string;
  controllers: number;
  workers: number;
  gates: { requireCcm: boolean; requireCni: boolean };
  /** Receives the emulator's log lines. */
  log: string[];
}): Promise<{ dir: string; emu: TestEmulator; fx: ClusterFixture }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), opts.prefix));
  const statePath = path.join(dir, 'state.json');
  const emu = wrap(
    await startEmulator({
      port: 0,
      statePath,
      twinOptions: opts.gates,
      logger: { info: (m) => opts.log.push(m) },
    }),
    dir,
    statePath,
  );
  const fx = await makeCluster(emu, {
    name: opts.name,
    controllers: opts.controllers,
    workers: opts.workers,
  });
  for (const n of fx.nodes) await createDevice(emu, n.hostname, fx.userdata.get(n.hostname)!);
  await emu.control.advanceClock(10);
  return { dir, emu, fx };
}

/** A Kubernetes API answer. */
export interface KubeAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The server certificate verified against the CA (always true when the request succeeded). */
  authorized: boolean;
}

/** A client of `https://<eip>:6443` verifying the cluster CA, as loko's admin. */
export function kubeClient(fx: Pick<ClusterFixture, 'eip' | 'pki'>) {
  const req = (method: string, p: string, body?: unknown): Promise<KubeAnswer> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const r = request(
        {
          host: fx.eip,
          port: 6443,
          method,
          path: p,
          ca: fx.pki.ca.certPem,
          cert: fx.pki.admin.certPem,
          key: fx.pki.admin.key.reveal(),
          timeout: 10_000,
          headers: {
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          const authorized =
            (res.socket as import('node:tls').TLSSocket | null)?.authorized === true;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              /* text */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, authorized });
          });
        },
      );
      r.on('timeout', () => r.destroy(new Error('timeout')));
      r.on('error', reject);
      if (payload) r.write(payload);
      r.end();
    });
  return {
    get: (p: string) => req('GET', p),
    post: (p: string, body: unknown) => req('POST', p, body),
    delete: (p: string) => req('DELETE', p),
  };
}

/** Node as the tests look at it. */
export interface NodeView {
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: { providerID?: string; taints?: Array<{ key: string; value?: string; effect: string }> };
  status: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    addresses?: Array<{ type: string; address: string }>;
  };
}

/** The nodes by name. */
export async function nodesOf(
  client: ReturnType<typeof kubeClient>,
): Promise<Map<string, NodeView>> {
  const r = await client.get('/api/v1/nodes');
  if (r.status !== 200) throw new Error(`GET nodes: HTTP ${r.status}`);
  return new Map((r.body.items as NodeView[]).map((n) => [n.metadata.name, n]));
}

/** True when the node's Ready condition is True. */
export function isReady(node: NodeView | undefined): boolean {
  return node?.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}
