/**
 * A real Kubernetes control plane for tests: etcd + kube-apiserver, and optionally
 * kube-controller-manager, kube-scheduler and kwok with one fake node (for rollouts, namespace
 * deletion, service accounts). Everything listens on 127.0.0.1 only, on free ports, with a
 * throw-away CA; the kubeconfig verifies that CA.
 *
 *   const cp = await startControlPlane({ controllers: true });
 *   // cp.kubeconfigPath, cp.server, cp.nodeName ...
 *   await cp.stop();
 *
 * Tests normally do not call this: the integration project's globalSetup starts one control plane
 * per run (see ./global-setup.ts and docs/testing.md).
 *
 * Network safety: webhook and aggregated-API calls are routed to endpoint addresses
 * (`--enable-aggregator-routing=true`: kube-apiserver then resolves services for admission
 * webhooks, CRD conversion webhooks and APIServices through their endpoints, not their cluster IP),
 * the service range is inside 127.0.0.0/8, kwok's node IP and pod CIDR are loopback, and every
 * component binds 127.0.0.1. ./sockets.ts checks the result.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../../src/kube/client.js';
import { writeKubeconfig } from '../../../src/kube/kubeconfig.js';
import type { KubeObject } from '../../../src/kube/objects.js';
import { checkBinaries, CONTROLLER_BINARIES, CORE_BINARIES, kubeBinDir } from './binaries.js';
import { createPki, type HarnessPki } from './pki.js';
import {
  HARNESS_ROOT,
  killGroupsNow,
  spawnComponent,
  stopGroups,
  sweepStale,
  writeOwner,
  type Component,
} from './processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Service cluster IP range: loopback, so even a misrouted cluster-IP dial stays on the machine. */
export const SERVICE_CIDR = '127.96.0.0/16';
/** Pod IPs kwok hands out: loopback as well. */
export const POD_CIDR = '127.244.0.0/16';
/** Name of the fake node kwok manages when controllers run. */
export const FAKE_NODE = 'kwok-node-0';

/** Options of `startControlPlane`. */
export interface ControlPlaneOptions {
  /** Where the binaries are (default: `kubeBinDir()`). */
  binDir?: string;
  /** Also run kube-controller-manager, kube-scheduler and kwok with one fake node (default true). */
  controllers?: boolean;
  /** Parent of the harness directory (default: `HARNESS_ROOT` under the OS temp dir). */
  root?: string;
  /** How long each component may take to become healthy (default 90 s). */
  readyTimeoutMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** Milliseconds each start-up step took. */
export interface ControlPlaneTimings {
  pkiMs: number;
  etcdMs: number;
  apiserverMs: number;
  controllersMs: number;
  totalMs: number;
}

/** A running control plane. */
export interface ControlPlane {
  /** Harness directory (PKI, data, logs, kubeconfig); removed by `stop`. */
  dir: string;
  /** Admin kubeconfig (0600), verifying the harness CA. */
  kubeconfigPath: string;
  /** `https://127.0.0.1:<port>`. */
  server: string;
  caPem: string;
  ports: Record<string, number>;
  components: { name: string; pid: number; binary: string; logFile: string }[];
  controllers: boolean;
  /** The kwok-managed fake node (Ready), when controllers run. */
  nodeName: string | undefined;
  timings: ControlPlaneTimings;
  /** Stops every component (SIGTERM, then SIGKILL of its process group) and removes `dir`. */
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

/** Free TCP ports on 127.0.0.1 (all held open until every one is allocated, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import('node:net').Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as import('node:net').AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

interface Probe {
  url: string;
  tls?: { ca: string; cert?: string; key?: string };
}

/** GET `url` once; resolves with status and body, or the error text. */
function probe(p: Probe): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const opts = { timeout: 2000, ...(p.tls ?? {}) };
    const req = (p.url.startsWith('https:') ? httpsRequest : httpRequest)(p.url, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

async function tail(file: string, lines = 30): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Thrown when a component does not start; carries the tail of its log. */
export class ControlPlaneStartError extends Error {
  constructor(
    message: string,
    readonly component: string,
    readonly logTail: string,
  ) {
    super(`${message}\n--- last lines of ${component}'s log ---\n${logTail}`);
    this.name = 'ControlPlaneStartError';
  }
}

async function waitHealthy(
  comp: Component,
  check: () => Promise<boolean | string>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not checked yet';
  for (let delay = 50; ; delay = Math.min(delay * 1.5, 500)) {
    if (comp.exited) {
      throw new ControlPlaneStartError(
        `${comp.name} exited during start-up (${comp.exited})`,
        comp.name,
        await tail(comp.logFile),
      );
    }
    const r = await check();
    if (r === true) return;
    last = typeof r === 'string' ? r : last;
    if (Date.now() > deadline) {
      throw new ControlPlaneStartError(
        `${comp.name} not healthy after ${timeoutMs / 1000}s (last check: ${last})`,
        comp.name,
        await tail(comp.logFile),
      );
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

const httpOk = (p: Probe, want?: (body: string) => boolean) => async () => {
  const r = await probe(p);
  if ('error' in r) return r.error;
  if (r.status !== 200) return `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
  return want ? want(r.body) || r.body.slice(0, 200) : true;
};

/**
 * Starts a control plane (retrying once on a port race). Throws `ControlPlaneStartError` with the
 * failing component's log tail; nothing is left running after a failure.
 */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      const portRace =
        err instanceof ControlPlaneStartError && /address already in use/.test(err.logTail);
      if (!portRace || attempt >= 3) throw err;
      opts.log?.(`port race on start-up (${(err as Error).message.split('\n')[0]}); retrying`);
    }
  }
}

async function startOnce(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const t0 = Date.now();
  const binDir = opts.binDir ?? kubeBinDir();
  const controllers = opts.controllers ?? true;
  const need = controllers ? [...CORE_BINARIES, ...CONTROLLER_BINARIES] : [...CORE_BINARIES];
  const { missing } = checkBinaries(need, binDir);
  if (missing.length) throw new Error(`missing binaries in ${binDir}: ${missing.join(', ')}`);
  const timeout = opts.readyTimeoutMs ?? 90_000;
  const log = opts.log ?? (() => {});
  const root = opts.root ?? HARNESS_ROOT;

  sweepStale(root).forEach((d) => log(`removed stale harness ${d}`));
  await mkdir(root, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(root, `cp-${Date.now()}-`));
  const components: Component[] = [];
  const owner = () =>
    writeOwner(dir, {
      ownerPid: process.pid,
      components: components.map((c) => ({ name: c.name, pid: c.pid, binary: c.binary })),
    });
  await owner();
  const onExit = () => killGroupsNow(components.map((c) => c.pid));
  process.on('exit', onExit);
  let stopped = false;
  const stop = async (o: { keepDir?: boolean } = {}) => {
    if (stopped) return;
    stopped = true;
    // Nothing in a test control plane is worth a graceful shutdown: short grace, then SIGKILL.
    await stopGroups(
      components.map((c) => c.pid),
      1000,
    );
    process.off('exit', onExit);
    if (!o.keepDir) await rm(dir, { recursive: true, force: true });
  };
  const start = async (name: string, args: string[]) => {
    const comp = spawnComponent(name, join(binDir, name), args, join(dir, 'logs', `${name}.log`));
    components.push(comp);
    await owner();
    return comp;
  };

  try {
    await mkdir(join(dir, 'logs'), { mode: 0o700 });
    const tPki = Date.now();
    const [pki, portList] = await Promise.all([createPki(dir), freePorts(6)]);
    const [etcdClient, etcdPeer, apiserver, kcm, scheduler, kwok] = portList as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const ports = { etcdClient, etcdPeer, apiserver, kcm, scheduler, kwok };
    const pkiMs = Date.now() - tPki;

    // etcd
    const tEtcd = Date.now();
    const etcd = await start('etcd', [
      '--name=default',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await waitHealthy(
      etcd,
      httpOk({ url: `http://127.0.0.1:${etcdClient}/health` }, (b) => /"health":\s*"true"/.test(b)),
      timeout,
    );
    const etcdMs = Date.now() - tEtcd;

    // kube-apiserver
    const tApi = Date.now();
    const api = await start('kube-apiserver', apiserverArgs(pki, ports, controllers));
    const tls = { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem };
    await waitHealthy(
      api,
      httpOk({ url: `https://127.0.0.1:${apiserver}/readyz`, tls }, (b) => b.trim() === 'ok'),
      timeout,
    );
    const apiserverMs = Date.now() - tApi;
    const server = `https://127.0.0.1:${apiserver}`;
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeKubeconfig(kubeconfigPath, {
      server,
      caPem: pki.caPem,
      clusterName: 'loko-test',
      user: { clientCertificatePem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem },
    });

    // controllers
    const tCtl = Date.now();
    let nodeName: string | undefined;
    if (controllers) {
      const common = [
        `--kubeconfig=${kubeconfigPath}`,
        `--authentication-kubeconfig=${kubeconfigPath}`,
        `--authorization-kubeconfig=${kubeconfigPath}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      ];
      const stagesFile = join(dir, 'kwok-stages.yaml');
      await writeFile(stagesFile, await readFile(join(HERE, 'kwok-stages.yaml')));
      const [kcmProc, schedProc, kwokProc] = [
        await start('kube-controller-manager', [
          ...common,
          `--secure-port=${kcm}`,
          `--service-account-private-key-file=${pki.saPrivate}`,
          `--root-ca-file=${pki.caCert}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--allocate-node-cidrs=false',
          '--kube-api-qps=1000',
          '--kube-api-burst=1000',
          '--concurrent-deployment-syncs=10',
          '--concurrent-replicaset-syncs=10',
        ]),
        await start('kube-scheduler', [...common, `--secure-port=${scheduler}`]),
        await start('kwok', [
          `--kubeconfig=${kubeconfigPath}`,
          `--config=${stagesFile}`,
          '--manage-all-nodes=true',
          '--node-ip=127.0.0.1',
          `--cidr=${POD_CIDR}`,
          `--server-address=127.0.0.1:${kwok}`,
          `--node-port=${kwok}`,
        ]),
      ] as const;
      await Promise.all([
        waitHealthy(
          kcmProc,
          httpOk({ url: `https://127.0.0.1:${kcm}/healthz`, tls: { ca: pki.caPem } }),
          timeout,
        ),
        waitHealthy(
          schedProc,
          httpOk({ url: `https://127.0.0.1:${scheduler}/healthz`, tls: { ca: pki.caPem } }),
          timeout,
        ),
        waitHealthy(kwokProc, httpOk({ url: `http://127.0.0.1:${kwok}/healthz` }), timeout),
      ]);
      nodeName = FAKE_NODE;
      const client = KubeClient.fromFile(kubeconfigPath);
      await client.apply(fakeNode(nodeName), { fieldManager: 'loko-test-harness' });
      await waitHealthy(
        kwokProc,
        async () => {
          const node = await client.get({ apiVersion: 'v1', kind: 'Node', name: FAKE_NODE });
          const conds = (node?.status as { conditions?: { type: string; status: string }[] })
            ?.conditions;
          const ready = conds?.find((c) => c.type === 'Ready')?.status;
          const taints = (node?.spec as { taints?: unknown[] } | undefined)?.taints ?? [];
          return ready === 'True' && taints.length === 0
            ? true
            : `node Ready=${ready ?? 'unknown'}, ${taints.length} taints`;
        },
        timeout,
      );
    }
    const controllersMs = Date.now() - tCtl;

    return {
      dir,
      kubeconfigPath,
      server,
      caPem: pki.caPem,
      ports,
      components: components.map(({ name, pid, binary, logFile }) => ({
        name,
        pid,
        binary,
        logFile,
      })),
      controllers,
      nodeName,
      timings: { pkiMs, etcdMs, apiserverMs, controllersMs, totalMs: Date.now() - t0 },
      stop,
    };
  } catch (err) {
    await stop({ keepDir: false });
    throw err;
  }
}

function apiserverArgs(
  pki: HarnessPki,
  ports: { etcdClient: number; apiserver: number },
  controllers: boolean,
): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    // A loopback advertise address is refused by the endpoint/lease reconcilers (and the
    // `kubernetes` Endpoints object rejects loopback IPs): no reconciler.
    '--endpoint-reconciler-type=none',
    `--secure-port=${ports.apiserver}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.saPublic}`,
    `--service-account-signing-key-file=${pki.saPrivate}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    // Admission webhooks, CRD conversion webhooks and aggregated APIs are called on the
    // service's endpoint addresses, never on a cluster IP routed off the machine.
    '--enable-aggregator-routing=true',
    // The aggregator's identity towards aggregated API servers (and the CA they trust for it).
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
    `--proxy-client-key-file=${pki.frontProxyClientKey}`,
    '--allow-privileged=true',
    '--profiling=false',
    // Without kube-controller-manager nobody creates the `default` service account.
    ...(controllers ? [] : ['--disable-admission-plugins=ServiceAccount']),
  ];
}

function fakeNode(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
    spec: {},
  };
}
