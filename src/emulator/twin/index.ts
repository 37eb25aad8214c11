/**
 * The emulator's Kubernetes twin (DESIGN.md §5, docs/emulator.md "The Kubernetes twin"): devices
 * whose userdata is kubeadm cloud-init become a real control plane and kwok-managed nodes, whose
 * fake pods' webhooks the twin serves itself ("Webhooks of fake pods"). The
 * emulator starts it (`startEmulator({ twin, twinDir, twinOptions })`); these functions work on a
 * twin directory without any emulator running.
 */
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stopRecorded } from './control-plane.js';
import { probe } from './network.js';
import { isRunning } from './processes.js';
import { listClusters, lockFile, sweepOrphans, tryLock, twinRoot } from './records.js';
import { liveTwins } from './twin.js';

export { findBinaries, kubeBinDir, TWIN_BINARIES } from './binaries.js';
export { KubernetesTwin, type TwinDevice, type TwinOptions, type TwinSource } from './twin.js';
export type { CredentialCheck } from './ccm.js';
export { WEBHOOK_FIELD_MANAGER, type WebhookListenerStatus } from './webhooks.js';

/** One process of a twin cluster, as recorded. */
export interface TwinComponentStatus {
  name: string;
  pid: number;
  /** The pid still runs the recorded binary. */
  running: boolean;
  ports: Record<string, number>;
  logFile: string;
}

/** One cluster of a twin directory. */
export interface TwinClusterStatus {
  /** `https://<Elastic IP>:6443`. */
  server: string;
  address: string;
  port: number;
  clusterName: string;
  controllerDeviceId: string;
  /** The cluster's directory (PKI, etcd data, logs). */
  dir: string;
  components: TwinComponentStatus[];
  /** Every recorded component runs (and there are some). */
  running: boolean;
  /** The apiserver answers `/readyz` with `ok`, verified against the cluster CA. */
  serving: boolean;
}

/** What {@link twinStatus} reports. */
export interface TwinStatus {
  twinDir: string;
  clusters: TwinClusterStatus[];
}

/** The clusters recorded under `twinDir`, their processes and whether the API serves. */
export async function twinStatus(twinDir: string): Promise<TwinStatus> {
  const clusters: TwinClusterStatus[] = [];
  for (const { dir, record } of listClusters(twinDir)) {
    if (!record) continue;
    const components = record.components.map((c) => ({
      name: c.name,
      pid: c.pid,
      running: isRunning(c.pid, c.binary),
      ports: c.ports,
      logFile: c.logFile,
    }));
    const running = components.length > 0 && components.every((c) => c.running);
    let serving = false;
    if (components.some((c) => c.name === 'kube-apiserver' && c.running)) {
      try {
        const ca = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
        const r = await probe(`https://${record.address}:${record.port}/readyz`, ca);
        serving = 'status' in r && r.status === 200 && r.body.trim() === 'ok';
      } catch {
        serving = false;
      }
    }
    clusters.push({
      server: `https://${record.address}:${record.port}`,
      address: record.address,
      port: record.port,
      clusterName: record.clusterName,
      controllerDeviceId: record.controllerDeviceId,
      dir,
      components,
      running,
      serving,
    });
  }
  return { twinDir: resolve(twinDir), clusters };
}

/**
 * Stops every process recorded under `twinDir` (SIGTERM, then SIGKILL of each process group) and
 * removes the twin's data (`<twinDir>/twin`). Meant for `cluster destroy`, after the devices are
 * gone: a running emulator whose controller 0 is still active would start its control plane
 * again. Returns how many processes were stopped.
 */
export async function stopTwin(twinDir: string): Promise<{ stopped: number }> {
  const dir = resolve(twinDir);
  await liveTwins.get(dir)?.forgetAll();
  sweepOrphans();
  let stopped = 0;
  for (const { dir: clusterDir, record } of listClusters(dir)) {
    stopped += record?.components.filter((c) => isRunning(c.pid, c.binary)).length ?? 0;
    const address = record?.address;
    const release = address ? tryLock(lockFile(dir, address)) : undefined;
    try {
      await stopRecorded(clusterDir, true);
    } finally {
      release?.();
    }
  }
  rmSync(twinRoot(dir), { recursive: true, force: true });
  return { stopped };
}
