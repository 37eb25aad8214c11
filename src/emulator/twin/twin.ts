/**
 * The Kubernetes twin: the emulator "being" the machines whose userdata is kubeadm cloud-init.
 *
 * A reconcile loop (every `pollIntervalMs` of real time) looks at the devices as the Metal API
 * shows them — state on the emulator's clock, userdata, addresses — and makes the Kubernetes side
 * follow:
 *
 * - controller 0 (the device whose kubeadm config holds an InitConfiguration) `active` → a real
 *   control plane on `<controlPlaneEndpoint host>:6443` (./control-plane.ts), plus what
 *   `kubeadm init` creates (./bootstrap.ts) and controller 0's own Node;
 * - every other kubeadm machine `active` → kubeadm's token discovery and TLS bootstrap against
 *   that apiserver (./nodes.ts `checkJoin`); only a machine that passes gets its Node;
 * - a device deprovisioning or gone → its Node is deleted; controller 0 gone → the control plane
 *   is stopped and its data removed;
 * - the gates: a node is initialised once a CCM pod runs with credentials the emulator accepts
 *   (./ccm.ts), and turns Ready once a CNI pod runs on it;
 * - webhooks of fake pods are served by a stand-in (./webhooks.ts), which the apiserver reaches
 *   through its egress selector and the twin's proxy on a Unix socket (./egress.ts).
 *
 * Processes are recorded under `<twinDir>/twin/` (./records.ts); a later twin on the same
 * directory reuses a recorded control plane that is still serving.
 */
import { resolve } from 'node:path';
import { findBinaries, type TwinBinary } from './binaries.js';
import { applyInitObjects, createTokens, parseGoDuration } from './bootstrap.js';
import {
  adoptControlPlane,
  checkInitSpec,
  recordRunning,
  startControlPlane,
  stopRecorded,
  type ControlPlaneHandle,
} from './control-plane.js';
import { ccmCredentials, type CredentialCheck } from './ccm.js';
import { isLoopbackV4 } from './network.js';
import {
  checkJoin,
  cniNodeOf,
  deleteNode,
  DEVICE_ANNOTATION,
  initializeNode,
  isCcmPod,
  markNetworkReady,
  nodeObject,
  registerNode,
  type DeviceFacts,
  type JoinCheck,
  type PodView,
} from './nodes.js';
import {
  appendTwinLog,
  clusterDir,
  listClusters,
  lockFile,
  sweepOrphans,
  tryLock,
  type ClusterRecord,
} from './records.js';
import { NETWORK_ANNOTATION, NETWORK_READY } from './stages.js';
import { MachineSpecError, parseMachineUserdata, type MachineSpec } from './userdata.js';
import { WebhookStandIn, type WebhookListenerStatus } from './webhooks.js';
import { EgressProxy, egressSocketPath } from './egress.js';

/** Options of the twin. */
export interface TwinOptions {
  /**
   * Nodes of kubelets with `cloud-provider: external` keep
   * `node.cloudprovider.kubernetes.io/uninitialized` (and get no providerID, instance-type/region
   * labels or CCM addresses) until an Equinix Metal CCM pod runs whose config is usable: the
   * API key and project id it reads (./ccm.ts) are accepted by the emulator
   * ({@link TwinSource.checkCredentials}). Default false here: nodes are initialised from the
   * emulator's data at once. The CLI turns it on (`loko emulator start`, `--emulator`).
   */
  requireCcm?: boolean;
  /**
   * Nodes stay NotReady (`NetworkPluginNotReady`) until a CNI pod runs on them. Default false
   * here: nodes turn Ready at once. The CLI turns it on (`loko emulator start`, `--emulator`).
   */
  requireCni?: boolean;
  /**
   * What `close()` does with the processes: `stop` them (default: the standalone emulator, tests)
   * or `keep` them running for the next emulator on the same twin directory (the embedded
   * emulator of the CLI; `stopTwin` stops them).
   */
  onClose?: 'stop' | 'keep';
  /** Where the binaries are (default: `LOKO_KUBE_BIN_DIR`, else the kube:build cache). */
  binDir?: string;
  /** How long each component may take to become healthy (default 180 s). */
  readyTimeoutMs?: number;
  /** Reconcile period in real milliseconds (default 500). */
  pollIntervalMs?: number;
}

/** A device as the twin sees it. */
export interface TwinDevice extends DeviceFacts {
  /** Device state on the emulator's clock (`active`, `deprovisioning`, `deleted`, …). */
  state: string;
  userdata: string;
}

/** Where the twin reads the devices from (the emulator's state, as the API would show it). */
export interface TwinSource {
  devices(): TwinDevice[];
  /**
   * Whether the Metal API would accept `apiKey` for project `projectId` (a CCM's credentials):
   * the reason of a refusal reads like the API's answer and never contains the key.
   */
  checkCredentials(apiKey: string, projectId: string): CredentialCheck;
}

interface Logger {
  info(msg: string): void;
}

interface NodeTrack {
  deviceId: string;
  name: string;
  phase: 'pending' | 'registered' | 'refused';
  reason?: string;
  nextTryAt: number;
  delayMs: number;
  deadline: number;
  initialized: boolean;
  networkReady: boolean;
  /** Passed discovery once: a re-registration (node deleted through the API) needs no token. */
  joined: boolean;
}

interface Cluster {
  address: string;
  dir: string;
  controllerDeviceId: string;
  /** The cluster's version (ClusterConfiguration), which its kubelets report. */
  kubernetesVersion: string;
  phase: 'starting' | 'running' | 'failed';
  /** The start in progress. */
  run?: Promise<void>;
  handle?: ControlPlaneHandle;
  release: () => void;
  abort: AbortController;
  failures: number;
  retryAt: number;
  nodes: Map<string, NodeTrack>;
  lastResyncAt: number;
  lastHealthAt: number;
  lastGateAt: number;
  lastWebhookAt: number;
  /** The stand-in serving the webhooks of the cluster's fake pods (./webhooks.ts). */
  webhooks: WebhookStandIn;
  /** Where the apiserver's cluster traffic arrives (./egress.ts). */
  egress?: EgressProxy;
  /** Why the running CCM cannot initialise nodes (logged once per change). */
  ccmReason?: string;
}

/** Device states in which the machine (and so its kubelet) no longer exists. */
const GONE = new Set(['deprovisioning', 'deleted']);
const RESYNC_MS = 15_000;
const HEALTH_MS = 10_000;
const GATE_MS = 2_000;
const WEBHOOK_MS = 1_000;
const DEFAULT_DISCOVERY_TIMEOUT_S = 5 * 60;

/** Live twins of this process by twin directory (so `stopTwin` can tell them). */
export const liveTwins = new Map<string, KubernetesTwin>();

/** The reconcile loop of one emulator's twin. */
export class KubernetesTwin {
  private readonly clusters = new Map<string, Cluster>();
  private readonly specs = new Map<
    string,
    { userdata: string; spec?: MachineSpec; error?: string }
  >();
  private readonly said = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  private lastDiskScan = 0;

  private constructor(
    private readonly source: TwinSource,
    readonly twinDir: string,
    private readonly binaries: Record<TwinBinary, string>,
    private readonly opts: Required<Omit<TwinOptions, 'binDir'>>,
    private readonly logger: Logger,
  ) {}

  /**
   * The twin for `twinDir`, or why there is none (binaries missing). Nothing runs until
   * {@link start}.
   */
  static create(
    source: TwinSource,
    twinDir: string,
    opts: TwinOptions,
    logger: Logger,
  ): { twin: KubernetesTwin } | { off: string } {
    const found = findBinaries(opts.binDir);
    if (!found.ok) {
      return {
        off:
          `Kubernetes twin off: ${found.missing.join(', ')} not found in ` +
          `${found.binDir ?? '(no bin dir: set LOKO_KUBE_BIN_DIR)'}; build them with ` +
          '`npm run kube:build` (docs/kube-binaries.md)',
      };
    }
    const twin = new KubernetesTwin(
      source,
      resolve(twinDir),
      found.paths,
      {
        requireCcm: opts.requireCcm ?? false,
        requireCni: opts.requireCni ?? false,
        onClose: opts.onClose ?? 'stop',
        readyTimeoutMs: opts.readyTimeoutMs ?? 180_000,
        pollIntervalMs: opts.pollIntervalMs ?? 500,
      },
      logger,
    );
    return { twin };
  }

  /** Starts the reconcile loop. */
  start(): void {
    liveTwins.set(this.twinDir, this);
    for (const dir of sweepOrphans()) {
      this.logger.info(`Kubernetes twin: stopped the processes of ${dir}, whose directory is gone`);
    }
    this.timer = setInterval(() => void this.tick(), this.opts.pollIntervalMs);
    this.timer.unref();
    void this.tick();
  }

  /**
   * Stops the loop. With `onClose: 'stop'` the control planes are stopped (their etcd data is
   * kept, so an emulator restarted on the same state resumes them); with `keep` they stay up for
   * the next emulator. A start still in progress is abandoned either way.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    for (const c of this.clusters.values()) c.abort.abort();
    await Promise.allSettled([...this.inflight]);
    if (this.opts.onClose === 'stop') {
      // Ours, and whatever else is recorded here that no other live process runs.
      for (const { dir, record } of listClusters(this.twinDir)) {
        if (!record) continue;
        const ours = this.clusters.has(record.address);
        const release = ours ? undefined : tryLock(lockFile(this.twinDir, record.address));
        if (!ours && !release) continue;
        try {
          await stopRecorded(dir, false);
        } finally {
          release?.();
        }
      }
    }
    for (const c of this.clusters.values()) {
      await c.webhooks.close();
      await c.egress?.close();
      c.handle?.api.close();
      c.release();
    }
    this.clusters.clear();
    if (liveTwins.get(this.twinDir) === this) liveTwins.delete(this.twinDir);
  }

  /** Forgets every cluster without touching processes (`stopTwin` stops them). */
  async forgetAll(): Promise<void> {
    for (const c of this.clusters.values()) c.abort.abort();
    await Promise.allSettled([...this.inflight]);
    for (const c of this.clusters.values()) {
      await c.webhooks.close();
      await c.egress?.close();
      c.handle?.api.close();
      c.release();
    }
    this.clusters.clear();
  }

  /** The webhook listeners of each running cluster, by endpoint address (for tests and status). */
  webhookListeners(): Map<string, WebhookListenerStatus[]> {
    return new Map([...this.clusters.values()].map((c) => [c.address, c.webhooks.status()]));
  }

  private say(key: string, msg: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.logger.info(msg);
  }

  private log(c: Cluster | undefined, msg: string): void {
    this.logger.info(`Kubernetes twin: ${msg}`);
    if (c) appendTwinLog(c.dir, msg);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p)).catch(() => undefined);
    return p;
  }

  private tick(): Promise<void> {
    if (this.closed || this.ticking) return this.ticking ?? Promise.resolve();
    this.ticking = this.reconcile()
      .catch((err: unknown) => this.say(`tick:${String(err)}`, `Kubernetes twin: ${String(err)}`))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** The machine spec of a device (cached per userdata). */
  private specOf(d: TwinDevice): MachineSpec | undefined {
    let entry = this.specs.get(d.id);
    if (!entry || entry.userdata !== d.userdata) {
      entry = { userdata: d.userdata };
      try {
        const spec = parseMachineUserdata(d.userdata);
        if (spec) entry.spec = spec;
      } catch (err) {
        entry.error = err instanceof MachineSpecError ? err.message : String(err);
      }
      this.specs.set(d.id, entry);
    }
    if (entry.error) {
      this.say(
        `spec:${d.id}:${entry.error}`,
        `Kubernetes twin: device ${d.hostname} (${d.id}) has kubeadm userdata the twin cannot use: ${entry.error}`,
      );
    }
    return entry.spec;
  }

  private async reconcile(): Promise<void> {
    const now = Date.now();
    const devices = this.source.devices();
    for (const id of this.specs.keys()) {
      if (!devices.some((d) => d.id === id)) this.specs.delete(id);
    }
    const machines: Array<{ device: TwinDevice; spec: MachineSpec }> = [];
    for (const device of devices) {
      const spec = this.specOf(device);
      if (!spec) continue;
      if (!isLoopbackV4(spec.endpoint.host)) {
        this.say(
          `endpoint:${device.id}`,
          `Kubernetes twin: device ${device.hostname} points at ${spec.endpoint.host}, not a ` +
            'loopback address; the twin only serves loopback endpoints',
        );
        continue;
      }
      machines.push({ device, spec });
    }

    // Control planes: one per endpoint address, owned by its controller 0.
    const initByAddress = new Map<string, { device: TwinDevice; spec: MachineSpec }>();
    for (const m of machines) {
      if (m.spec.action !== 'init' || GONE.has(m.device.state)) continue;
      const other = initByAddress.get(m.spec.endpoint.host);
      if (other && other.device.id !== m.device.id) {
        this.say(
          `dup:${m.spec.endpoint.host}`,
          `Kubernetes twin: ${other.device.hostname} and ${m.device.hostname} both run kubeadm init for ` +
            `${m.spec.endpoint.host}; the twin serves the first one`,
        );
        continue;
      }
      initByAddress.set(m.spec.endpoint.host, m);
    }
    for (const c of [...this.clusters.values()]) {
      const init = initByAddress.get(c.address);
      if (!init || init.device.id !== c.controllerDeviceId) {
        this.log(
          c,
          `controller ${c.controllerDeviceId} is gone: stopping the control plane on ${c.address}`,
        );
        await this.drop(c, true);
      }
    }
    if (now - this.lastDiskScan > RESYNC_MS) {
      this.lastDiskScan = now;
      await this.sweepDisk(devices);
    }
    for (const [address, init] of initByAddress) {
      const c = this.clusters.get(address);
      if (init.device.state !== 'active') continue;
      if (!c) this.begin(address, init.device, init.spec);
      else if (c.phase === 'failed' && now >= c.retryAt)
        this.begin(address, init.device, init.spec, c);
    }

    for (const c of this.clusters.values()) {
      if (c.phase !== 'running' || !c.handle) continue;
      try {
        await this.syncCluster(c, machines, now);
      } catch (err) {
        this.say(
          `sync:${c.address}:${String(err)}`,
          `Kubernetes twin: ${c.address}: ${String(err)}`,
        );
      }
    }
    // Joining machines with no control plane to talk to: kubeadm keeps retrying discovery.
    for (const m of machines) {
      if (m.spec.action === 'init' || m.device.state !== 'active') continue;
      if (!initByAddress.has(m.spec.endpoint.host)) {
        this.say(
          `orphan:${m.device.id}`,
          `Kubernetes twin: ${m.device.hostname} waits for an API server at ` +
            `${m.spec.endpoint.host}:${m.spec.endpoint.port} (no controller with kubeadm init there)`,
        );
      }
    }
  }

  /** Records on disk whose controller device no longer exists: stop and remove them. */
  private async sweepDisk(devices: TwinDevice[]): Promise<void> {
    const live = new Set(devices.filter((d) => !GONE.has(d.state)).map((d) => d.id));
    for (const { dir, record } of listClusters(this.twinDir)) {
      if (!record || live.has(record.controllerDeviceId) || this.clusters.has(record.address)) {
        continue;
      }
      const release = tryLock(lockFile(this.twinDir, record.address));
      if (!release) continue;
      try {
        this.logger.info(
          `Kubernetes twin: controller ${record.controllerDeviceId} of ${record.address} is gone: removing its control plane`,
        );
        await stopRecorded(dir, true);
      } finally {
        release();
      }
    }
  }

  /** Starts (or reuses) the control plane of controller 0 `device` in the background. */
  private begin(address: string, device: TwinDevice, spec: MachineSpec, prev?: Cluster): void {
    let release = prev?.release;
    if (!release) {
      release = tryLock(lockFile(this.twinDir, address));
      if (!release) {
        this.say(
          `locked:${address}`,
          `Kubernetes twin: another emulator process runs the twin of ${address} (lock ${lockFile(this.twinDir, address)})`,
        );
        return;
      }
    }
    const dir = clusterDir(this.twinDir, address);
    const c: Cluster = prev ?? {
      address,
      dir,
      controllerDeviceId: device.id,
      kubernetesVersion: spec.cluster?.kubernetesVersion || 'v0.0.0',
      phase: 'starting',
      release,
      abort: new AbortController(),
      failures: 0,
      retryAt: 0,
      nodes: new Map(),
      lastResyncAt: 0,
      lastHealthAt: Date.now(),
      lastGateAt: 0,
      lastWebhookAt: 0,
      webhooks: new WebhookStandIn(dir, (msg) => this.log(c, msg)),
    };
    c.phase = 'starting';
    c.abort = new AbortController();
    this.clusters.set(address, c);
    const server = `https://${address}:${spec.endpoint.port}`;
    const run = async () => {
      const caHash = checkInitSpec(spec);
      const egressSocket = egressSocketPath(c.dir);
      c.egress ??= await EgressProxy.listen(egressSocket, (host, port) =>
        c.webhooks.handler(host, port),
      );
      let handle = await adoptControlPlane(c.dir, device.id, caHash, egressSocket);
      if (handle) {
        this.log(c, `reusing the control plane at ${server} (${describe(handle.record)})`);
      } else {
        this.logger.info(
          `Kubernetes twin: starting a control plane for ${device.hostname} at ${server}`,
        );
        const t0 = Date.now();
        handle = await startControlPlane({
          dir: c.dir,
          spec,
          controllerDeviceId: device.id,
          binaries: this.binaries,
          dieWithParent: this.opts.onClose === 'stop',
          readyTimeoutMs: this.opts.readyTimeoutMs,
          signal: c.abort.signal,
          egressSocket,
          log: (line) => appendTwinLog(c.dir, line),
        });
        this.log(
          c,
          `control plane of ${spec.cluster?.clusterName ?? '?'} serving at ${server} after ` +
            `${((Date.now() - t0) / 1000).toFixed(1)}s (${describe(handle.record)})`,
        );
      }
      await createTokens(handle.api, spec, new Date());
      await applyInitObjects(handle.api, spec, server, handle.caPem);
      if (c.abort.signal.aborted) {
        handle.api.close();
        return;
      }
      c.handle = handle;
      c.phase = 'running';
      c.failures = 0;
      c.lastResyncAt = 0;
      c.lastHealthAt = Date.now();
    };
    c.run = this.track(
      run().catch((err: unknown) => {
        c.phase = 'failed';
        c.failures++;
        c.retryAt = Date.now() + Math.min(15_000 * c.failures, 300_000);
        if (!c.abort.signal.aborted) {
          this.log(
            c,
            `the control plane at ${server} did not start (attempt ${c.failures}; retrying in ` +
              `${Math.round((c.retryAt - Date.now()) / 1000)}s): ${(err as Error).message}`,
          );
        }
      }),
    );
  }

  /** Stops a cluster this twin manages. */
  private async drop(c: Cluster, removeData: boolean): Promise<void> {
    c.abort.abort();
    await c.run;
    await c.webhooks.close();
    await c.egress?.close();
    c.handle?.api.close();
    await stopRecorded(c.dir, removeData);
    c.release();
    this.clusters.delete(c.address);
  }

  private async syncCluster(
    c: Cluster,
    machines: Array<{ device: TwinDevice; spec: MachineSpec }>,
    now: number,
  ): Promise<void> {
    const api = c.handle!.api;
    if (now - c.lastHealthAt > HEALTH_MS) {
      c.lastHealthAt = now;
      // Only a process that is gone means a restart: a slow answer on a busy machine does not.
      if (!recordRunning(c.handle!.record)) {
        this.log(c, `a process of the control plane at ${c.address} is gone; restarting it`);
        c.handle!.api.close();
        c.handle = undefined;
        c.phase = 'failed';
        c.retryAt = now;
        return;
      }
    }
    const mine = machines.filter((m) => m.spec.endpoint.host === c.address);
    const byId = new Map(mine.map((m) => [m.device.id, m]));

    // Machines gone: their Node goes.
    for (const t of [...c.nodes.values()]) {
      const m = byId.get(t.deviceId);
      if (m && !GONE.has(m.device.state)) continue;
      if (t.phase === 'registered') {
        await deleteNode(api, t.name);
        this.log(c, `node ${t.name} deleted (device ${t.deviceId} is gone)`);
      }
      c.nodes.delete(t.deviceId);
    }

    // Resync with the API: nodes of devices that no longer exist, nodes registered earlier.
    if (now - c.lastResyncAt > RESYNC_MS) {
      c.lastResyncAt = now;
      const list = await api.get<{ items: NodeView[] }>('/api/v1/nodes');
      for (const node of list?.items ?? []) {
        const deviceId = node.metadata.annotations?.[DEVICE_ANNOTATION];
        if (!deviceId) continue;
        const m = byId.get(deviceId);
        if (!m || GONE.has(m.device.state)) {
          await deleteNode(api, node.metadata.name);
          this.log(c, `node ${node.metadata.name} deleted (device ${deviceId} is gone)`);
          c.nodes.delete(deviceId);
          continue;
        }
        const t = c.nodes.get(deviceId);
        if (t && t.phase !== 'registered') Object.assign(t, registeredFrom(node));
        if (!t)
          c.nodes.set(deviceId, {
            ...newTrack(deviceId, node.metadata.name, now, 0),
            ...registeredFrom(node),
          });
      }
      // A node deleted through the API: its kubelet registers it again (no new discovery).
      const present = new Set((list?.items ?? []).map((n) => n.metadata.name));
      for (const t of c.nodes.values()) {
        if (t.phase === 'registered' && !present.has(t.name)) {
          Object.assign(t, { phase: 'pending', nextTryAt: now, delayMs: 1000 });
          t.deadline = now + DEFAULT_DISCOVERY_TIMEOUT_S * 1000;
        }
      }
    }

    // Machines up: register them (controller 0 at once, others after discovery).
    for (const m of mine) {
      if (m.device.state !== 'active') continue;
      let t = c.nodes.get(m.device.id);
      if (!t) {
        const timeout =
          parseGoDuration(m.spec.discovery?.timeout ?? '') ?? DEFAULT_DISCOVERY_TIMEOUT_S;
        t = newTrack(m.device.id, m.spec.nodeName ?? m.device.hostname, now, timeout);
        c.nodes.set(m.device.id, t);
      }
      if (t.phase !== 'pending' || now < t.nextTryAt) continue;
      await this.tryRegister(c, t, m.device, m.spec, now);
    }

    // The gates: a CCM initialises nodes, a CNI makes them Ready.
    const waiting = [...c.nodes.values()].filter(
      (t) => t.phase === 'registered' && (!t.initialized || !t.networkReady),
    );
    if (waiting.length > 0 && now - c.lastGateAt > GATE_MS) {
      c.lastGateAt = now;
      const pods = (await api.get<{ items: PodView[] }>('/api/v1/pods'))?.items ?? [];
      // A gate turned off since a node registered (an emulator restarted with other options)
      // lets it through like a gate that was never on.
      const ccm =
        !this.opts.requireCcm ||
        (waiting.some((t) => !t.initialized) ? await this.usableCcm(c, pods) : false);
      const cniNodes = new Set(pods.map(cniNodeOf).filter((n): n is string => !!n));
      for (const t of waiting) {
        const m = byId.get(t.deviceId);
        if (!m) continue;
        if (!t.initialized && ccm && this.opts.requireCcm && t.name !== m.device.hostname) {
          // CPEM finds the device of a node without providerID by hostname = node name.
          this.say(
            `ccm-name:${c.address}:${t.name}`,
            `Kubernetes twin: the cloud controller manager cannot initialise node ${t.name}: ` +
              `no device of the project has that hostname (the machine is ${m.device.hostname}; ` +
              'CPEM looks devices up by node name)',
          );
        } else if (!t.initialized && ccm) {
          await initializeNode(api, t.name, m.device);
          t.initialized = true;
          this.log(c, `node ${t.name} initialised by the cloud controller manager`);
        }
        if (!t.networkReady && (!this.opts.requireCni || cniNodes.has(t.name))) {
          await markNetworkReady(api, t.name);
          t.networkReady = true;
          this.log(c, `node ${t.name}: CNI running, network ready`);
        }
      }
    }

    // Webhooks of fake pods: the stand-in serves them (and keeps the caBundles).
    if (now - c.lastWebhookAt >= WEBHOOK_MS) {
      c.lastWebhookAt = now;
      try {
        await c.webhooks.reconcile(api);
      } catch (err) {
        this.say(
          `webhooks:${c.address}:${String(err)}`,
          `Kubernetes twin: ${c.address}: webhook stand-in: ${String(err)}`,
        );
      }
    }
  }

  /**
   * True when a Running Equinix Metal CCM pod exists whose credentials the emulator accepts (what
   * the real CCM needs before it can look up a single device). Why not is logged once per change,
   * never with the key.
   */
  private async usableCcm(c: Cluster, pods: PodView[]): Promise<boolean> {
    const running = pods.filter(isCcmPod);
    if (running.length === 0) return false;
    const reasons: string[] = [];
    for (const pod of running) {
      const name = `${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`;
      const creds = await ccmCredentials(c.handle!.api, pod);
      const check: CredentialCheck = creds.ok
        ? this.source.checkCredentials(creds.apiKey, creds.projectId)
        : creds;
      if (check.ok) {
        if (c.ccmReason !== undefined) {
          this.log(c, `the cloud controller manager ${name} now has a usable config`);
        }
        c.ccmReason = undefined;
        return true;
      }
      reasons.push(
        `${name}: ${check.reason}` + (creds.ok ? ` (credentials from ${creds.from})` : ''),
      );
    }
    const reason = reasons.join('; ');
    if (reason !== c.ccmReason) {
      c.ccmReason = reason;
      this.log(c, `the cloud controller manager cannot initialise nodes: ${reason}`);
    }
    return false;
  }

  private async tryRegister(
    c: Cluster,
    t: NodeTrack,
    device: TwinDevice,
    spec: MachineSpec,
    now: number,
  ): Promise<void> {
    const api = c.handle!.api;
    const existing = await api.get<NodeView>(`/api/v1/nodes/${encodeURIComponent(t.name)}`);
    if (existing) {
      if (existing.metadata.annotations?.[DEVICE_ANNOTATION] === device.id) {
        Object.assign(t, registeredFrom(existing));
        return;
      }
    }
    let check: JoinCheck = { ok: true, user: 'kubeadm init' };
    if (spec.action !== 'init' && !t.joined) check = await checkJoin(api, spec);
    if (check.ok && existing) {
      // Another machine holds the name (a replaced device whose node is not cleaned up yet): the
      // kubelet keeps failing to register until it is gone.
      check = { ok: false, reason: `a node named ${t.name} exists for another machine` };
    }
    if (!check.ok) {
      if (check.reason !== t.reason) {
        t.reason = check.reason;
        this.log(c, `${device.hostname} (${device.id}) cannot join yet: ${check.reason}`);
      }
      if (now > t.deadline) {
        t.phase = 'refused';
        this.log(
          c,
          `${device.hostname} (${device.id}) never registers: kubeadm join gave up after its ` +
            `discovery timeout (${t.reason})`,
        );
        return;
      }
      t.nextTryAt = now + t.delayMs;
      t.delayMs = Math.min(t.delayMs * 2, 10_000);
      return;
    }
    if (spec.action !== 'init' && !t.joined) {
      this.log(c, `${device.hostname} (${device.id}) passed discovery as ${check.user}`);
    }
    t.joined = true;
    const initialized = !this.opts.requireCcm;
    const networkReady = !this.opts.requireCni;
    await registerNode(
      api,
      nodeObject(spec, device, {
        initialized,
        networkReady,
        kubeletVersion: c.kubernetesVersion,
      }),
    );
    Object.assign(t, { phase: 'registered', initialized, networkReady, reason: undefined });
    this.log(c, `node ${t.name} registered (device ${device.id})`);
  }
}

interface NodeView {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { providerID?: string };
}

function registeredFrom(node: NodeView): Partial<NodeTrack> {
  return {
    phase: 'registered',
    joined: true,
    initialized: !!node.spec?.providerID,
    networkReady: node.metadata.annotations?.[NETWORK_ANNOTATION] === NETWORK_READY,
    reason: undefined,
  };
}

function newTrack(deviceId: string, name: string, now: number, timeoutS: number): NodeTrack {
  return {
    deviceId,
    name,
    phase: 'pending',
    nextTryAt: now,
    delayMs: 1000,
    deadline: now + timeoutS * 1000,
    initialized: false,
    networkReady: false,
    joined: false,
  };
}

function describe(rec: ClusterRecord): string {
  return rec.components.map((p) => `${p.name} ${p.pid}`).join(', ');
}
