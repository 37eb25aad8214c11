/**
 * The applier's retry of webhooks that are not reachable yet, against the real kube-apiserver of
 * the harness and a validating webhook served by this test on loopback TLS (url clientConfig, a
 * throw-away CA): "failed calling webhook ... connection refused" (nothing listening) and
 * connection resets are retried until the webhook serves, and so is "no endpoints available for
 * service" (a service-backed webhook without ready pods); a webhook that never serves ends in a
 * WebhookUnavailableError naming it; a webhook that answers "denied" is not retried.
 *
 * Each webhook only matches ConfigMaps carrying this test's label in this test's namespace, so it
 * never touches other suites on the shared control plane.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  applyObjects,
  KubeApiError,
  WebhookUnavailableError,
  type ApplyProgress,
  type KubeObject,
} from '../../../src/kube/index.js';
import { describeKube, useKube, useNamespace } from '../../harness/kube/index.js';

const run = promisify(execFile);

interface Tls {
  caPem: string;
  cert: string;
  key: string;
}

/** A CA and a serving certificate for IP 127.0.0.1 (openssl CLI, test only). */
async function makeTls(dir: string): Promise<Tls> {
  const p = (f: string) => path.join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-subj',
    '/CN=webhook-test-ca',
    '-days',
    '1',
  ]);
  await run('openssl', [
    'req',
    ...ec,
    '-keyout',
    p('srv.key'),
    '-out',
    p('srv.csr'),
    '-subj',
    '/CN=127.0.0.1',
  ]);
  await writeFile(p('ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    p('srv.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('srv.crt'),
    '-days',
    '1',
    '-extfile',
    p('ext.cnf'),
  ]);
  return {
    caPem: await readFile(p('ca.crt'), 'utf8'),
    cert: await readFile(p('srv.crt'), 'utf8'),
    key: await readFile(p('srv.key'), 'utf8'),
  };
}

/** A loopback port with nothing listening on it (bound, then released). */
async function freePort(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

interface Review {
  request: { uid: string; name?: string; namespace?: string; operation: string };
}

/** An admission webhook: answers every AdmissionReview with `allowed` (or a denial). */
function webhookServer(
  tls: Tls,
  opts: { deny?: string } = {},
): { server: HttpsServer; reviews: Review[] } {
  const reviews: Review[] = [];
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      reviews.push(review);
      const response = opts.deny
        ? { uid: review.request.uid, allowed: false, status: { code: 403, message: opts.deny } }
        : { uid: review.request.uid, allowed: true };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }),
      );
    });
  });
  return { server, reviews };
}

const listen = (s: HttpsServer | TcpServer, port: number) =>
  new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve());
  });

const closeServer = (s: HttpsServer | TcpServer) =>
  new Promise<void>((resolve) => {
    if ('closeAllConnections' in s) s.closeAllConnections();
    s.close(() => resolve());
  });

describeKube('kube apply retries webhooks that are not reachable yet', () => {
  const kube = useKube();
  const ns = useNamespace(kube, 'hook');
  let dir: string;
  let tls: Tls;
  const cleanup: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'loko-webhook-'));
    tls = await makeTls(dir);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /** Registers a VWC for this test's labelled ConfigMaps, pointing at 127.0.0.1:`port`. */
  async function registerWebhook(port: number, label: string, webhookName: string): Promise<void> {
    const { client } = kube();
    const vwc: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: `loko-test-${label}` },
      webhooks: [
        {
          name: webhookName,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
          clientConfig: {
            url: `https://127.0.0.1:${port}/validate`,
            caBundle: Buffer.from(tls.caPem).toString('base64'),
          },
          rules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['configmaps'],
              scope: 'Namespaced',
            },
          ],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns() } },
          objectSelector: { matchLabels: { 'loko.dev/webhook-test': label } },
        },
      ],
    };
    await client.apply(vwc, { fieldManager: 'loko-test-harness' });
    cleanup.push(() =>
      client.delete({ apiVersion: vwc.apiVersion, kind: vwc.kind, name: vwc.metadata.name }),
    );
  }

  const configMap = (label: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'guarded', namespace: ns(), labels: { 'loko.dev/webhook-test': label } },
    data: { k: 'v' },
  });

  it('retries "connection refused" until the webhook listens, then applies', async () => {
    const label = randomBytes(4).toString('hex');
    const name = `refuse-${label}.loko.test`;
    const port = await freePort();
    await registerWebhook(port, label, name);
    const { server, reviews } = webhookServer(tls);
    cleanup.push(() => closeServer(server));
    const N = 3;
    const retries: Extract<ApplyProgress, { type: 'retrying' }>[] = [];
    const result = await applyObjects(kube().client, [configMap(label)], {
      webhookTimeoutMs: 60_000,
      onProgress: (e) => {
        if (e.type !== 'retrying') return;
        retries.push(e);
        // The webhook comes up after it was refused N times.
        if (retries.length === N) void listen(server, port);
      },
    });
    expect(retries.length).toBeGreaterThanOrEqual(N);
    for (const r of retries.slice(0, N)) {
      expect(r.webhook).toBe(name);
      expect(r.message).toContain(`failed calling webhook "${name}"`);
      expect(r.message).toMatch(/connection refused/);
    }
    expect(result.applied.map((a) => a.action)).toEqual(['created']);
    expect(reviews.map((r) => [r.request.operation, r.request.name])).toEqual([
      ['CREATE', 'guarded'],
    ]);
    const stored = await kube().client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'guarded',
      namespace: ns(),
    });
    expect(stored?.data).toEqual({ k: 'v' });
  });

  it('retries connections that are reset until the webhook serves', async () => {
    const label = randomBytes(4).toString('hex');
    const name = `reset-${label}.loko.test`;
    const port = await freePort();
    await registerWebhook(port, label, name);
    const { server: https, reviews } = webhookServer(tls);
    const N = 3;
    let resets = 0;
    // The first N connections are reset (RST) before TLS; later ones go to the webhook.
    const front = createTcpServer((socket: Socket) => {
      if (resets < N) {
        resets++;
        socket.resetAndDestroy();
        return;
      }
      https.emit('connection', socket);
    });
    await listen(front, port);
    cleanup.push(() => closeServer(front));
    cleanup.push(() => closeServer(https));
    const retries: string[] = [];
    const result = await applyObjects(kube().client, [configMap(label)], {
      webhookTimeoutMs: 60_000,
      onProgress: (e) => {
        if (e.type === 'retrying') retries.push(e.message);
      },
    });
    expect(resets).toBe(N);
    expect(result.applied.map((a) => a.action)).toEqual(['created']);
    expect(reviews).toHaveLength(1);
    // kube-apiserver retries a reset call itself a few times; whatever reached loko was retried.
    for (const m of retries) expect(m).toMatch(/connection reset by peer|connection refused/);
  });

  it('retries "no endpoints available for service" (a service-backed webhook whose pods are not up)', async () => {
    // kube-apiserver resolves the Service through its endpoints (--enable-aggregator-routing);
    // a Service without any answers "no endpoints available", the state MetalLB's webhook is in
    // before its controller pod is ready. Nothing is dialled. The webhook configuration is removed
    // after N refusals (standing in for "the webhook became reachable"), and the apply goes through.
    const { client } = kube();
    const label = randomBytes(4).toString('hex');
    const name = `noep-${label}.loko.test`;
    await client.apply(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'hook', namespace: ns() },
        spec: { ports: [{ port: 443, targetPort: 9443 }] },
      },
      { fieldManager: 'loko-test-harness' },
    );
    const vwcName = `loko-test-${label}`;
    await client.apply(
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: vwcName },
        webhooks: [
          {
            name,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            clientConfig: {
              service: { namespace: ns(), name: 'hook', port: 443, path: '/validate' },
              caBundle: Buffer.from(tls.caPem).toString('base64'),
            },
            rules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['configmaps'],
              },
            ],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns() } },
            objectSelector: { matchLabels: { 'loko.dev/webhook-test': label } },
          },
        ],
      },
      { fieldManager: 'loko-test-harness' },
    );
    const ref = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      name: vwcName,
    };
    cleanup.push(() => client.delete(ref));
    const N = 2;
    const retries: Extract<ApplyProgress, { type: 'retrying' }>[] = [];
    const result = await applyObjects(client, [configMap(label)], {
      webhookTimeoutMs: 60_000,
      onProgress: (e) => {
        if (e.type !== 'retrying') return;
        retries.push(e);
        if (retries.length === N) void client.delete(ref);
      },
    });
    expect(retries.length).toBeGreaterThanOrEqual(N);
    for (const r of retries.slice(0, N)) {
      expect(r.webhook).toBe(name);
      expect(r.message).toContain(`failed calling webhook "${name}"`);
      expect(r.message).toMatch(/no endpoints available for service/);
    }
    expect(result.applied.map((a) => a.action)).toEqual(['created']);
  });

  it('gives up after the budget with an error naming the webhook', async () => {
    const label = randomBytes(4).toString('hex');
    const name = `never-${label}.loko.test`;
    const port = await freePort();
    await registerWebhook(port, label, name);
    let retries = 0;
    const err = await applyObjects(kube().client, [configMap(label)], {
      webhookTimeoutMs: 1500,
      onProgress: (e) => {
        if (e.type === 'retrying') retries++;
      },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WebhookUnavailableError);
    const w = err as WebhookUnavailableError;
    expect(w.webhook).toBe(name);
    expect(w.message).toContain(`webhook "${name}" still unavailable after`);
    expect(w.message).toContain('ConfigMap');
    expect(w.apiMessage).toMatch(/connection refused/);
    expect(retries).toBeGreaterThanOrEqual(1);
    const stored = await kube().client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'guarded',
      namespace: ns(),
    });
    expect(stored).toBeUndefined();
  });

  it('does not retry a webhook that answers with a denial', async () => {
    const label = randomBytes(4).toString('hex');
    const name = `deny-${label}.loko.test`;
    const port = await freePort();
    await registerWebhook(port, label, name);
    const { server, reviews } = webhookServer(tls, { deny: 'pool overlaps another pool' });
    await listen(server, port);
    cleanup.push(() => closeServer(server));
    let retries = 0;
    const err = await applyObjects(kube().client, [configMap(label)], {
      webhookTimeoutMs: 60_000,
      onProgress: (e) => {
        if (e.type === 'retrying') retries++;
      },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).not.toBeInstanceOf(WebhookUnavailableError);
    expect((err as KubeApiError).apiMessage).toContain('pool overlaps another pool');
    expect(retries).toBe(0);
    expect(reviews).toHaveLength(1);
  });
});
