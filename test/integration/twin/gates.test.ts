/**
 * The twin's two gates, on (as the CLI runs them): a node keeps
 * `node.cloudprovider.kubernetes.io/uninitialized` and has no providerID until an Equinix Metal CCM
 * pod runs whose config (Secret `metal-cloud-config`, `cloud-sa.json`, mounted and passed with
 * `--cloud-config` like the upstream manifest does) holds an API key the emulator accepts for an
 * existing project, and stays NotReady (NetworkPluginNotReady) until a CNI pod runs on it. The pods
 * here are bound to their nodes directly; kwok runs them.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { twinStatus } from '../../../src/emulator/index.js';
import { type TestEmulator } from '../../harness/emulator.js';
import {
  bootTwinCluster,
  describeTwin,
  isReady,
  kubeClient,
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

  const lines: string[] = [];

  beforeAll(async () => {
    // Three controllers: still one control plane; controllers 1 and 2 join like workers do.
    ({ dir, emu, fx } = await bootTwinCluster({
      prefix: 'loko-twin-gates-',
      name: NAME,
      controllers: 3,
      workers: 1,
      gates: { requireCcm: true, requireCni: true },
      log: lines,
    }));
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

  const secretPath = '/api/v1/namespaces/kube-system/secrets';
  const cloudConfig = (apiKey: string, projectID: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'metal-cloud-config', namespace: 'kube-system' },
    stringData: {
      'cloud-sa.json': JSON.stringify({ apiKey, projectID, metro: 'sv', eipTag: 'x' }),
    },
  });
  const WRONG_KEY = 'wrongkeywrongkeywrongkey0123';

  it('leaves nodes uninitialised while the CCM runs with a key the emulator refuses', async () => {
    const r = await client().post(secretPath, cloudConfig(WRONG_KEY, emu.projectId));
    expect(r.status).toBe(201);
    // CPEM v3.8.1's layout: the Secret mounted at /etc/cloud-sa, the file passed by flag.
    const ccm = pod('ccm', controller, {
      hostNetwork: true,
      containers: [
        {
          name: 'ccm',
          image: 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1',
          command: ['./cloud-provider-equinix-metal'],
          args: [
            '--cloud-provider=equinixmetal',
            '--leader-elect=true',
            '--cloud-config=/etc/cloud-sa/cloud-sa.json',
          ],
          volumeMounts: [{ name: 'cloud-sa-volume', mountPath: '/etc/cloud-sa', readOnly: true }],
        },
      ],
      volumes: [{ name: 'cloud-sa-volume', secret: { secretName: 'metal-cloud-config' } }],
    });
    await waitFor('the CCM pod to be accepted', async () => {
      const r = await client().post('/api/v1/namespaces/kube-system/pods', ccm);
      return r.status === 201 || r.status === 409;
    });
    await waitFor('the CCM pod Running', async () => {
      const r = await client().get('/api/v1/namespaces/kube-system/pods/ccm');
      return r.body?.status?.phase === 'Running';
    });
    const refused = await waitFor('the twin to say why the CCM cannot initialise', async () =>
      lines.find((l) => l.includes('cloud controller manager cannot initialise nodes')),
    );
    expect(refused).toContain('kube-system/ccm');
    expect(refused).toContain('401 Invalid authentication token');
    expect(refused).toContain('Secret kube-system/metal-cloud-config key cloud-sa.json');
    // Never the key itself, in the logger or the twin's log file.
    expect(lines.join('\n')).not.toContain(WRONG_KEY);
    // A few gate rounds later, nothing is initialised.
    await new Promise((r) => setTimeout(r, 5000));
    const nodes = await nodesOf(client());
    for (const name of all) {
      expect(nodes.get(name)!.spec.providerID).toBeUndefined();
      expect((nodes.get(name)!.spec.taints ?? []).map((t) => t.key)).toContain(UNINITIALIZED);
    }
  });

  it('an unknown projectID is refused too', async () => {
    const del = await client().delete(`${secretPath}/metal-cloud-config`);
    expect(del.status).toBe(200);
    const unknown = '0b6a4e3c-1d2f-4a5b-9c8d-7e6f5a4b3c2d';
    const r = await client().post(secretPath, cloudConfig(emu.token, unknown));
    expect(r.status).toBe(201);
    const refused = await waitFor('the twin to name the unknown project', async () =>
      lines.find((l) => l.includes(`projectID "${unknown}" is not a project of this emulator`)),
    );
    expect(refused).not.toContain(emu.token);
    expect((await nodesOf(client())).get(controller)!.spec.providerID).toBeUndefined();
  });

  it('initialises every node from the emulator once the CCM has a project API key', async () => {
    const del = await client().delete(`${secretPath}/metal-cloud-config`);
    expect(del.status).toBe(200);
    // What loko gives the CCM: a project API key of the cluster's project.
    const key = await emu.api('POST', `/projects/${emu.projectId}/api-keys`, {
      description: 'loko:cluster=gated',
      read_only: false,
    });
    expect(key.status).toBe(201);
    const r = await client().post(secretPath, cloudConfig(key.body.token, emu.projectId));
    expect(r.status).toBe(201);
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
