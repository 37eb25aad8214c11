/**
 * The Kubernetes twin end to end, through the Metal API only (like real machines): userdata
 * rendered by loko's own renderer for 1 controller + 2 workers on an Elastic IP reserved from the
 * emulator, plus two workers that must never register (wrong token, wrong CA hash). The twin must
 * serve the API on <EIP>:6443 with the userdata's CA, turn every good device into a Ready node
 * with its labels and taints, keep the bad ones out, remove a deleted worker's node, be reused by
 * the next emulator on the same state, stop when controller 0 goes, and leave nothing running.
 * Timings are never asserted: the waits only bound a loaded 2-core machine.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderUserdata } from '../../../src/platforms/equinixmetal/userdata/index.js';
import { BootstrapToken, ensureClusterPki } from '../../../src/pki/index.js';
import {
  startEmulator,
  stopTwin,
  twinStatus,
  type EmulatorOptions,
} from '../../../src/emulator/index.js';
import { wrap, type TestEmulator } from '../../harness/emulator.js';
import { inspectProcesses, SocketSampler } from '../../harness/kube/sockets.js';
import {
  createDevice,
  describeTwin,
  isReady,
  kubeClient,
  makeCluster,
  nodesOf,
  pidAlive,
  waitFor,
  type ClusterFixture,
} from './helpers.js';

const NAME = 'twin';

describeTwin('Kubernetes twin: a cluster from kubeadm userdata', () => {
  let dir: string;
  let statePath: string;
  let twinDir: string;
  let emu: TestEmulator;
  let fx: ClusterFixture;
  const lines: string[] = [];
  const ids = new Map<string, string>();
  let sampler: SocketSampler | undefined;
  let samplerTimer: NodeJS.Timeout | undefined;
  const started = (opts: EmulatorOptions = {}) =>
    startEmulator({
      port: 0,
      statePath,
      // The embedded emulator's mode: processes outlive the emulator and are reused.
      twinOptions: { onClose: 'keep' },
      logger: {
        info: (m) => {
          lines.push(m);
          if (process.env.LOKO_TWIN_DEBUG) console.log(`[twin] ${m}`);
        },
      },
      ...opts,
    }).then((r) => wrap(r, dir, statePath));
  const client = () => kubeClient(fx);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-'));
    statePath = path.join(dir, 'emulator', 'state.json');
    twinDir = path.join(dir, 'emulator');
    emu = await started();
    expect(emu.twin).toEqual({ enabled: true, dir: twinDir });
    fx = await makeCluster(emu, { name: NAME, controllers: 1, workers: 2 });

    // Two machines that must never join: a token the cluster never issued, and the right token
    // pinned to another CA.
    const wrongToken = { ...fx.bootstrap, bootstrapToken: BootstrapToken.generate() };
    const otherPki = await ensureClusterPki(
      await mkdtemp(path.join(os.tmpdir(), 'loko-twin-other-')),
    );
    const wrongCa = { ...fx.bootstrap, caCertHash: otherPki.caCertHash };
    const worker = fx.nodes.find((n) => n.role === 'worker')!;
    const bad = [
      { ...worker, hostname: `${NAME}-pool-wrong-token` },
      { ...worker, hostname: `${NAME}-pool-wrong-ca` },
    ];
    for (const n of fx.nodes)
      ids.set(n.hostname, await createDevice(emu, n.hostname, fx.userdata.get(n.hostname)!));
    ids.set(
      bad[0]!.hostname,
      await createDevice(emu, bad[0]!.hostname, renderUserdata(wrongToken, bad[0]!)),
    );
    ids.set(
      bad[1]!.hostname,
      await createDevice(emu, bad[1]!.hostname, renderUserdata(wrongCa, bad[1]!)),
    );
    // Boot them all: queued 1 s + provisioning 3 s on the emulator's clock.
    await emu.control.advanceClock(10);
  }, 60_000);

  afterAll(async () => {
    clearInterval(samplerTimer);
    await emu?.close();
    if (twinDir) await stopTwin(twinDir);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (fx) await rm(fx.assetDir, { recursive: true, force: true });
  });

  it('serves the API on <EIP>:6443 with the userdata CA; loko admin is cluster-admin', async () => {
    const r = await waitFor('the apiserver on the Elastic IP', async () => {
      const a = await client()
        .get('/readyz')
        .catch(() => undefined);
      return a?.status === 200 ? a : undefined;
    });
    expect(r.authorized).toBe(true);
    expect(r.body).toBe('ok');
    // kubeadm:cluster-admins -> cluster-admin (the binding kubeadm init creates).
    const review = await waitFor('the admin binding', async () => {
      const a = await client().post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: '*', group: '*', resource: '*' } },
      });
      return a.status === 201 && a.body.status.allowed ? a : undefined;
    });
    expect(review.body.status.allowed).toBe(true);
    const info = await client().get('/api/v1/namespaces/kube-public/configmaps/cluster-info');
    expect(info.status).toBe(200);
    expect(info.body.data.kubeconfig).toContain(`server: https://${fx.eip}:6443`);
    // The InitConfiguration's token, as kubeadm init stores it.
    const id = fx.bootstrap.bootstrapToken.id;
    const secret = await waitFor('the bootstrap token Secret', async () => {
      const r = await client().get(`/api/v1/namespaces/kube-system/secrets/bootstrap-token-${id}`);
      return r.status === 200 ? r : undefined;
    });
    expect(secret.body.type).toBe('bootstrap.kubernetes.io/token');
    expect(Buffer.from(secret.body.data['token-id'], 'base64').toString()).toBe(id);
    expect(secret.body.data.expiration).toBeDefined();
    const status = await twinStatus(twinDir);
    expect(status.clusters).toHaveLength(1);
    expect(status.clusters[0]).toMatchObject({
      server: `https://${fx.eip}:6443`,
      clusterName: NAME,
      controllerDeviceId: ids.get(`${NAME}-controller-0`),
      running: true,
      serving: true,
    });
    expect(status.clusters[0]!.components.map((c) => c.name).sort()).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kwok',
    ]);
    // Sample the twin's sockets from now on (checked by the network-safety test below).
    sampler = new SocketSampler(status.clusters[0]!.components);
    sampler.sample();
    samplerTimer = setInterval(() => sampler?.sample(), 250);
  });

  it('registers every good device as a Ready node with its labels, taints and providerID', async () => {
    const want = fx.nodes.map((n) => n.hostname);
    const nodes = await waitFor('three Ready nodes', async () => {
      const all = await nodesOf(client());
      return want.every((n) => isReady(all.get(n))) ? all : undefined;
    });
    for (const n of fx.nodes) {
      const node = nodes.get(n.hostname)!;
      const id = ids.get(n.hostname)!;
      expect(node.metadata.labels).toMatchObject({
        ...n.labels,
        'kubernetes.io/hostname': n.hostname,
        'node.kubernetes.io/instance-type': 'c3.small.x86',
        'topology.kubernetes.io/region': 'sv',
      });
      expect(node.spec.providerID).toBe(`equinixmetal://${id}`);
      const taints = (node.spec.taints ?? []).map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`);
      for (const t of n.taints) expect(taints).toContain(`${t.key}=${t.value}:${t.effect}`);
      expect(
        taints.some((t) => t.startsWith('node.cloudprovider.kubernetes.io/uninitialized')),
      ).toBe(false);
      // Addresses are the device's own (loopback) addresses from the emulator.
      const device = (await emu.api('GET', `/devices/${id}`)).body;
      const publicV4 = device.ip_addresses.find(
        (a: { public: boolean; address_family: number }) => a.public && a.address_family === 4,
      ).address;
      expect(node.status.addresses).toContainEqual({ type: 'ExternalIP', address: publicV4 });
      for (const a of node.status.addresses ?? []) {
        if (a.type !== 'Hostname') expect(a.address).toMatch(/^127\./);
      }
    }
    expect(nodes.get(`${NAME}-controller-0`)!.metadata.labels).toMatchObject({
      'loko.dev/bgp-enabled': 'false',
      'node-role.kubernetes.io/control-plane': '',
    });
    expect(nodes.get(`${NAME}-pool-0`)!.metadata.labels).toMatchObject({
      'loko.dev/bgp-enabled': 'true',
      'loko.dev/pool': 'pool',
      'example.com/tier': 'web',
    });
  });

  it('never registers a worker with a wrong token or a wrong CA hash, and says why', async () => {
    const logged = (host: string, why: RegExp) =>
      lines.some((l) => l.includes(host) && why.test(l));
    await waitFor(
      'the refusals in the twin log',
      async () =>
        logged(`${NAME}-pool-wrong-token`, /no JWS signed token/) &&
        logged(`${NAME}-pool-wrong-ca`, /none of the public keys .* are pinned/),
    );
    const twinLog = readFileSync(path.join(twinDir, 'twin', fx.eip, 'logs', 'twin.log'), 'utf8');
    expect(twinLog).toMatch(/pool-wrong-token .*cannot join yet: there is no JWS signed token/);
    expect(twinLog).toMatch(/pool-wrong-ca .*cannot join yet: cluster CA found in cluster-info/);
    const nodes = await nodesOf(client());
    expect([...nodes.keys()].sort()).toEqual(fx.nodes.map((n) => n.hostname).sort());
  });

  it('keeps every socket of the twin on loopback', async () => {
    const status = await twinStatus(twinDir);
    const procs = status.clusters.flatMap((c) => c.components);
    expect(procs).toHaveLength(5);
    const { sockets, violations } = inspectProcesses(procs);
    expect(sockets).toBeGreaterThan(5);
    expect(violations.map((v) => `${v.process}: ${v.text}`)).toEqual([]);
    // And every sample taken while the nodes joined.
    clearInterval(samplerTimer);
    expect(sampler!.samples).toBeGreaterThan(1);
    expect(sampler!.violations.map((v) => `${v.process}: ${v.text}`)).toEqual([]);
  });

  it('is reused by the next emulator on the same state, which removes a deleted worker node', async () => {
    const before = (await twinStatus(twinDir)).clusters[0]!.components.map((c) => c.pid);
    await emu.close();
    // onClose: keep — the processes outlive the emulator, like the embedded one's across CLI runs.
    expect(before.every(pidAlive)).toBe(true);
    lines.length = 0;
    emu = await started();
    await waitFor('the new twin to adopt the control plane', async () =>
      lines.some((l) => l.includes('reusing the control plane')),
    );
    const after = (await twinStatus(twinDir)).clusters[0]!.components.map((c) => c.pid);
    expect(after).toEqual(before);

    const worker = `${NAME}-pool-1`;
    expect((await emu.api('DELETE', `/devices/${ids.get(worker)}`)).status).toBe(204);
    await waitFor(`node ${worker} to go`, async () => !(await nodesOf(client())).has(worker));
    const nodes = await nodesOf(client());
    expect(nodes.has(`${NAME}-pool-0`)).toBe(true);
    expect(nodes.has(`${NAME}-controller-0`)).toBe(true);
  });

  it('registers a node again when it is deleted through the API (as its kubelet would)', async () => {
    const name = `${NAME}-pool-0`;
    expect((await client().delete(`/api/v1/nodes/${name}`)).status).toBe(200);
    await waitFor(`${name} to come back`, async () => isReady((await nodesOf(client())).get(name)));
  });

  it('stops the control plane when controller 0 is deleted', async () => {
    const pids = (await twinStatus(twinDir)).clusters[0]!.components.map((c) => c.pid);
    const controller = ids.get(`${NAME}-controller-0`)!;
    expect((await emu.api('DELETE', `/devices/${controller}`)).status).toBe(204);
    await waitFor('the twin processes to stop', async () => !pids.some(pidAlive), 60_000);
    await waitFor(
      'the cluster directory to go',
      async () => !existsSync(path.join(twinDir, 'twin', fx.eip)),
      30_000,
    );
    expect((await twinStatus(twinDir)).clusters).toEqual([]);
  });
});
