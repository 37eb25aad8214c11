/**
 * The twin's stand-in for webhooks served by fake pods.
 *
 * The twin's pods are fake (kwok marks them Running; nothing runs their containers), but the
 * apiserver really calls admission webhooks and CRD conversion webhooks — with
 * `--enable-aggregator-routing=true` on the *endpoint* address `<pod IP>:<targetPort>`, through
 * its egress selector, i.e. as an HTTP CONNECT to the twin's proxy (./egress.ts). So the twin
 * plays the webhook server of every Service named by a ValidatingWebhookConfiguration, a
 * MutatingWebhookConfiguration or a CRD with `conversion.strategy: Webhook`:
 *
 * - it acts like the component's own cert rotator (MetalLB's controller, cert-manager's
 *   cainjector): a twin webhook CA (`<cluster dir>/pki/webhook-ca.*`, kept across restarts) goes
 *   into every `caBundle` of those service-backed webhooks, by a JSON patch under field manager
 *   {@link WEBHOOK_FIELD_MANAGER} and only when the value differs, so a server-side apply of the
 *   manifest (which carries no caBundle) neither conflicts nor changes anything;
 * - for each ready endpoint of the Service's port (EndpointSlices: the Running fake pods behind
 *   it), it serves `<pod IP>:<targetPort>`: the egress proxy hands every CONNECT to that address
 *   to an in-process TLS server with a certificate for `<svc>.<ns>.svc` (the name the apiserver
 *   verifies) issued by that CA. Nothing listens on, or dials, a pod address;
 * - it answers `AdmissionReview` (admission.k8s.io/v1 and v1beta1) with `allowed: true` and no
 *   patch, and `ConversionReview` (apiextensions.k8s.io/v1 and v1beta1) by rewriting each object's
 *   `apiVersion` to the desired one. The real webhook's validation, defaulting and field
 *   conversion are not reproduced.
 *
 * A served endpoint goes (its connections are dropped, new CONNECTs are refused) when the
 * endpoint goes (the pods are gone) and when the twin stops.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { issueCa, issueLeaf, type CertPair } from './certs.js';
import type { KubeApi } from './kube-api.js';

/** Field manager of the twin's caBundle patches (never `loko`: loko's apply must not own them). */
export const WEBHOOK_FIELD_MANAGER = 'loko-emulator-twin';

/** A Service a webhook points at: namespace, name and the Service port (default 443). */
export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

interface ClientConfig {
  service?: { namespace?: string; name?: string; port?: number; path?: string };
  url?: string;
  caBundle?: string;
}

/** `metadata.managedFields` as far as the stand-in reads it. */
export interface ManagedFieldsView {
  manager?: string;
  fieldsV1?: Record<string, unknown>;
}

/** A webhook configuration as far as the stand-in reads it. */
export interface WebhookConfigView {
  metadata: { name: string; managedFields?: ManagedFieldsView[] };
  webhooks?: Array<{ name: string; clientConfig?: ClientConfig }>;
}

/** A CRD as far as the stand-in reads it. */
export interface CrdView {
  metadata: { name: string; managedFields?: ManagedFieldsView[] };
  spec?: {
    conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } };
  };
}

/** A Service as far as the stand-in reads it. */
export interface ServiceView {
  spec?: { ports?: Array<{ name?: string; port: number; targetPort?: number | string }> };
}

/** An EndpointSlice as far as the stand-in reads it. */
export interface EndpointSliceView {
  addressType?: string;
  ports?: Array<{ name?: string; port?: number }> | null;
  endpoints?: Array<{
    addresses: string[];
    conditions?: { ready?: boolean | null };
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }> | null;
}

/** One JSON patch operation. */
export type PatchOp =
  { op: 'test'; path: string; value: unknown } | { op: 'add'; path: string; value: unknown };

function serviceOf(cc: ClientConfig | undefined): ServiceRef | undefined {
  const s = cc?.service;
  if (!s?.name || !s.namespace) return undefined;
  return { namespace: s.namespace, name: s.name, port: s.port ?? 443 };
}

function refKey(r: ServiceRef): string {
  return `${r.namespace}/${r.name}:${r.port}`;
}

/** The Services (deduplicated) that webhook configurations and conversion webhooks call. */
export function webhookServices(
  configs: readonly WebhookConfigView[],
  crds: readonly CrdView[],
): ServiceRef[] {
  const out = new Map<string, ServiceRef>();
  for (const c of configs) {
    for (const w of c.webhooks ?? []) {
      const r = serviceOf(w.clientConfig);
      if (r) out.set(refKey(r), r);
    }
  }
  for (const crd of crds) {
    if (crd.spec?.conversion?.strategy !== 'Webhook') continue;
    const r = serviceOf(crd.spec.conversion.webhook?.clientConfig);
    if (r) out.set(refKey(r), r);
  }
  return [...out.values()];
}

/** The managers other than the twin that own the field at `path` (fieldsV1 keys). */
function otherOwners(managed: ManagedFieldsView[] | undefined, path: string[]): string[] {
  const out: string[] = [];
  for (const m of managed ?? []) {
    if (m.manager === WEBHOOK_FIELD_MANAGER) continue;
    let node: unknown = m.fieldsV1;
    for (const key of path) {
      node =
        typeof node === 'object' && node !== null
          ? (node as Record<string, unknown>)[key]
          : undefined;
    }
    if (node !== undefined) out.push(m.manager ?? '?');
  }
  return out;
}

/**
 * The webhooks (by name) whose caBundle another field manager set to something else: a component
 * that brings its own CA (loko applying a caBundle, a real cert injector). The twin leaves those
 * alone rather than fight over them.
 */
export function foreignCaBundles(cfg: WebhookConfigView, caBundle: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const w of cfg.webhooks ?? []) {
    const have = w.clientConfig?.caBundle;
    if (!serviceOf(w.clientConfig) || !have || have === caBundle) continue;
    const owners = otherOwners(cfg.metadata.managedFields, [
      'f:webhooks',
      `k:${JSON.stringify({ name: w.name })}`,
      'f:clientConfig',
      'f:caBundle',
    ]);
    if (owners.length > 0) out.set(w.name, owners);
  }
  return out;
}

/** The managers other than the twin that set a CRD's conversion caBundle to something else. */
export function foreignCrdCaBundle(crd: CrdView, caBundle: string): string[] {
  const have = crd.spec?.conversion?.webhook?.clientConfig?.caBundle;
  if (!have || have === caBundle) return [];
  return otherOwners(crd.metadata.managedFields, [
    'f:spec',
    'f:conversion',
    'f:webhook',
    'f:clientConfig',
    'f:caBundle',
  ]);
}

/**
 * JSON patch setting `caBundle` (base64 PEM) on every service-backed webhook of a webhook
 * configuration whose bundle differs and is not another manager's ({@link foreignCaBundles});
 * undefined when nothing is to change. Each change is guarded by a `test` of the webhook's name at
 * its index, so a configuration reordered meanwhile fails the patch instead of receiving a bundle
 * in the wrong place.
 */
export function webhookCaPatch(cfg: WebhookConfigView, caBundle: string): PatchOp[] | undefined {
  const ops: PatchOp[] = [];
  const foreign = foreignCaBundles(cfg, caBundle);
  (cfg.webhooks ?? []).forEach((w, i) => {
    if (!serviceOf(w.clientConfig) || w.clientConfig?.caBundle === caBundle) return;
    if (foreign.has(w.name)) return;
    ops.push({ op: 'test', path: `/webhooks/${i}/name`, value: w.name });
    ops.push({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle });
  });
  return ops.length > 0 ? ops : undefined;
}

/** The same for a CRD's conversion webhook. */
export function crdCaPatch(crd: CrdView, caBundle: string): PatchOp[] | undefined {
  const conv = crd.spec?.conversion;
  if (conv?.strategy !== 'Webhook' || !serviceOf(conv.webhook?.clientConfig)) return undefined;
  if (conv.webhook?.clientConfig?.caBundle === caBundle) return undefined;
  if (foreignCrdCaBundle(crd, caBundle).length > 0) return undefined;
  return [
    { op: 'test', path: '/spec/conversion/strategy', value: 'Webhook' },
    { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle },
  ];
}

/** A ready endpoint of a Service port: the pod's address and the port it serves on. */
export interface WebhookEndpoint {
  ip: string;
  port: number;
  /** `namespace/name` of the pod, when the slice names it. */
  pod?: string;
}

/**
 * The ready IPv4 endpoints behind `ref` (the Service port `ref.port`), from the Service's
 * EndpointSlices: the slice port with the Service port's name gives the resolved target port.
 */
export function serviceEndpoints(
  ref: ServiceRef,
  service: ServiceView,
  slices: readonly EndpointSliceView[],
): WebhookEndpoint[] {
  const sp = service.spec?.ports?.find((p) => p.port === ref.port);
  if (!sp) return [];
  const portName = sp.name ?? '';
  const out = new Map<string, WebhookEndpoint>();
  for (const s of slices) {
    if (s.addressType && s.addressType !== 'IPv4') continue;
    const port = (s.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
    if (!port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const ip of e.addresses) {
        const pod =
          e.targetRef?.kind === 'Pod' && e.targetRef.name
            ? `${e.targetRef.namespace ?? ref.namespace}/${e.targetRef.name}`
            : undefined;
        out.set(`${ip}:${port}`, { ip, port, ...(pod ? { pod } : {}) });
      }
    }
  }
  return [...out.values()];
}

/** What a review request looks like on the wire. */
interface ReviewRequest {
  apiVersion?: string;
  kind?: string;
  request?: {
    uid?: string;
    desiredAPIVersion?: string;
    objects?: Array<Record<string, unknown>>;
  };
}

/**
 * The stand-in's answer to a webhook call: an AdmissionReview is allowed (no patch), a
 * ConversionReview converts by rewriting `apiVersion`. Anything else: undefined (HTTP 400).
 */
export function answerReview(body: unknown): Record<string, unknown> | undefined {
  const review = body as ReviewRequest;
  const uid = review?.request?.uid;
  if (typeof uid !== 'string') return undefined;
  if (review.kind === 'AdmissionReview' && review.apiVersion?.startsWith('admission.k8s.io/')) {
    return {
      apiVersion: review.apiVersion,
      kind: 'AdmissionReview',
      response: { uid, allowed: true },
    };
  }
  if (
    review.kind === 'ConversionReview' &&
    review.apiVersion?.startsWith('apiextensions.k8s.io/')
  ) {
    const desired = review.request?.desiredAPIVersion;
    if (typeof desired !== 'string') return undefined;
    return {
      apiVersion: review.apiVersion,
      kind: 'ConversionReview',
      response: {
        uid,
        convertedObjects: (review.request?.objects ?? []).map((o) => ({
          ...o,
          apiVersion: desired,
        })),
        result: { status: 'Success' },
      },
    };
  }
  return undefined;
}

/** The DNS names a Service's serving certificate carries (the apiserver verifies `<svc>.<ns>.svc`). */
export function serviceDnsNames(ns: string, name: string): string[] {
  return [`${name}.${ns}.svc`, `${name}.${ns}.svc.cluster.local`, `${name}.${ns}`, name];
}

const MAX_BODY = 16 * 2 ** 20;

interface Listener {
  key: string;
  /** A TLS server that never listens: the egress proxy hands it its connections. */
  server: Server;
  sockets: Set<Socket>;
  /** Sorted `ns/name` of the Services whose names the certificate carries. */
  services: string;
  /** Reviews answered. */
  served: number;
}

/** One served endpoint, for status and tests. */
export interface WebhookListenerStatus {
  /** `<pod IP>:<port>`. */
  address: string;
  services: string[];
  served: number;
}

/** The webhook stand-in of one twin cluster (see the module comment). */
export class WebhookStandIn {
  private ca: CertPair | undefined;
  private readonly listeners = new Map<string, Listener>();
  private closed = false;
  private readonly said = new Set<string>();

  private once(key: string, msg: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.log(msg);
  }

  /**
   * @param dir the cluster's directory (the CA is kept in `<dir>/pki/webhook-ca.{crt,key}`)
   * @param log one line for the twin's log
   */
  constructor(
    private readonly dir: string,
    private readonly log: (msg: string) => void,
  ) {}

  /** The CA that signs the listeners' certificates, created on first use and kept on disk. */
  async caPem(): Promise<string> {
    return (await this.loadCa()).certPem;
  }

  private async loadCa(): Promise<CertPair> {
    if (this.ca) return this.ca;
    const crt = join(this.dir, 'pki', 'webhook-ca.crt');
    const key = join(this.dir, 'pki', 'webhook-ca.key');
    if (existsSync(crt) && existsSync(key)) {
      this.ca = { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
    } else {
      this.ca = await issueCa('loko-emulator-twin-webhook-ca');
      writeFileSync(key, this.ca.keyPem, { mode: 0o600 });
      writeFileSync(crt, this.ca.certPem, { mode: 0o600 });
    }
    return this.ca;
  }

  /**
   * The egress proxy's hook: a connection handler for `<host>:<port>` when it is a served
   * endpoint, else undefined.
   */
  handler(host: string, port: number): ((socket: Socket) => void) | undefined {
    const l = this.listeners.get(`${host}:${port}`);
    if (!l || this.closed) return undefined;
    return (socket) => {
      l.sockets.add(socket);
      socket.once('close', () => l.sockets.delete(socket));
      l.server.emit('connection', socket);
    };
  }

  /** The endpoints served now. */
  status(): WebhookListenerStatus[] {
    return [...this.listeners.values()].map((l) => ({
      address: l.key,
      services: l.services.split(',').filter(Boolean),
      served: l.served,
    }));
  }

  /**
   * One round: patch the caBundles that differ, then open, re-certify or close listeners so that
   * exactly the ready endpoints of webhook Services are served.
   */
  async reconcile(api: KubeApi): Promise<void> {
    if (this.closed) return;
    const cache = '?resourceVersion=0';
    const [validating, mutating, crds] = await Promise.all([
      api.get<{ items: WebhookConfigView[] }>(
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations${cache}`,
      ),
      api.get<{ items: WebhookConfigView[] }>(
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations${cache}`,
      ),
      api.get<{ items: CrdView[] }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${cache}`,
      ),
    ]);
    const configs = [
      ...(validating?.items ?? []).map((c) => ({ c, kind: 'validatingwebhookconfigurations' })),
      ...(mutating?.items ?? []).map((c) => ({ c, kind: 'mutatingwebhookconfigurations' })),
    ];
    const crdItems = crds?.items ?? [];
    const refs = webhookServices(
      configs.map((x) => x.c),
      crdItems,
    );
    if (refs.length === 0 && this.listeners.size === 0) return;

    const ca = await this.loadCa();
    const bundle = Buffer.from(ca.certPem).toString('base64');
    for (const { c, kind } of configs) {
      for (const [name, owners] of foreignCaBundles(c, bundle)) {
        this.once(
          `foreign:${kind}/${c.metadata.name}/${name}`,
          `webhook stand-in: the caBundle of webhook ${name} (${kind} ${c.metadata.name}) is set by ${owners.join(', ')}; the twin leaves it, so calls to it fail TLS verification`,
        );
      }
      const ops = webhookCaPatch(c, bundle);
      if (!ops) continue;
      const path = `/apis/admissionregistration.k8s.io/v1/${kind}/${encodeURIComponent(c.metadata.name)}`;
      if (await api.jsonPatch(path, ops, WEBHOOK_FIELD_MANAGER)) {
        this.log(`webhook stand-in: set the caBundle of ${kind} ${c.metadata.name}`);
      }
    }
    for (const crd of crdItems) {
      const owners = foreignCrdCaBundle(crd, bundle);
      if (owners.length > 0) {
        this.once(
          `foreign:crd/${crd.metadata.name}`,
          `webhook stand-in: the conversion caBundle of CRD ${crd.metadata.name} is set by ${owners.join(', ')}; the twin leaves it, so conversions fail TLS verification`,
        );
      }
      const ops = crdCaPatch(crd, bundle);
      if (!ops) continue;
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crd.metadata.name)}`;
      if (await api.jsonPatch(path, ops, WEBHOOK_FIELD_MANAGER)) {
        this.log(`webhook stand-in: set the conversion caBundle of CRD ${crd.metadata.name}`);
      }
    }

    // Endpoint -> the Services it serves (one address may serve several Services).
    const wanted = new Map<
      string,
      { ip: string; port: number; services: Set<string>; pods: Set<string> }
    >();
    for (const ref of refs) {
      const ns = encodeURIComponent(ref.namespace);
      const service = await api.get<ServiceView>(
        `/api/v1/namespaces/${ns}/services/${encodeURIComponent(ref.name)}`,
      );
      if (!service) continue;
      const selector = encodeURIComponent(`kubernetes.io/service-name=${ref.name}`);
      const slices = await api.get<{ items: EndpointSliceView[] }>(
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${selector}`,
      );
      for (const ep of serviceEndpoints(ref, service, slices?.items ?? [])) {
        const key = `${ep.ip}:${ep.port}`;
        const w = wanted.get(key) ?? {
          ip: ep.ip,
          port: ep.port,
          services: new Set(),
          pods: new Set(),
        };
        w.services.add(`${ref.namespace}/${ref.name}`);
        if (ep.pod) w.pods.add(ep.pod);
        wanted.set(key, w);
      }
    }

    for (const [key, l] of [...this.listeners]) {
      if (wanted.has(key)) continue;
      this.listeners.delete(key);
      drop(l);
      this.log(`webhook stand-in: stopped serving ${key} (no ready pod behind it)`);
    }
    for (const [key, w] of wanted) {
      const services = [...w.services].sort().join(',');
      const existing = this.listeners.get(key);
      if (existing && existing.services === services) continue;
      const cert = await issueLeaf(ca, {
        commonName: `${[...w.services][0]!.split('/')[1]}.${[...w.services][0]!.split('/')[0]}.svc`,
        usages: ['server'],
        dnsNames: [...w.services].flatMap((s) => {
          const [ns, name] = s.split('/') as [string, string];
          return serviceDnsNames(ns, name);
        }),
        ipAddresses: [w.ip],
      });
      if (existing) {
        existing.server.setSecureContext({ cert: cert.certPem, key: cert.keyPem });
        existing.services = services;
        this.log(`webhook stand-in: ${key} now serves ${services}`);
        continue;
      }
      if (this.closed) return;
      const server = createServer({ cert: cert.certPem, key: cert.keyPem });
      const l: Listener = { key, server, sockets: new Set(), services, served: 0 };
      server.on('request', (req: IncomingMessage, res: ServerResponse) => this.handle(l, req, res));
      // A client that goes away mid-handshake is no concern of the twin's.
      server.on('tlsClientError', () => undefined);
      this.listeners.set(key, l);
      this.log(
        `webhook stand-in: serving ${services} at ${key}` +
          (w.pods.size > 0 ? ` (pod ${[...w.pods].join(', ')})` : ''),
      );
    }
  }

  private handle(l: Listener, req: IncomingMessage, res: ServerResponse): void {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    if (req.method !== 'POST') {
      reply(405, { error: 'webhooks are called with POST' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        reply(400, { error: 'the body is not JSON' });
        return;
      }
      const answer = answerReview(parsed);
      if (!answer) {
        reply(400, {
          error: 'expected an AdmissionReview or a ConversionReview with a request uid',
        });
        return;
      }
      l.served++;
      reply(200, answer);
    });
  }

  /** Stops serving every endpoint (the twin stops or the cluster goes). */
  close(): Promise<void> {
    this.closed = true;
    for (const l of this.listeners.values()) drop(l);
    this.listeners.clear();
    return Promise.resolve();
  }
}

function drop(l: Listener): void {
  for (const s of l.sockets) s.destroy();
  l.sockets.clear();
}
