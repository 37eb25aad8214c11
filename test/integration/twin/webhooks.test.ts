/**
 * The twin's webhook stand-in with the real MetalLB v0.16.2 native manifest (from the Go module
 * cache): applied by loko's applier (server-side apply, field manager `loko`) to a twin cluster,
 * its controller pod (fake, kwok) gets its webhooks served on `<pod IP>:9443` by the twin, the
 * caBundles of the ValidatingWebhookConfiguration and of the BGPPeer CRD's conversion webhook are
 * set by the twin's field manager, custom resources pass admission (failurePolicy Fail) and
 * conversion, a re-apply by loko changes nothing, and the listener closes with the pods.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { twinStatus } from '../../../src/emulator/index.js';
import { applyObjects } from '../../../src/kube/apply.js';
import { KubeClient } from '../../../src/kube/client.js';
import { kubeconfigFromSpec } from '../../../src/kube/kubeconfig.js';
import type { KubeObject } from '../../../src/kube/objects.js';
import { egressSocketPath } from '../../../src/emulator/twin/egress.js';
import { type TestEmulator } from '../../harness/emulator.js';
import { inspectProcesses, SocketSampler } from '../../harness/kube/sockets.js';
import { goModuleDir } from '../../harness/upstream/index.js';
import {
  bootTwinCluster,
  describeTwin,
  isReady,
  kubeClient,
  nodesOf,
  waitFor,
  type ClusterFixture,
} from './helpers.js';

const NAME = 'hooks';
const NS = 'metallb-system';
const VWC =
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/metallb-webhook-configuration';
const BGPPEERS_CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bgppeers.metallb.io';
const TWIN_MANAGER = 'loko-emulator-twin';
const LINES: string[] = [];

/**
 * The upstream manifest's objects. Every node of the fixture is tainted (controllers by kubeadm,
 * the pool by its config), so the controller Deployment tolerates them all, as loko's metallb
 * component renders tolerations from its config.
 */
function metallbManifest(): KubeObject[] {
  const dir = goModuleDir('go.universe.tf/metallb', 'v0.16.2');
  const text = readFileSync(path.join(dir, 'config', 'manifests', 'metallb-native.yaml'), 'utf8');
  const objects = parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o && typeof o === 'object' && 'kind' in o);
  const controller = objects.find((o) => o.kind === 'Deployment')!;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (controller as any).spec.template.spec.tolerations = [{ operator: 'Exists' }];
  return objects;
}

/**
 * What the apiserver does to reach `ip:port`: an HTTP CONNECT over the twin's egress socket.
 * Resolves the proxy's status line and, on 200, the tunnelled socket.
 */
function connectVia(
  socketPath: string,
  ip: string,
  port: number,
): Promise<{ status: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let head = '';
    socket.once('error', reject);
    socket.on('connect', () =>
      socket.write(`CONNECT ${ip}:${port} HTTP/1.1\r\nHost: ${ip}:${port}\r\n\r\n`),
    );
    const onData = (b: Buffer) => {
      head += b.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      resolve({ status: head.slice(0, head.indexOf('\r\n')), socket });
    };
    socket.on('data', onData);
  });
}

/**
 * POSTs `body` to `ip:port` through the egress socket, over TLS verifying `caPem` and the name
 * `servername` (what the apiserver verifies).
 */
async function postTls(
  socketPath: string,
  ip: string,
  port: number,
  caPem: string,
  servername: string,
  p: string,
  body: unknown,
): Promise<{ status: number; body: unknown }> {
  const tunnel = await connectVia(socketPath, ip, port);
  if (!tunnel.status.startsWith('HTTP/1.1 200')) {
    tunnel.socket.destroy();
    throw new Error(tunnel.status);
  }
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const r = request(
      {
        host: ip,
        port,
        method: 'POST',
        path: p,
        // No agent: the request goes over this connection only (an agent would dial host:port).
        createConnection: () => tlsConnect({ socket: tunnel.socket, ca: caPem, servername }),
        timeout: 10_000,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', reject);
    r.end(payload);
  });
}

function pool(name: string, addresses: string[]): KubeObject {
  return {
    apiVersion: 'metallb.io/v1beta1',
    kind: 'IPAddressPool',
    metadata: { name, namespace: NS },
    spec: { addresses },
  };
}

describeTwin('Kubernetes twin: webhooks of fake pods (MetalLB v0.16.2 native)', () => {
  let dir: string;
  let emu: TestEmulator;
  let fx: ClusterFixture;
  let kube: KubeClient;
  let manifest: KubeObject[];
  let sampler: SocketSampler | undefined;
  let sampled: Array<{ name: string; pid: number }> = [];
  let egress: string;
  let samplerTimer: NodeJS.Timeout | undefined;
  const client = () => kubeClient(fx);

  beforeAll(async () => {
    manifest = metallbManifest();
    // The gates are not what this suite is about: nodes are initialised and Ready at once.
    ({ dir, emu, fx } = await bootTwinCluster({
      prefix: 'loko-twin-hooks-',
      name: NAME,
      controllers: 1,
      workers: 1,
      gates: { requireCcm: false, requireCni: false },
      log: LINES,
    }));
    await waitFor('both nodes Ready', async () => {
      const nodes = await nodesOf(client()).catch(() => undefined);
      return nodes && nodes.size === 2 && [...nodes.values()].every(isReady);
    });
    const status = await twinStatus(emu.twin.dir!);
    egress = egressSocketPath(status.clusters[0]!.dir);
    // The control plane's processes, and this process, where the emulator and its twin's
    // webhook listeners run.
    sampled = [
      ...status.clusters[0]!.components,
      { name: 'emulator (test process)', pid: process.pid },
    ];
    sampler = new SocketSampler(sampled);
    sampler.sample();
    samplerTimer = setInterval(() => sampler?.sample(), 250);
    kube = new KubeClient(
      kubeconfigFromSpec({
        server: `https://${fx.eip}:6443`,
        caPem: fx.pki.ca.certPem,
        user: {
          clientCertificatePem: fx.pki.admin.certPem,
          clientKeyPem: fx.pki.admin.key.reveal(),
        },
      }),
    );
  }, 300_000);

  afterAll(async () => {
    clearInterval(samplerTimer);
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (fx) await rm(fx.assetDir, { recursive: true, force: true });
  });

  it('serves the webhooks of the MetalLB controller pod and sets the caBundles', async () => {
    await applyObjects(kube, manifest);
    // The controller's pod (fake) runs, its endpoint is ready.
    const endpoint = await waitFor('a ready endpoint of metallb-webhook-service', async () => {
      const r = await client().get(
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dmetallb-webhook-service`,
      );
      const ep = (r.body.items ?? [])
        .flatMap(
          (s: { endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> }) =>
            s.endpoints ?? [],
        )
        .find((e: { conditions?: { ready?: boolean } }) => e.conditions?.ready !== false);
      return ep?.addresses[0] as string | undefined;
    });
    // An address of the cluster's pod range (10.2.0.0/16): the apiserver refuses loopback
    // addresses in EndpointSlices. Nothing dials it: the apiserver goes through the egress socket.
    expect(endpoint).toMatch(/^10\.2\./);

    // Every webhook of the configuration and the conversion webhook carry the twin's CA.
    const vwc = await waitFor('the caBundles of metallb-webhook-configuration', async () => {
      const r = await client().get(VWC);
      const hooks = r.body.webhooks as Array<{ clientConfig: { caBundle?: string } }>;
      return hooks.every((h) => h.clientConfig.caBundle) ? r.body : undefined;
    });
    const bundles = new Set(
      (vwc.webhooks as Array<{ clientConfig: { caBundle: string } }>).map(
        (h) => h.clientConfig.caBundle,
      ),
    );
    expect(bundles.size).toBe(1);
    const bundle = [...bundles][0]!;
    const caPem = Buffer.from(bundle, 'base64').toString('utf8');
    expect(caPem).toContain('BEGIN CERTIFICATE');
    const crd = await waitFor('the conversion caBundle of bgppeers.metallb.io', async () => {
      const r = await client().get(BGPPEERS_CRD);
      return r.body.spec.conversion.webhook.clientConfig.caBundle ? r.body : undefined;
    });
    expect(crd.spec.conversion.webhook.clientConfig.caBundle).toBe(bundle);
    // Owned by the twin's field manager, not by loko.
    const owners = (vwc.metadata.managedFields as Array<{ manager: string; fieldsV1: unknown }>)
      .filter((m) => JSON.stringify(m.fieldsV1).includes('f:caBundle'))
      .map((m) => m.manager);
    expect(owners).toEqual([TWIN_MANAGER]);

    // A CONNECT to the pod's address reaches a TLS server with a certificate for the Service's
    // name, issued by that CA, which answers an AdmissionReview.
    const answer = await waitFor('the stand-in to serve the pod address', () =>
      postTls(
        egress,
        endpoint,
        9443,
        caPem,
        'metallb-webhook-service.metallb-system.svc',
        '/validate-metallb-io-v1beta1-ipaddresspool',
        {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: { uid: 'b7c3a7a2-0000-4000-8000-000000000001' },
        },
      ).catch(() => undefined),
    );
    expect(answer).toEqual({
      status: 200,
      body: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: 'b7c3a7a2-0000-4000-8000-000000000001', allowed: true },
      },
    });

    // Custom resources pass the webhook (failurePolicy: Fail, so this fails without an answer).
    const applied = await applyObjects(kube, [pool('first', ['127.250.0.0/28'])]);
    expect(applied.applied[0]!.action).toBe('created');
    const listeners = [...(await import('../../../src/emulator/twin/twin.js')).liveTwins.values()]
      .flatMap((t) => [...t.webhookListeners().values()].flat())
      .filter((l) => l.address === `${endpoint}:9443`);
    // One endpoint served, for one Service; the apiserver's calls and ours answered.
    expect(listeners).toHaveLength(1);
    expect(listeners[0]!.services).toEqual(['metallb-system/metallb-webhook-service']);
    expect(listeners[0]!.served).toBeGreaterThanOrEqual(2);
  });

  it('converts through the conversion webhook (a BGPPeer created as v1beta1, stored as v1beta2)', async () => {
    const peer = {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'BGPPeer',
      metadata: { name: 'peer-v1beta1', namespace: NS },
      spec: { myASN: 65000, peerASN: 65530, peerAddress: '127.250.1.1' },
    };
    const created = await waitFor('the v1beta1 BGPPeer to be created', async () => {
      const r = await client().post(`/apis/metallb.io/v1beta1/namespaces/${NS}/bgppeers`, peer);
      if (r.status !== 201) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    });
    expect(created.apiVersion).toBe('metallb.io/v1beta1');
    const v2 = await client().get(
      `/apis/metallb.io/v1beta2/namespaces/${NS}/bgppeers/peer-v1beta1`,
    );
    expect(v2.status).toBe(200);
    expect(v2.body.apiVersion).toBe('metallb.io/v1beta2');
    expect(v2.body.spec).toMatchObject({ myASN: 65000, peerASN: 65530 });
  });

  it("a re-apply by loko's server-side apply neither conflicts nor changes the webhook configuration", async () => {
    const before = await client().get(VWC);
    const crdBefore = await client().get(BGPPEERS_CRD);
    const result = await applyObjects(kube, manifest);
    const vwcResult = result.applied.find((a) => a.ref.kind === 'ValidatingWebhookConfiguration')!;
    expect(vwcResult.action).toBe('unchanged');
    const after = await client().get(VWC);
    expect(after.body.metadata.resourceVersion).toBe(before.body.metadata.resourceVersion);
    expect(after.body.webhooks).toEqual(before.body.webhooks);
    const crdAfter = await client().get(BGPPEERS_CRD);
    expect(crdAfter.body.metadata.resourceVersion).toBe(crdBefore.body.metadata.resourceVersion);
    // A few rounds of the stand-in later, still nothing has changed hands.
    await new Promise((r) => setTimeout(r, 3000));
    const later = await client().get(VWC);
    expect(later.body.metadata.resourceVersion).toBe(before.body.metadata.resourceVersion);
  });

  it('stops serving when the pods go away', async () => {
    const endpoints = await client().get(
      `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dmetallb-webhook-service`,
    );
    const ip = endpoints.body.items[0].endpoints[0].addresses[0] as string;
    const scaled = await kube.apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'controller', namespace: NS },
        spec: { replicas: 0 },
      },
      { fieldManager: 'webhooks-test', force: true },
    );
    expect(scaled.kind).toBe('Deployment');
    await waitFor('the stand-in to stop serving the pod address', async () => {
      const tunnel = await connectVia(egress, ip, 9443);
      tunnel.socket.destroy();
      return tunnel.status === 'HTTP/1.1 502 connection refused';
    });
    // An address nobody serves is refused the same way, and never dialled.
    const other = await connectVia(egress, '10.2.200.200', 443);
    other.socket.destroy();
    expect(other.status).toBe('HTTP/1.1 502 connection refused');
    // The apiserver now finds no backend: the webhook fails closed.
    const r = await client().post(`/apis/metallb.io/v1beta1/namespaces/${NS}/ipaddresspools`, {
      ...pool('second', ['127.250.2.0/28']),
    });
    expect(r.status).toBe(500);
    expect(String(r.body.message)).toMatch(
      /failed calling webhook "ipaddresspoolvalidationwebhook\.metallb\.io".*(no endpoints available|connection refused)/,
    );
  });

  it('kept every socket of the control plane on loopback while serving webhooks', () => {
    clearInterval(samplerTimer);
    expect(sampler!.samples).toBeGreaterThan(1);
    expect(sampler!.violations.map((v) => `${v.process}: ${v.text}`)).toEqual([]);
    const { sockets, violations } = inspectProcesses(sampled);
    expect(sockets).toBeGreaterThan(5);
    expect(violations.map((v) => `${v.process}: ${v.text}`)).toEqual([]);
  });
});
