/**
 * The control plane of one twin cluster: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok, all bound to the control-plane Elastic IP (a loopback address), the
 * apiserver on `<EIP>:6443` with certificates issued from the CA in controller 0's userdata.
 * Flags follow what `kubeadm init` gives the static pods, with the loopback adjustments:
 *
 * - `--advertise-address=<EIP> --endpoint-reconciler-type=none`: the endpoint reconcilers refuse
 *   a loopback advertise address;
 * - the service range is moved into 127.0.0.0/8 (`loopbackRange`), and
 *   `--enable-aggregator-routing=true` makes the apiserver call webhooks and aggregated APIs on
 *   endpoint addresses, never on a cluster IP;
 * - pods keep addresses of the cluster's pod range (`podSubnet`): the apiserver refuses loopback
 *   addresses in EndpointSlices, so a Service backed by pods needs them; they are never dialled,
 *   because `--egress-selector-config-file` sends all cluster traffic (webhooks, aggregated APIs,
 *   kubelet and proxy connections) as HTTP CONNECT over a Unix socket to the twin (./egress.ts);
 * - etcd speaks plain HTTP on the EIP (kubeadm uses TLS with the etcd CA; nothing leaves the
 *   machine here).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { TwinBinary } from './binaries.js';
import { caCertHash, issueLeaf, type CertPair } from './certs.js';
import { egressSelectorConfig } from './egress.js';
import { KubeApi } from './kube-api.js';
import { firstHost, freePorts, loopbackRange, portFree, probe } from './network.js';
import { isRunning, spawnDetached, stopProcesses, type Spawned } from './processes.js';
import {
  readRecord,
  unregister,
  writeRecord,
  type ClusterRecord,
  type ComponentRecord,
} from './records.js';
import { KWOK_STAGES } from './stages.js';
import type { MachineSpec } from './userdata.js';

/** The twin's own identity towards its apiserver (bypasses RBAC, like kubeadm's super-admin). */
export const TWIN_USER = 'loko-emulator-twin';

/** A running control plane and the means to talk to it. */
export interface ControlPlaneHandle {
  dir: string;
  address: string;
  port: number;
  caPem: string;
  /** The twin's client (system:masters). */
  api: KubeApi;
  record: ClusterRecord;
}

/** What starting a control plane needs. */
export interface StartOptions {
  dir: string;
  /** Controller 0's userdata, parsed (action `init`, with `cluster` and `pki`). */
  spec: MachineSpec;
  controllerDeviceId: string;
  binaries: Record<TwinBinary, string>;
  dieWithParent: boolean;
  /** Per-component start-up limit. */
  readyTimeoutMs: number;
  /** Aborts waiting (the emulator closes); started processes are stopped. */
  signal: AbortSignal;
  /** Unix socket of the twin's egress proxy (./egress.ts `egressSocketPath`). */
  egressSocket: string;
  log: (line: string) => void;
}

/** A start-up failure, with the tail of the failing component's log. */
export class ControlPlaneError extends Error {
  override name = 'ControlPlaneError';
}

const REQUIRED_PKI = ['ca.crt', 'ca.key', 'front-proxy-ca.crt', 'front-proxy-ca.key', 'sa.key'];

/** Files of the cluster directory. */
function paths(dir: string) {
  const pki = join(dir, 'pki');
  const p = (f: string) => join(pki, f);
  return {
    pki,
    etcdData: join(dir, 'etcd'),
    logs: join(dir, 'logs'),
    stages: join(dir, 'kwok-stages.yaml'),
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    kubeletClientCert: p('apiserver-kubelet-client.crt'),
    kubeletClientKey: p('apiserver-kubelet-client.key'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    twinCert: p('twin.crt'),
    twinKey: p('twin.key'),
    controllerManagerConf: join(dir, 'controller-manager.conf'),
    schedulerConf: join(dir, 'scheduler.conf'),
    kwokConf: join(dir, 'kwok.conf'),
    egressConf: join(dir, 'egress-selector.yaml'),
  };
}

function write(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
}

function kubeconfig(server: string, caPem: string, user: string, client: CertPair): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'twin', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [
      {
        name: user,
        user: {
          'client-certificate-data': b64(client.certPem),
          'client-key-data': b64(client.keyPem),
        },
      },
    ],
    contexts: [{ name: 'twin', context: { cluster: 'twin', user } }],
    'current-context': 'twin',
  });
}

/** Checks controller 0's userdata has what a control plane needs; returns the CA hash. */
export function checkInitSpec(spec: MachineSpec): string {
  const missing = REQUIRED_PKI.filter((f) => !spec.pki[f]);
  if (missing.length > 0) {
    throw new ControlPlaneError(
      `controller 0's userdata lacks ${missing.map((f) => `/etc/kubernetes/pki/${f}`).join(', ')}`,
    );
  }
  if (!spec.cluster) throw new ControlPlaneError('no ClusterConfiguration in the userdata');
  return caCertHash(spec.pki['ca.crt']!);
}

/**
 * Writes the PKI (the userdata's CAs and SA keys, plus the leaves the twin issues from them), the
 * kubeconfigs and kwok's stages into `dir`. Leaves are issued only when missing, so a restart
 * keeps them.
 */
async function preparePki(dir: string, spec: MachineSpec): Promise<ReturnType<typeof paths>> {
  const p = paths(dir);
  mkdirSync(p.pki, { recursive: true, mode: 0o700 });
  mkdirSync(p.logs, { recursive: true, mode: 0o700 });
  mkdirSync(p.etcdData, { recursive: true, mode: 0o700 });
  const { host: address, port } = spec.endpoint;
  const cluster = spec.cluster!;
  for (const [name, content] of Object.entries(spec.pki)) {
    if (name.includes('..')) continue;
    const file = join(p.pki, name);
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    write(file, content);
  }
  if (!spec.pki['sa.pub']) {
    const { createPrivateKey, createPublicKey } = await import('node:crypto');
    const pub = createPublicKey(createPrivateKey(spec.pki['sa.key']!)).export({
      type: 'spki',
      format: 'pem',
    });
    write(p.saPub, pub.toString());
  }
  const ca: CertPair = { certPem: spec.pki['ca.crt']!, keyPem: spec.pki['ca.key']! };
  const frontProxyCa: CertPair = {
    certPem: spec.pki['front-proxy-ca.crt']!,
    keyPem: spec.pki['front-proxy-ca.key']!,
  };
  const have = async (cert: string) => {
    try {
      await readFile(cert);
      return true;
    } catch {
      return false;
    }
  };
  const leaf = async (
    cert: string,
    key: string,
    signer: CertPair,
    spec: Parameters<typeof issueLeaf>[1],
  ): Promise<CertPair> => {
    if ((await have(cert)) && (await have(key))) {
      return { certPem: await readFile(cert, 'utf8'), keyPem: await readFile(key, 'utf8') };
    }
    const pair = await issueLeaf(signer, spec);
    write(cert, pair.certPem);
    write(key, pair.keyPem);
    return pair;
  };
  const serviceIp = firstHost(loopbackRange(cluster.serviceSubnet));
  const domain = cluster.dnsDomain;
  await leaf(p.servingCert, p.servingKey, ca, {
    commonName: 'kube-apiserver',
    usages: ['server'],
    ipAddresses: [...new Set([address, '127.0.0.1', serviceIp, ...cluster.certSANs.filter(isIp)])],
    dnsNames: [
      ...new Set([
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        `kubernetes.default.svc.${domain}`,
        'localhost',
        ...(spec.nodeName ? [spec.nodeName] : []),
        ...cluster.certSANs.filter((s) => !isIp(s)),
      ]),
    ],
  });
  await leaf(p.kubeletClientCert, p.kubeletClientKey, ca, {
    commonName: 'kube-apiserver-kubelet-client',
    organizations: ['kubeadm:cluster-admins'],
    usages: ['client'],
  });
  await leaf(p.frontProxyClientCert, p.frontProxyClientKey, frontProxyCa, {
    commonName: 'front-proxy-client',
    usages: ['client'],
  });
  const twin = await leaf(p.twinCert, p.twinKey, ca, {
    commonName: TWIN_USER,
    organizations: ['system:masters'],
    usages: ['client'],
  });
  const server = `https://${address}:${port}`;
  const kcm = await leaf(
    join(p.pki, 'controller-manager.crt'),
    join(p.pki, 'controller-manager.key'),
    ca,
    {
      commonName: 'system:kube-controller-manager',
      usages: ['client'],
    },
  );
  const sched = await leaf(join(p.pki, 'scheduler.crt'), join(p.pki, 'scheduler.key'), ca, {
    commonName: 'system:kube-scheduler',
    usages: ['client'],
  });
  write(
    p.controllerManagerConf,
    kubeconfig(server, ca.certPem, 'system:kube-controller-manager', kcm),
  );
  write(p.schedulerConf, kubeconfig(server, ca.certPem, 'system:kube-scheduler', sched));
  write(p.kwokConf, kubeconfig(server, ca.certPem, TWIN_USER, twin));
  write(p.stages, KWOK_STAGES);
  return p;
}

function isIp(s: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(s) || s.includes(':');
}

async function tail(file: string, lines = 20): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** The twin's client of an apiserver described by a record. */
async function clientFor(dir: string, rec: ClusterRecord): Promise<KubeApi> {
  const p = paths(dir);
  const [caPem, certPem, keyPem] = await Promise.all(
    [p.caCert, p.twinCert, p.twinKey].map((f) => readFile(f, 'utf8')),
  );
  return new KubeApi(rec.address, rec.port, { caPem, certPem, keyPem });
}

/** True when all five recorded components still run their binaries. */
export function recordRunning(rec: ClusterRecord): boolean {
  return rec.components.length === 5 && rec.components.every((c) => isRunning(c.pid, c.binary));
}

/** True when every recorded component runs and the apiserver answers `/readyz` with `ok`. */
export async function recordServing(dir: string, rec: ClusterRecord): Promise<boolean> {
  if (!recordRunning(rec)) return false;
  let caPem: string;
  try {
    caPem = await readFile(paths(dir).caCert, 'utf8');
  } catch {
    return false;
  }
  const r = await probe(`https://${rec.address}:${rec.port}/readyz`, caPem);
  return 'status' in r && r.status === 200 && r.body.trim() === 'ok';
}

/**
 * Reuses the control plane recorded in `dir` when it belongs to the same controller device and CA
 * and is serving; otherwise undefined (the caller starts a new one).
 */
export async function adoptControlPlane(
  dir: string,
  controllerDeviceId: string,
  caHash: string,
  egressSocket: string,
): Promise<ControlPlaneHandle | undefined> {
  const rec = readRecord(dir);
  if (
    !rec ||
    rec.controllerDeviceId !== controllerDeviceId ||
    rec.caCertHash !== caHash ||
    rec.egressSocket !== egressSocket
  ) {
    return undefined;
  }
  // A busy machine may answer slowly: give a running control plane a few chances.
  let serving = false;
  for (let attempt = 0; attempt < 10 && !serving && recordRunning(rec); attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 1000));
    serving = await recordServing(dir, rec);
  }
  if (!serving) return undefined;
  const api = await clientFor(dir, rec);
  return {
    dir,
    address: rec.address,
    port: rec.port,
    caPem: await readFile(paths(dir).caCert, 'utf8'),
    api,
    record: rec,
  };
}

/** Stops the processes recorded in `dir`; with `removeData` also deletes the directory. */
export async function stopRecorded(dir: string, removeData: boolean): Promise<void> {
  const rec = readRecord(dir);
  if (rec) await stopProcesses(rec.components);
  if (removeData) {
    rmSync(dir, { recursive: true, force: true });
    unregister(dir);
  } else if (rec) writeRecord(dir, { ...rec, components: [] });
}

/**
 * Starts the control plane of `opts.spec` in `opts.dir`. What a previous run left there is
 * stopped first; etcd's data is kept when the record names the same controller device and CA (a
 * "reboot"), and wiped otherwise (a new cluster on a reused address). On failure everything
 * started is stopped and a {@link ControlPlaneError} carries the failing component's log tail.
 */
export async function startControlPlane(opts: StartOptions): Promise<ControlPlaneHandle> {
  const { dir, spec, signal } = opts;
  const caHash = checkInitSpec(spec);
  const prev = readRecord(dir);
  if (prev) await stopProcesses(prev.components);
  if (prev && (prev.controllerDeviceId !== opts.controllerDeviceId || prev.caCertHash !== caHash)) {
    rmSync(dir, { recursive: true, force: true });
  } else if (!prev) {
    // No record: whatever is there is not known to be this cluster's.
    rmSync(dir, { recursive: true, force: true });
  }
  const p = await preparePki(dir, spec);
  const { host: address, port } = spec.endpoint;
  const cluster = spec.cluster!;

  const record: ClusterRecord = {
    format: 'loko-emulator-twin',
    version: 1,
    address,
    port,
    clusterName: cluster.clusterName,
    controllerDeviceId: opts.controllerDeviceId,
    caCertHash: caHash,
    createdAt: prev?.createdAt ?? new Date().toISOString(),
    dieWithParent: opts.dieWithParent,
    egressSocket: opts.egressSocket,
    components: [],
  };
  writeRecord(dir, record);
  write(p.egressConf, egressSelectorConfig(opts.egressSocket));

  const started: Array<ComponentRecord & { proc: Spawned }> = [];
  const start = (name: TwinBinary, args: string[], ports: Record<string, number>) => {
    if (signal.aborted) throw new ControlPlaneError('the emulator is closing');
    const logFile = join(p.logs, `${name}.log`);
    const binary = opts.binaries[name];
    const proc = spawnDetached(binary, args, logFile, opts.dieWithParent);
    const comp = { name, pid: proc.pid, binary, logFile, ports, proc };
    started.push(comp);
    record.components = started.map(({ proc: _proc, ...c }) => c);
    writeRecord(dir, record);
    return comp;
  };
  const waitFor = async (
    comp: (typeof started)[number],
    check: () => Promise<true | string>,
  ): Promise<void> => {
    const deadline = Date.now() + opts.readyTimeoutMs;
    let last = 'not checked yet';
    for (let delay = 100; ; delay = Math.min(delay * 1.5, 1000)) {
      if (signal.aborted) throw new ControlPlaneError('the emulator is closing');
      const exited = comp.proc.exited();
      if (exited) {
        throw new ControlPlaneError(
          `${comp.name} exited during start-up (${exited}); last lines of ${comp.logFile}:\n${await tail(comp.logFile)}`,
        );
      }
      const r = await check();
      if (r === true) return;
      last = r;
      if (Date.now() > deadline) {
        throw new ControlPlaneError(
          `${comp.name} not healthy after ${opts.readyTimeoutMs / 1000}s (${last}); last lines of ${comp.logFile}:\n${await tail(comp.logFile)}`,
        );
      }
      await sleep(delay, signal);
    }
  };
  const http = (url: string, caPem?: string, want?: (b: string) => boolean) => async () => {
    const r = await probe(url, caPem);
    if ('error' in r) return r.error;
    if (r.status !== 200) return `HTTP ${r.status}`;
    return !want || want(r.body) ? (true as const) : r.body.slice(0, 100);
  };

  try {
    if (!(await portFree(address, port))) {
      throw new ControlPlaneError(`${address}:${port} is already in use by another process`);
    }
    const [etcdClient, etcdPeer, kcmPort, schedPort, kwokPort] = (await freePorts(address, 5)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    opts.log(`starting etcd on ${address}:${etcdClient}`);
    const etcd = start(
      'etcd',
      [
        '--name=twin',
        `--data-dir=${p.etcdData}`,
        `--listen-client-urls=http://${address}:${etcdClient}`,
        `--advertise-client-urls=http://${address}:${etcdClient}`,
        `--listen-peer-urls=http://${address}:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://${address}:${etcdPeer}`,
        `--initial-cluster=twin=http://${address}:${etcdPeer}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      { client: etcdClient, peer: etcdPeer },
    );
    await waitFor(
      etcd,
      http(`http://${address}:${etcdClient}/health`, undefined, (b) =>
        /"health":\s*"true"/.test(b),
      ),
    );

    const serviceRange = loopbackRange(cluster.serviceSubnet);
    // Not moved into 127/8 (see the module comment): never dialled, only recorded.
    const podRange = cluster.podSubnet ?? '10.244.0.0/16';
    if (!/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(podRange)) {
      throw new ControlPlaneError(`podSubnet "${podRange}" is not an IPv4 CIDR`);
    }
    opts.log(`starting kube-apiserver on ${address}:${port} (services ${serviceRange})`);
    const apiserver = start(
      'kube-apiserver',
      [
        `--advertise-address=${address}`,
        `--bind-address=${address}`,
        `--secure-port=${port}`,
        '--endpoint-reconciler-type=none',
        '--allow-privileged=true',
        '--authorization-mode=Node,RBAC',
        `--client-ca-file=${p.caCert}`,
        '--enable-admission-plugins=NodeRestriction',
        '--enable-bootstrap-token-auth=true',
        `--etcd-servers=http://${address}:${etcdClient}`,
        `--kubelet-client-certificate=${p.kubeletClientCert}`,
        `--kubelet-client-key=${p.kubeletClientKey}`,
        '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
        `--proxy-client-cert-file=${p.frontProxyClientCert}`,
        `--proxy-client-key-file=${p.frontProxyClientKey}`,
        '--requestheader-allowed-names=front-proxy-client',
        `--requestheader-client-ca-file=${p.frontProxyCaCert}`,
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-username-headers=X-Remote-User',
        `--service-account-issuer=https://kubernetes.default.svc.${cluster.dnsDomain}`,
        `--service-account-key-file=${p.saPub}`,
        `--service-account-signing-key-file=${p.saKey}`,
        `--service-cluster-ip-range=${serviceRange}`,
        `--tls-cert-file=${p.servingCert}`,
        `--tls-private-key-file=${p.servingKey}`,
        // Webhooks, conversion webhooks and aggregated APIs are called on endpoint addresses,
        // through the twin's egress proxy (never a TCP connection to a pod address).
        '--enable-aggregator-routing=true',
        `--egress-selector-config-file=${p.egressConf}`,
        '--profiling=false',
      ],
      { secure: port },
    );
    const caPem = spec.pki['ca.crt']!;
    await waitFor(
      apiserver,
      http(`https://${address}:${port}/readyz`, caPem, (b) => b.trim() === 'ok'),
    );

    const common = (conf: string, securePort: number) => [
      `--kubeconfig=${conf}`,
      `--authentication-kubeconfig=${conf}`,
      `--authorization-kubeconfig=${conf}`,
      `--bind-address=${address}`,
      `--secure-port=${securePort}`,
      `--tls-cert-file=${p.servingCert}`,
      `--tls-private-key-file=${p.servingKey}`,
      `--client-ca-file=${p.caCert}`,
      `--requestheader-client-ca-file=${p.frontProxyCaCert}`,
      '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      '--leader-elect=false',
      '--profiling=false',
    ];
    opts.log('starting kube-controller-manager, kube-scheduler and kwok');
    const kcm = start(
      'kube-controller-manager',
      [
        ...common(p.controllerManagerConf, kcmPort),
        `--cluster-name=${cluster.clusterName}`,
        `--cluster-signing-cert-file=${p.caCert}`,
        `--cluster-signing-key-file=${p.caKey}`,
        // kubeadm's set: the bootstrap signer publishes cluster-info's JWS signatures.
        '--controllers=*,bootstrapsigner,tokencleaner',
        `--root-ca-file=${p.caCert}`,
        `--service-account-private-key-file=${p.saKey}`,
        '--use-service-account-credentials=true',
        `--service-cluster-ip-range=${serviceRange}`,
        ...(cluster.podSubnet ? ['--allocate-node-cidrs=true', `--cluster-cidr=${podRange}`] : []),
      ],
      { secure: kcmPort },
    );
    const sched = start('kube-scheduler', common(p.schedulerConf, schedPort), {
      secure: schedPort,
    });
    const kwok = start(
      'kwok',
      [
        `--kubeconfig=${p.kwokConf}`,
        `--config=${p.stages}`,
        '--manage-all-nodes=true',
        `--node-ip=${address}`,
        `--cidr=${podRange}`,
        `--server-address=${address}:${kwokPort}`,
        `--node-port=${kwokPort}`,
        // Renew each node's Lease in kube-node-lease like a kubelet: without it the node
        // lifecycle controller marks every node NotReady after its grace period (50 s) and
        // flips their pods' Ready condition to False, which kwok never sets back.
        '--node-lease-duration-seconds=40',
      ],
      { server: kwokPort },
    );
    await Promise.all([
      waitFor(kcm, http(`https://${address}:${kcmPort}/healthz`, caPem)),
      waitFor(sched, http(`https://${address}:${schedPort}/healthz`, caPem)),
      waitFor(kwok, http(`http://${address}:${kwokPort}/healthz`)),
    ]);
    const api = await clientFor(dir, record);
    return { dir, address, port, caPem, api, record };
  } catch (err) {
    await stopProcesses(started);
    record.components = [];
    writeRecord(dir, record);
    throw err;
  }
}
