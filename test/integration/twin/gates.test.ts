/**
 * The twin's two gates, on (they are off by default until the next issue deploys a CCM and a
 * CNI): a node keeps `node.cloudprovider.kubernetes.io/uninitialized` and has no providerID until
 * an Equinix Metal CCM pod runs, and stays NotReady (NetworkPluginNotReady) until a CNI pod runs
 * on it. The pods here are bound to their nodes directly; kwok runs them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, twinStatus } from '../../../src/emulator/index.js';
import { wrap, type TestEmulator } from '../../harness/emulator.js';
import {
  createDevice,
  describeTwin,
  isReady,
  kubeClient,
  makeCluster,
  nodesOf,
  waitFor,
  type ClusterFixture,
  type NodeView,
} from './helpers.js';

const NAME = 'gated';
const UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';

function pod(name: string, nodeName: string, extra: Record<string, unknown>) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'kube-system' },
    spec: {
      nodeName,
      tolerations: [{ operator: 'Exists' }],
      automountServiceAccountToken: false,
      ...extra,
    },
  };
}

describeTwin('Kubernetes twin: CCM and CNI gates', () => {
  let dir: string;
  let emu: TestEmulator;
  let fx: ClusterFixture;
  const client = () => kubeClient(fx);
  const controller = `${NAME}-controller-0`;
  const worker = `${NAME}-pool-0`;
  const all = [0, 1, 2].map((i) => `${NAME}-controller-${i}`).concat(worker);
  const readyReason = (n: NodeView | undefined) =>
    n?.status.conditions?.find((c) => c.type === 'Ready')?.message;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-gates-'));
    const statePath = path.join(dir, 'state.json');
    emu = wrap(
      await startEmulator({
        port: 0,
        statePath,
        twinOptions: { requireCcm: true, requireCni: true },
      }),
      dir,
      statePath,
    );
    // Three controllers: still one control plane; controllers 1 and 2 join like workers do.
    fx = await makeCluster(emu, { name: NAME, controllers: 3, workers: 1 });
    for (const n of fx.nodes) await createDevice(emu, n.hostname, fx.userdata.get(n.hostname)!);
    await emu.control.advanceClock(10);
  }, 60_000);

  afterAll(async () => {
    await emu?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (fx) await rm(fx.assetDir, { recursive: true, force: true });
  });

  it('registers nodes uninitialised and NotReady until a CCM and a CNI run', async () => {
    const nodes = await waitFor('all nodes reporting NotReady', async () => {
      const got = await nodesOf(client()).catch(() => undefined);
      return got && all.every((n) => readyReason(got.get(n))?.includes('cni')) ? got : undefined;
    });
    const status = await twinStatus(emu.twin.dir!);
    expect(status.clusters).toHaveLength(1);
    expect(status.clusters[0]!.components).toHaveLength(5);
    for (const name of all) {
      const n = nodes.get(name)!;
      expect(isReady(n)).toBe(false);
      expect(readyReason(n)).toContain('NetworkPluginNotReady');
      expect(n.spec.providerID).toBeUndefined();
      expect((n.spec.taints ?? []).map((t) => t.key)).toContain(UNINITIALIZED);
      expect(n.metadata.labels['node.kubernetes.io/instance-type']).toBeUndefined();
    }
  });

  it('turns a node Ready once a CNI pod runs on it', async () => {
    const cni = pod('cni-worker', worker, {
      hostNetwork: true,
      containers: [{ name: 'cni', image: 'example.invalid/cni:1' }],
      volumes: [{ name: 'cni-net', hostPath: { path: '/etc/cni/net.d' } }],
    });
    await waitFor('the CNI pod to be accepted', async () => {
      const r = await client().post('/api/v1/namespaces/kube-system/pods', cni);
      return r.status === 201 || r.status === 409;
    });
    await waitFor(`${worker} Ready`, async () => isReady((await nodesOf(client())).get(worker)));
    // The controller has no CNI pod yet.
    expect(isReady((await nodesOf(client())).get(controller))).toBe(false);
  });

  it('initialises every node from the emulator once a CCM pod runs', async () => {
    const ccm = pod('ccm', controller, {
      hostNetwork: true,
      containers: [
        {
          name: 'ccm',
          image: 'example.invalid/cloud-provider-equinix-metal:v3.8.1',
          args: ['--cloud-provider=equinixmetal', '--leader-elect=false'],
        },
      ],
    });
    await waitFor('the CCM pod to be accepted', async () => {
      const r = await client().post('/api/v1/namespaces/kube-system/pods', ccm);
      return r.status === 201 || r.status === 409;
    });
    const nodes = await waitFor('every node initialised', async () => {
      const got = await nodesOf(client());
      return all.every((n) => got.get(n)?.spec.providerID) ? got : undefined;
    });
    for (const name of all) {
      const n = nodes.get(name)!;
      expect(n.spec.providerID).toMatch(/^equinixmetal:\/\/[0-9a-f-]{36}$/);
      expect((n.spec.taints ?? []).map((t) => t.key)).not.toContain(UNINITIALIZED);
      expect(n.metadata.labels).toMatchObject({
        'node.kubernetes.io/instance-type': 'c3.small.x86',
        'topology.kubernetes.io/region': 'sv',
      });
      expect(n.status.addresses?.map((a) => a.type).sort()).toEqual([
        'ExternalIP',
        'Hostname',
        'InternalIP',
      ]);
    }
  });
});
