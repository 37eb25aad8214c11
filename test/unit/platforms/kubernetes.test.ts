/**
 * The Kubernetes end of apply on FakeMetal + FakeClusterApi: userdata wiring (endpoint, PKI,
 * token, config values), where the bootstrap token of new machines comes from (new, saved,
 * minted through the API), the token Secret's shape, and the waits for the API and the nodes.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { caCertHash, BootstrapToken, BOOTSTRAP_TOKEN_PATTERN } from '../../../src/pki/index.js';
import { applyCluster } from '../../../src/platforms/equinixmetal/apply.js';
import { mutationJson } from '../../../src/commands/shared/render-plan.js';
import {
  bootstrapTokenSecret,
  NODE_BOOTSTRAP_GROUP,
} from '../../../src/platforms/equinixmetal/kubernetes.js';
import {
  loadToken,
  saveToken,
  tokenPath,
} from '../../../src/platforms/equinixmetal/machine-bootstrap.js';
import { createPlainRunner } from '../../../src/tasks/phase.js';
import { LokoError } from '../../../src/util/errors.js';
import { FakeClusterApi } from './fake-kube.js';
import { FakeMetal } from './fake-metal.js';
import { cluster, pool } from './fixtures.js';
import { applyCtx, assetDirOf } from './helpers.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;
const WAIT = { mode: 'wait' } as const;
const HOSTS = ['demo-controller-0', 'demo-general-0', 'demo-general-1', 'demo-edge-0'];

/** The userdata each created device was sent, by hostname. */
function sentUserdata(api: FakeMetal): Map<string, string> {
  return new Map(
    api
      .live()
      .filter((d) => d.userdata)
      .map((d) => [d.hostname, d.userdata!]),
  );
}

/** The kubeadm documents of one userdata. */
function kubeadmDocs(userdata: string): Array<Record<string, unknown>> {
  const cfg = parse(userdata, { version: '1.1' }) as {
    write_files: Array<{ path: string; content: string }>;
  };
  const file = cfg.write_files.find((f) => f.path === '/etc/kubernetes/kubeadm.yaml')!;
  return parseAllDocuments(file.content).map((d) => d.toJS() as Record<string, unknown>);
}

/** 4 h from when the token was made, during the run that ended at `api.now`. */
function expectFourHoursFromTheRun(expires: Date, api: FakeMetal): void {
  const left = expires.getTime() - api.now;
  expect(left).toBeLessThanOrEqual(4 * 3600 * 1000);
  expect(left).toBeGreaterThan(4 * 3600 * 1000 - 60_000);
}

function tokenOf(userdata: string): string {
  for (const d of kubeadmDocs(userdata)) {
    const join = (d.discovery as { bootstrapToken?: { token: string } } | undefined)
      ?.bootstrapToken;
    if (join) return join.token;
    const init = d.bootstrapTokens as Array<{ token: string }> | undefined;
    if (init) return init[0]!.token;
  }
  throw new Error('no token in userdata');
}

describe('userdata wiring', { timeout: 30_000 }, () => {
  it('new devices boot with kubeadm userdata for the Elastic IP, the PKI and the config', async () => {
    const api = new FakeMetal();
    const c = cluster({
      kubernetesVersion: 'v1.35.2',
      podCidr: '10.20.0.0/16',
      serviceCidr: '10.30.0.0/20',
      workerPools: [pool('general', { count: 1, labels: { 'example.com/tier': 'web' } })],
    });
    const ctx = await applyCluster(applyCtx(api, c), { runner, signal });
    const eip = api.reservations[0]!.network;
    const userdata = sentUserdata(api);
    expect([...userdata.keys()].sort()).toEqual(['demo-controller-0', 'demo-general-0']);
    const init = kubeadmDocs(userdata.get('demo-controller-0')!);
    expect(init.find((d) => d.kind === 'ClusterConfiguration')).toMatchObject({
      clusterName: 'demo',
      kubernetesVersion: 'v1.35.2',
      controlPlaneEndpoint: `${eip}:6443`,
      apiServer: { certSANs: [eip] },
      networking: { podSubnet: '10.20.0.0/16', serviceSubnet: '10.30.0.0/20' },
    });
    const join = kubeadmDocs(userdata.get('demo-general-0')!).find(
      (d) => d.kind === 'JoinConfiguration',
    ) as { discovery: { bootstrapToken: { apiServerEndpoint: string; caCertHashes: string[] } } };
    const ca = await readFile(path.join(ctx.cluster.assetDir, 'pki', 'ca.crt'), 'utf8');
    expect(join.discovery.bootstrapToken).toMatchObject({
      apiServerEndpoint: `${eip}:6443`,
      caCertHashes: [caCertHash(ca)],
    });
    expect(userdata.get('demo-general-0')).toContain('example.com/tier=web');
    // Controller 0 and the workers share the token that kubeadm init creates.
    expect(tokenOf(userdata.get('demo-general-0')!)).toBe(
      tokenOf(userdata.get('demo-controller-0')!),
    );
  });

  it('plans and mutation logs never carry userdata, tokens or keys', async () => {
    const api = new FakeMetal();
    const ctx = await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const token = tokenOf(sentUserdata(api).get('demo-controller-0')!);
    const logged = JSON.stringify(ctx.executor.recorded.map(mutationJson));
    for (const secret of [token, '#cloud-config', 'PRIVATE KEY', 'BEGIN CERTIFICATE'])
      expect(logged).not.toContain(secret);
    // The plan's desired devices (what `cluster plan -o json` reads) have no userdata.
    const dry = applyCtx(new FakeMetal(), cluster(), { dryRun: true });
    await applyCluster(dry, { runner, signal });
    expect(dry.desired.devices.every((d) => d.userdata === undefined)).toBe(true);
  });

  it('userdata is create-only: changing what it carries plans no change', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const ctx = await applyCluster(
      applyCtx(api, cluster({ kubernetesVersion: 'v1.35.0', podCidr: '10.9.0.0/16' })),
      { runner, signal },
    );
    expect(ctx.plan?.changes).toBe(false);
    expect(ctx.executor.recorded).toEqual([]);
  });
});

describe('bootstrap token of new machines', { timeout: 30_000 }, () => {
  it('a new cluster gets a new token, kept 0600 in the asset dir until it expires', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster()), { runner, signal });
    const saved = await loadToken(assetDirOf(api));
    expect(saved?.token.reveal()).toBe(tokenOf(sentUserdata(api).get('demo-controller-0')!));
    expectFourHoursFromTheRun(saved!.expires, api);
    expect((await stat(tokenPath(assetDirOf(api)))).mode & 0o777).toBe(0o600);
  });

  it('without a Kubernetes API, later machines reuse the saved token while it is valid', async () => {
    const api = new FakeMetal();
    await applyCluster(applyCtx(api, cluster({ workerPools: [pool('general', { count: 1 })] })), {
      runner,
      signal,
    });
    const first = (await loadToken(assetDirOf(api)))!.token.reveal();
    const ctx = await applyCluster(
      applyCtx(api, cluster({ workerPools: [pool('general', { count: 2 })] })),
      { runner, signal },
    );
    expect(ctx.tokenSource).toBe('saved');
    expect(tokenOf(sentUserdata(api).get('demo-general-1')!)).toBe(first);

    // Expired: no cluster to mint from (the emulator without its twin): a new, unregistered one.
    await saveToken(assetDirOf(api), {
      token: BootstrapToken.parse(first),
      expires: new Date(api.now + 30 * 60 * 1000),
    });
    const later = await applyCluster(
      applyCtx(api, cluster({ workerPools: [pool('general', { count: 3 })] })),
      { runner, signal },
    );
    expect(later.tokenSource).toBe('unregistered');
    expect(tokenOf(sentUserdata(api).get('demo-general-2')!)).not.toBe(first);
  });

  it('once the API answers, machines created later get a token minted through it', async () => {
    const api = new FakeMetal();
    const kube = new FakeClusterApi();
    kube.register(['demo-controller-0', 'demo-general-0']);
    const small = cluster({ workerPools: [pool('general', { count: 1 })] });
    await applyCluster(applyCtx(api, small, { kubernetes: WAIT, connect: kube.connect }), {
      runner,
      signal,
    });
    expect(kube.minted).toEqual([]); // controller 0's init creates the first one

    kube.register(['demo-general-1']);
    const ctx = await applyCluster(
      applyCtx(api, cluster({ workerPools: [pool('general', { count: 2 })] }), {
        kubernetes: WAIT,
        connect: kube.connect,
      }),
      { runner, signal },
    );
    expect(ctx.tokenSource).toBe('minted');
    expect(kube.minted).toHaveLength(1);
    const minted = kube.minted[0]!;
    expect(tokenOf(sentUserdata(api).get('demo-general-1')!)).toBe(minted.token.reveal());
    expectFourHoursFromTheRun(minted.expires, api);
    // The saved token of the first apply is not used once the API can mint.
    expect(minted.token.reveal()).not.toBe((await loadToken(assetDirOf(api)))!.token.reveal());
  });

  it('with an API expected but down and no valid saved token, it waits for the API to mint', async () => {
    const api = new FakeMetal();
    const kube = new FakeClusterApi();
    const c1 = cluster({ workerPools: [] });
    await applyCluster(applyCtx(api, c1), { runner, signal });
    await saveToken(assetDirOf(api), {
      token: BootstrapToken.generate(),
      expires: new Date(api.now),
    });
    kube.probes = [
      { ready: false, state: 'ECONNREFUSED' },
      { ready: false, state: 'ECONNREFUSED' },
      { ready: false, state: "loko's admin is not authorized yet (403)" },
    ];
    const ctx = await applyCluster(
      applyCtx(api, cluster({ workerPools: [pool('general', { count: 1 })] }), {
        kubernetes: { mode: 'skip', reason: '--machines-only', apiExpected: true },
        connect: kube.connect,
      }),
      { runner, signal },
    );
    expect(ctx.tokenSource).toBe('minted');
    expect(kube.probeCount).toBe(4);
  });
});

describe('the token Secret', { timeout: 30_000 }, () => {
  it('is the bootstrap-token Secret kubeadm token create makes', () => {
    const token = BootstrapToken.parse('abcdef.0123456789abcdef');
    const s = bootstrapTokenSecret(token, new Date('2026-12-01T10:00:00.123Z')) as unknown as {
      apiVersion: string;
      kind: string;
      type: string;
      metadata: { name: string; namespace: string };
      data: Record<string, string>;
    };
    expect(s).toMatchObject({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'bootstrap.kubernetes.io/token',
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
    });
    const data = Object.fromEntries(
      Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    expect(data).toEqual({
      'token-id': 'abcdef',
      'token-secret': '0123456789abcdef',
      expiration: '2026-12-01T10:00:00Z',
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': NODE_BOOTSTRAP_GROUP,
      description: expect.stringContaining('loko') as unknown as string,
    });
    expect(NODE_BOOTSTRAP_GROUP).toBe('system:bootstrappers:kubeadm:default-node-token');
    expect(BOOTSTRAP_TOKEN_PATTERN.test(`${data['token-id']}.${data['token-secret']}`)).toBe(true);
  });
});

describe('waiting for Kubernetes', { timeout: 30_000 }, () => {
  it('retries refused, 503 and 403, writes the kubeconfig, waits for every node', async () => {
    const api = new FakeMetal();
    const kube = new FakeClusterApi();
    kube.probes = [
      { ready: false, state: 'ECONNREFUSED: connect ECONNREFUSED' },
      { ready: false, state: '/readyz answered HTTP 503' },
      { ready: false, state: "loko's admin is not authorized yet (403)" },
    ];
    kube.onList = (n) => {
      if (n === 1) kube.register(['demo-controller-0'], false);
      if (n === 3) kube.register(HOSTS, false);
      if (n === 5) kube.register(HOSTS, true);
    };
    const ctx = await applyCluster(
      applyCtx(api, cluster(), { kubernetes: WAIT, connect: kube.connect }),
      { runner, signal },
    );
    const eip = api.reservations[0]!.network;
    expect(kube.server).toBe(`https://${eip}:6443`);
    expect(kube.probeCount).toBe(4);
    expect(ctx.nodes?.every((n) => n.ready)).toBe(true);
    const file = path.join(ctx.cluster.assetDir, 'auth', 'kubeconfig');
    expect(ctx.kubeconfig).toBe(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text).toContain(`server: "https://${eip}:6443"`);
    expect(text).toContain('client-certificate-data');
    // The admin certificate of the PKI, not anything in userdata.
    const cert = await readFile(path.join(ctx.cluster.assetDir, 'pki', 'admin.crt'), 'utf8');
    expect(text).toContain(Buffer.from(cert).toString('base64'));
  });

  it('times out naming the API and its last state', async () => {
    const api = new FakeMetal();
    const kube = new FakeClusterApi();
    kube.down = true;
    const err = await applyCluster(
      applyCtx(api, cluster(), { kubernetes: WAIT, connect: kube.connect }),
      { runner, signal },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    const eip = api.reservations[0]!.network;
    expect((err as LokoError).message).toBe(
      `timed out after 2 min waiting for the Kubernetes API at https://${eip}:6443: ECONNREFUSED: connect ECONNREFUSED`,
    );
    expect((err as LokoError).hint).toContain('demo-controller-0');
    // The machines are there and summarised before the Kubernetes phases.
    expect(api.live()).toHaveLength(4);
  });

  it('names the nodes that never turn Ready, and why', async () => {
    const api = new FakeMetal();
    const kube = new FakeClusterApi();
    kube.register(HOSTS, true);
    kube.nodes.set('demo-edge-0', { ready: false });
    const err = await applyCluster(
      applyCtx(api, cluster(), { kubernetes: WAIT, connect: kube.connect }),
      { runner, signal },
    ).catch((e: unknown) => e);
    expect((err as LokoError).message).toBe(
      'timed out after 2 min waiting for nodes to be Ready: demo-edge-0 (NotReady: KubeletNotReady: container runtime network not ready)',
    );
    expect((err as LokoError).hint).toContain('CNI');
  });
});
