/**
 * The quick start ends with a Kubernetes API and its components (issues 3 and 4): `cluster apply
 * --emulator` provisions the machines, the emulator's Kubernetes twin plays them (a real control
 * plane on the control-plane Elastic IP, kwok nodes that keep the uninitialized taint until a CCM
 * pod runs and stay NotReady until a CNI pod runs), and apply waits for the API, writes the
 * kubeconfig, waits for the nodes to register, applies the CCM and flannel, waits for Ready, then
 * applies MetalLB (its custom resources through the twin's webhook stand-in). The pinned upstream
 * manifests come from a loopback mirror serving the Go module cache's bytes. Then real kubectl
 * sees every machine initialised and Ready with its pool labels; a re-run changes nothing (no
 * resourceVersion moves); a changed MetalLB pool keeps MetalLB's UIDs and leaves the CCM alone;
 * `component render` redacts what the live Secret holds; `component delete metallb` removes
 * exactly MetalLB; `loko health` and `loko kubeconfig --merge` work; destroy deletes the API key
 * and leaves no twin process.
 *
 * Needs the binaries of `npm run kube:build` (docs/kube-binaries.md) and /usr/bin/kubectl:
 * without them the suite skips with a notice, and fails under CI=true (docs/testing.md).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { stopTwin } from '../../src/emulator/index.js';
import { cloudProviderEquinixMetal } from '../../src/components/cloud-provider-equinix-metal/index.js';
import { flannel } from '../../src/components/flannel/index.js';
import { metallb } from '../../src/components/metallb/index.js';
import { checkBinaries, isCI, missingNotice } from '../harness/kube/binaries.js';
import {
  startManifestMirror,
  upstreamUnavailable,
  type ManifestMirror,
} from '../harness/upstream/index.js';
import { baseEnv, loko, quickstartCopy, requireBuild } from './helpers.js';

const run = promisify(execFile);
const KUBECTL = '/usr/bin/kubectl';
const TWIN = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

const HOSTS = [
  'quickstart-controller-0',
  'quickstart-edge-0',
  'quickstart-general-0',
  'quickstart-general-1',
];

const UPSTREAM = [...flannel.upstream, ...metallb.upstream, ...cloudProviderEquinixMetal.upstream];
const { binDir, missing } = checkBinaries(TWIN);
const kubectlMissing = !existsSync(KUBECTL);
const noUpstream = upstreamUnavailable(UPSTREAM);
const unavailable = missing.length > 0 || kubectlMissing || noUpstream !== undefined;
if (unavailable) {
  const notice = kubectlMissing
    ? `${KUBECTL} is missing (apt-get install kubectl, or a kubectl binary there)`
    : noUpstream !== undefined
      ? `the pinned upstream manifests are not in the Go module cache (npm run kube:build): ${noUpstream}`
      : missingNotice(binDir, missing);
  if (isCI()) throw new Error(`the Kubernetes e2e suite cannot run under CI: ${notice}`);
  console.warn(`skipping the Kubernetes e2e suite: ${notice}`);
}

interface NodeList {
  items: Array<{
    metadata: { name: string; labels: Record<string, string> };
    spec: { providerID?: string; taints?: Array<{ key: string; value?: string; effect: string }> };
    status: { conditions: Array<{ type: string; status: string }> };
  }>;
}

describe.skipIf(unavailable)('cluster apply --emulator ends with a Kubernetes API', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  let c: string[];
  let mirror: ManifestMirror;
  let cacheHome: string;
  // The twin on (kube:build's binaries), manifests from the loopback mirror only: an empty
  // per-user cache so the run cannot take them from anywhere else.
  let env: NodeJS.ProcessEnv;
  const kubeconfig = () => path.join(work.assets, 'auth', 'kubeconfig');
  const kubectl = async (...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', kubeconfig(), ...args], { env })).stdout;
  /** Processes whose command line names this test's asset dir (the twin's data lives there). */
  const twinProcesses = async (): Promise<string[]> => {
    const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
    return stdout.split('\n').filter((l) => l.includes(work.assets));
  };

  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
    c = ['-c', work.dir, '--emulator'];
    mirror = await startManifestMirror(UPSTREAM);
    cacheHome = await mkdtemp(path.join(os.tmpdir(), 'loko-e2e-cache-'));
    env = baseEnv({
      LOKO_KUBE_BIN_DIR: binDir,
      LOKO_MANIFEST_MIRROR: mirror.url,
      XDG_CACHE_HOME: cacheHome,
    });
  });
  afterAll(async () => {
    // Whatever happened above: no twin process outlives the suite.
    if (work) await stopTwin(path.join(work.assets, 'emulator'));
    await work?.cleanup();
    await mirror?.close();
    if (cacheHome) await rm(cacheHome, { recursive: true, force: true });
  });

  /** The kinds the components apply; MetalLB's only while its CRDs are installed. */
  const componentKinds = async (): Promise<string> => {
    const base =
      'namespaces,serviceaccounts,secrets,configmaps,services,daemonsets,deployments,roles,rolebindings,clusterroles,clusterrolebindings,customresourcedefinitions,validatingwebhookconfigurations';
    const metallbKinds = await kubectl('api-resources', '--api-group=metallb.io', '-o', 'name');
    return metallbKinds.includes('ipaddresspools.metallb.io')
      ? `${base},ipaddresspools.metallb.io,bgpadvertisements.metallb.io`
      : base;
  };
  /** `namespace/kind/name -> resourceVersion` of every object loko applied for the components. */
  const lokoObjects = async (): Promise<Map<string, { rv: string; uid: string }>> => {
    const kinds = await componentKinds();
    const list = JSON.parse(
      await kubectl('get', kinds, '-A', '-l', 'app.kubernetes.io/managed-by=loko', '-o', 'json'),
    ) as {
      items: Array<{
        kind: string;
        metadata: { namespace?: string; name: string; resourceVersion: string; uid: string };
      }>;
    };
    return new Map(
      list.items.map((o) => [
        `${o.metadata.namespace ?? ''}/${o.kind}/${o.metadata.name}`,
        { rv: o.metadata.resourceVersion, uid: o.metadata.uid },
      ]),
    );
  };
  const componentOf = async (component: string): Promise<string[]> =>
    [...(await lokoObjectsOf(component)).keys()].sort();
  const lokoObjectsOf = async (component: string) => {
    const all = await lokoObjects();
    const labelled = JSON.parse(
      await kubectl(
        'get',
        await componentKinds(),
        '-A',
        '-l',
        `loko.dev/component=${component}`,
        '-o',
        'json',
      ),
    ) as { items: Array<{ kind: string; metadata: { namespace?: string; name: string } }> };
    const keys = new Set(
      labelled.items.map((o) => `${o.metadata.namespace ?? ''}/${o.kind}/${o.metadata.name}`),
    );
    return new Map([...all].filter(([k]) => keys.has(k)));
  };

  it('apply waits for the API, writes the kubeconfig and waits for every node', async () => {
    const r = await loko(['cluster', 'apply', ...c, '--yes', '--timeout', '5'], { env });
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);
    for (const phase of [
      'Reserve the control-plane Elastic IP',
      'Wait for the Kubernetes API',
      'Write the admin kubeconfig',
      'Wait for the nodes to register',
      "Ensure the cluster's Metal API key",
      'Apply the bootstrap components',
      'Wait for the nodes to be Ready',
      'Apply the components',
    ])
      expect(r.stderr).toContain(phase);
    expect(r.stderr).toMatch(/cloud-provider-equinix-metal \d+ created/);
    expect(r.stderr).toMatch(/flannel \d+ created/);
    expect(r.stderr).toMatch(/metallb \d+ created/);
    // Both pinned manifests came through the mirror (and were verified by digest).
    expect(mirror.requests.sort()).toEqual(
      [...flannel.upstream, ...metallb.upstream]
        .map((m) => `/${new URL(m.url).host}${new URL(m.url).pathname}`)
        .sort(),
    );
    expect(r.stdout).toContain(`Kubeconfig:  ${kubeconfig()}`);
    expect(r.stdout).toContain(`kubectl --kubeconfig ${kubeconfig()} get nodes`);
    // Userdata, tokens and keys never reach the output.
    for (const secret of ['#cloud-config', 'BEGIN', 'token-secret', 'kubeadm.yaml'])
      expect(r.stdout + r.stderr).not.toContain(secret);
    expect((await stat(kubeconfig())).mode & 0o777).toBe(0o600);
  });

  it('kubectl lists every machine Ready with its pool labels and loko.dev/bgp-enabled', async () => {
    const list = JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as NodeList;
    const nodes = new Map(list.items.map((n) => [n.metadata.name, n]));
    expect([...nodes.keys()].sort()).toEqual(HOSTS);
    for (const n of nodes.values()) {
      expect(n.status.conditions.find((x) => x.type === 'Ready')?.status, n.metadata.name).toBe(
        'True',
      );
    }
    const label = (name: string, key: string) => nodes.get(name)!.metadata.labels[key];
    expect(label('quickstart-controller-0', 'loko.dev/bgp-enabled')).toBe('false');
    expect(label('quickstart-general-0', 'loko.dev/bgp-enabled')).toBe('true');
    expect(label('quickstart-general-1', 'loko.dev/pool')).toBe('general');
    expect(label('quickstart-general-1', 'example.com/pool')).toBe('general');
    expect(label('quickstart-edge-0', 'loko.dev/bgp-enabled')).toBe('false');
    expect(label('quickstart-edge-0', 'example.com/role')).toBe('quickstart-ingress');
    expect(nodes.get('quickstart-edge-0')!.spec.taints).toContainEqual({
      key: 'example.com/edge',
      value: 'true',
      effect: 'NoSchedule',
    });
    // The CCM initialised every node: providerID, metro and plan labels, no uninitialized taint.
    for (const n of nodes.values()) {
      expect(n.spec.providerID, n.metadata.name).toMatch(/^equinixmetal:\/\/[0-9a-f-]{36}$/);
      expect(n.metadata.labels['topology.kubernetes.io/region'], n.metadata.name).toBe('sv');
      expect(n.metadata.labels['node.kubernetes.io/instance-type'], n.metadata.name).toBe(
        'c3.small.x86',
      );
      expect(
        (n.spec.taints ?? []).map((t) => t.key),
        n.metadata.name,
      ).not.toContain('node.cloudprovider.kubernetes.io/uninitialized');
    }
    // The kubeconfig points at the control-plane Elastic IP and verifies the CA.
    const text = await readFile(kubeconfig(), 'utf8');
    expect(text).toMatch(/server: "https:\/\/127\.\d+\.\d+\.\d+:6443"/);
    expect(text).toContain('certificate-authority-data');
    expect(text).not.toContain('insecure-skip-tls-verify');
  });

  it('the components run: the CCM with the cluster key, flannel on every node, MetalLB with its pool', async () => {
    const ds = JSON.parse(await kubectl('get', 'daemonsets', '-A', '-o', 'json')) as {
      items: Array<{
        metadata: { namespace: string; name: string };
        status: { numberReady: number };
      }>;
    };
    const ready = new Map(
      ds.items.map((d) => [`${d.metadata.namespace}/${d.metadata.name}`, d.status.numberReady]),
    );
    expect(ready.get('kube-system/cloud-provider-equinix-metal')).toBe(1);
    expect(ready.get('kube-flannel/kube-flannel-ds')).toBe(4);
    const pools = JSON.parse(
      await kubectl('get', 'ipaddresspools.metallb.io', '-n', 'metallb-system', '-o', 'json'),
    ) as { items: Array<{ metadata: { name: string }; spec: { addresses: string[] } }> };
    expect(pools.items.map((p) => [p.metadata.name, p.spec.addresses])).toEqual([
      ['default', ['203.0.113.16/28']],
    ]);
    // The CCM's credentials: the cluster's own project key, never a placeholder.
    const secret = JSON.parse(
      await kubectl('get', 'secret', '-n', 'kube-system', 'metal-cloud-config', '-o', 'json'),
    ) as { data: Record<string, string> };
    const cloud = JSON.parse(Buffer.from(secret.data['cloud-sa.json']!, 'base64').toString()) as {
      apiKey: string;
      projectID: string;
      eipTag: string;
    };
    expect(cloud.apiKey).toMatch(/\S{16,}/);
    expect(cloud.apiKey).not.toMatch(/placeholder|redacted/i);
    expect(cloud.eipTag).toBe('loko:control-plane-endpoint=quickstart');
  });

  it('component render redacts the Secret unless --show-secrets, which shows what is live', async () => {
    const live = JSON.parse(
      await kubectl('get', 'secret', '-n', 'kube-system', 'metal-cloud-config', '-o', 'json'),
    ) as { data: Record<string, string> };
    const redacted = await loko(['component', 'render', 'cloud-provider-equinix-metal', ...c], {
      env,
    });
    expect(redacted.code).toBe(0);
    expect(redacted.stdout).toContain('cloud-sa.json: <redacted>');
    const key = JSON.parse(Buffer.from(live.data['cloud-sa.json']!, 'base64').toString()) as {
      apiKey: string;
    };
    expect(redacted.stdout + redacted.stderr).not.toContain(key.apiKey);
    const shown = await loko(
      ['component', 'render', 'cloud-provider-equinix-metal', ...c, '--show-secrets'],
      { env },
    );
    expect(shown.code).toBe(0);
    const docs = parseAllDocuments(shown.stdout).map((d) => d.toJS() as Record<string, unknown>);
    const rendered = docs.find(
      (d) => d.kind === 'Secret' && (d.metadata as { name: string }).name === 'metal-cloud-config',
    ) as { data?: Record<string, string>; stringData?: Record<string, string> };
    const renderedJson =
      rendered.stringData?.['cloud-sa.json'] ??
      Buffer.from(rendered.data!['cloud-sa.json']!, 'base64').toString();
    expect(JSON.parse(renderedJson)).toEqual(
      JSON.parse(Buffer.from(live.data['cloud-sa.json']!, 'base64').toString()),
    );
  });

  it('a re-run changes nothing; plan exits 0; health is green', async () => {
    const before = await lokoObjects();
    expect(before.size).toBeGreaterThan(40);
    const again = await loko(['cluster', 'apply', ...c, '--yes', '-o', 'json'], { env });
    expect(again.code).toBe(0);
    const doc = JSON.parse(again.stdout) as {
      changes: boolean;
      mutations: unknown[];
      kubernetes: { nodes: Array<{ name: string; ready: boolean }> };
    };
    expect(doc.changes).toBe(false);
    expect(doc.mutations).toEqual([]);
    expect(doc.kubernetes.nodes.filter((n) => n.ready).map((n) => n.name)).toEqual(HOSTS);
    // No object loko applied moved: server-side apply of unchanged objects is a no-op.
    expect(await lokoObjects()).toEqual(before);
    expect((await loko(['cluster', 'plan', ...c], { env })).code).toBe(0);

    const health = await loko(['health', '-c', work.dir, '-o', 'json'], { env });
    expect(health.code).toBe(0);
    const report = JSON.parse(health.stdout) as {
      healthy: boolean;
      nodes: Array<{ status: string }>;
    };
    expect(report.healthy).toBe(true);
    expect(report.nodes.map((n) => n.status)).toEqual(['Ready', 'Ready', 'Ready', 'Ready']);
  });

  it('a changed MetalLB pool keeps every MetalLB UID and leaves the CCM untouched', async () => {
    const before = await lokoObjects();
    const cpemBefore = await lokoObjectsOf('cloud-provider-equinix-metal');
    const metallbBefore = await lokoObjectsOf('metallb');
    expect(cpemBefore.size).toBeGreaterThan(5);
    const file = path.join(work.dir, 'components.lokocfg');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('203.0.113.16/28', '203.0.113.32/28'));
    const r = await loko(['cluster', 'apply', ...c, '--yes'], { env });
    expect(r.code).toBe(0);
    const after = await lokoObjects();
    for (const [k, v] of metallbBefore) expect(after.get(k)?.uid, k).toBe(v.uid);
    for (const [k, v] of cpemBefore) expect(after.get(k), k).toEqual(v);
    const changed = [...before].filter(([k, v]) => after.get(k)?.rv !== v.rv).map(([k]) => k);
    expect(changed).toEqual(['metallb-system/IPAddressPool/default']);
    const pools = JSON.parse(
      await kubectl('get', 'ipaddresspools.metallb.io', '-n', 'metallb-system', '-o', 'json'),
    ) as { items: Array<{ spec: { addresses: string[] } }> };
    expect(pools.items.map((p) => p.spec.addresses)).toEqual([['203.0.113.32/28']]);
  });

  it('component delete metallb removes exactly MetalLB; a second run is a no-op', async () => {
    const others = [
      ...(await lokoObjectsOf('cloud-provider-equinix-metal')),
      ...(await lokoObjectsOf('flannel')),
    ];
    expect((await componentOf('metallb')).length).toBeGreaterThan(20);
    const r = await loko(['component', 'delete', 'metallb', ...c, '--yes'], { env });
    expect(r.code).toBe(0);
    // Only the namespace stays (kept unless --delete-namespace).
    expect(await componentOf('metallb')).toEqual(['/Namespace/metallb-system']);
    const after = await lokoObjects();
    for (const [k, v] of others) expect(after.get(k), k).toEqual(v);
    const again = await loko(['component', 'delete', 'metallb', ...c, '--yes'], { env });
    expect(again.code).toBe(0);
    expect(await lokoObjects()).toEqual(after);
  });

  it('loko kubeconfig prints it and merges it without overwriting a context', async () => {
    const printed = await loko(['kubeconfig', '-c', work.dir], { env });
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(await readFile(kubeconfig(), 'utf8'));

    const target = path.join(path.dirname(work.dir), 'merged-kubeconfig');
    const merged = await loko(['kubeconfig', '-c', work.dir, '--merge', target], { env });
    expect(merged.code).toBe(0);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    const nodes = await run(KUBECTL, ['--kubeconfig', target, 'get', 'nodes', '-o', 'name'], {
      env,
    });
    expect(nodes.stdout.trim().split('\n')).toHaveLength(4);
  });

  it('destroy stops the twin and leaves no process behind', async () => {
    expect((await twinProcesses()).length).toBeGreaterThan(0);
    const r = await loko(['cluster', 'destroy', ...c, '--yes'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('4 devices, 1 IP reservation and 1 API key deleted');
    expect(await twinProcesses()).toEqual([]);
    const health = await loko(['health', '-c', work.dir], { env });
    expect(health.code).toBe(1);
    expect(health.stderr).toContain('does not answer');
  });
});
