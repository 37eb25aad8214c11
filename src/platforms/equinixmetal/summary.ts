/**
 * The cluster summary printed after apply and written to `<asset_dir>/cluster.json`: what exists,
 * without secrets.
 */
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Device } from '../../metal/types.js';
import type { DesiredState } from './desired.js';
import { deviceMetro, publicIPv4 } from './observe.js';
import { ensureAssetDir } from './asset-dir.js';

/** One device line of the summary. */
export interface DeviceSummary {
  hostname: string;
  id: string;
  role: 'controller' | 'worker';
  pool?: string;
  state: string;
  publicIPv4?: string;
  plan: string;
  metro?: string;
}

/** The summary document (also the `-o json` result of `cluster apply`). */
export interface ClusterSummary {
  clusterName: string;
  projectId: string;
  assetDir: string;
  /** The control-plane Elastic IP: the Kubernetes API is `https://<it>:6443`. */
  controlPlaneEndpoint?: string;
  devices: DeviceSummary[];
  /** ISO 8601 time the summary was taken. */
  updatedAt: string;
}

/** Builds the summary in desired order from the devices found by hostname. */
export function summarize(
  desired: DesiredState,
  devices: Map<string, Device>,
  assetDir: string,
  now: number,
  controlPlaneEndpoint?: string,
): ClusterSummary {
  return {
    clusterName: desired.clusterName,
    projectId: desired.projectId,
    assetDir,
    ...(controlPlaneEndpoint ? { controlPlaneEndpoint } : {}),
    devices: desired.devices.map((want) => {
      const d = devices.get(want.hostname);
      return {
        hostname: want.hostname,
        id: d?.id ?? '',
        role: want.role,
        ...(want.pool ? { pool: want.pool } : {}),
        state: d?.state ?? 'missing',
        publicIPv4: d ? publicIPv4(d) : undefined,
        plan: d?.plan?.slug ?? want.plan,
        metro: d ? deviceMetro(d) : want.metro,
      };
    }),
    updatedAt: new Date(now).toISOString(),
  };
}

/** The summary file's path. */
export function summaryPath(assetDir: string): string {
  return path.join(assetDir, 'cluster.json');
}

/** Writes `<asset_dir>/cluster.json` atomically (temp file + rename), creating the directory. */
export async function writeSummary(summary: ClusterSummary): Promise<string> {
  const file = summaryPath(summary.assetDir);
  await ensureAssetDir(summary.assetDir);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(summary, null, 2)}\n`);
  await rename(tmp, file);
  return file;
}
