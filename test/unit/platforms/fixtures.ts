/** Typed cluster configs for platform unit tests. */
import type { ClusterConfig, SourceIndex, WorkerPoolConfig } from '../../../src/config/types.js';

export function pool(name: string, over: Partial<WorkerPoolConfig> = {}): WorkerPoolConfig {
  return {
    name,
    count: 2,
    nodeType: 'c3.small.x86',
    metro: 'sv',
    os: 'ubuntu_22_04',
    labels: {},
    taints: [],
    disableBgp: false,
    tags: [],
    reservationIds: {},
    reservationIdsDefault: '',
    ...over,
  };
}

export function cluster(over: Partial<ClusterConfig> = {}): ClusterConfig {
  return {
    platform: 'equinixmetal',
    clusterName: 'demo',
    projectId: '6b5e4ad8-0f8c-4bd0-a1c3-5b5f0e0c9a11',
    metro: 'sv',
    assetDir: '/tmp/loko-unit-assets',
    controllerCount: 1,
    controllerType: 'c3.small.x86',
    os: 'ubuntu_22_04',
    sshPubkeys: ['ssh-ed25519 AAAAC3Nza alice@laptop'],
    tags: ['team:infra'],
    billingCycle: 'hourly',
    reservationIds: {},
    reservationIdsDefault: '',
    kubernetesVersion: 'v1.36.3',
    podCidr: '10.2.0.0/16',
    serviceCidr: '10.3.0.0/16',
    workerPools: [pool('general'), pool('edge', { count: 1, disableBgp: true })],
    ...over,
  };
}

/** A source index pointing every key at a line of `/cfg/cluster.lokocfg`. */
export function sources(keys: Record<string, number>): SourceIndex {
  const m: SourceIndex = new Map();
  for (const [k, line] of Object.entries(keys)) {
    m.set(k, {
      file: '/cfg/cluster.lokocfg',
      start: { line, column: 3 },
      end: { line, column: 20 },
    });
  }
  return m;
}
