/** A real PKI in a temporary asset dir plus cluster/node bootstrap inputs, for userdata tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ClusterConfig } from '../../../src/config/types.js';
import { BootstrapToken, ensureClusterPki, type ClusterPki } from '../../../src/pki/index.js';
import {
  clusterBootstrap,
  nodeBootstraps,
  type ClusterBootstrap,
  type ClusterBootstrapInput,
  type NodeBootstrap,
} from '../../../src/platforms/equinixmetal/userdata/index.js';
import { cluster as clusterConfig, pool } from '../platforms/fixtures.js';

/** The control-plane Elastic IP of the fixtures: loopback, like the emulator's. */
export const ENDPOINT = '127.0.0.10';

export interface Fixture {
  assetDir: string;
  pki: ClusterPki;
  token: BootstrapToken;
  /** Builds a ClusterBootstrap for `config` with the fixture's PKI and token. */
  bootstrap(
    config: ClusterConfig,
    over?: Partial<ClusterBootstrapInput>,
  ): { cluster: ClusterBootstrap; nodes: NodeBootstrap[] };
  cleanup(): Promise<void>;
}

export async function makeFixture(): Promise<Fixture> {
  const assetDir = await mkdtemp(path.join(os.tmpdir(), 'loko-userdata-'));
  const pki = await ensureClusterPki(assetDir);
  const token = BootstrapToken.generate();
  return {
    assetDir,
    pki,
    token,
    bootstrap(config, over = {}) {
      const cluster = clusterBootstrap({
        clusterName: config.clusterName,
        controllerCount: config.controllerCount,
        controlPlaneEndpoint: ENDPOINT,
        pki,
        caCertHash: pki.caCertHash,
        bootstrapToken: token,
        ...over,
      });
      return { cluster, nodes: nodeBootstraps(config) };
    },
    cleanup: () => rm(assetDir, { recursive: true, force: true }),
  };
}

/** Three controllers and two pools: one with labels and taints, one with BGP off. */
export function haConfig(): ClusterConfig {
  return clusterConfig({
    controllerCount: 3,
    os: 'ubuntu_24_04',
    workerPools: [
      pool('general', {
        count: 2,
        labels: { 'example.com/tier': 'web', 'node.kubernetes.io/disk': '' },
        taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
      }),
      pool('edge', { count: 1, disableBgp: true }),
    ],
  });
}

/** One controller, one worker. */
export function singleConfig(): ClusterConfig {
  return clusterConfig({
    controllerCount: 1,
    os: 'ubuntu_24_04',
    workerPools: [pool('general', { count: 1 })],
  });
}
