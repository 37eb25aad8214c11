/**
 * The CPEM component's pure render: container args, the `cloud-sa.json` keys, tolerations and
 * affinity, the exact RBAC rules (packet-ccm #109 split), the config checksum that rolls pods only
 * on a changed config, placeholders without a key, and the block's decode.
 */
import { describe, expect, it } from 'vitest';
import { cloudProviderEquinixMetal as cpem } from '../../../../src/components/cloud-provider-equinix-metal/index.js';
import type { CpemConfig } from '../../../../src/components/cloud-provider-equinix-metal/config.js';
import type { ComponentContext } from '../../../../src/components/types.js';
import type { KubeObject } from '../../../../src/kube/objects.js';
import { decodeComponent } from '../decode-helper.js';

const PROJECT = '0a1b2c3d-0000-4000-8000-000000000001';
const KEY = 'key-token-of-the-cluster';

function ctx(over: Partial<ComponentContext> = {}): ComponentContext {
  return {
    clusterName: 'demo',
    projectId: PROJECT,
    metro: 'sv',
    controlPlaneEndpoint: {
      address: '147.75.1.1',
      port: 6443,
      eipTag: 'loko:control-plane-endpoint=demo',
    },
    metalApiKey: KEY,
    upstream: new Map(),
    components: new Set(['cloud-provider-equinix-metal', 'flannel']),
    ...over,
  };
}

const defaults: CpemConfig = {
  image: 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1',
  logLevel: 2,
};

function find(objs: KubeObject[], kind: string, name?: string): KubeObject {
  const o = objs.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind} ${name ?? ''}`);
  return o;
}

function cloudSa(objs: KubeObject[]): Record<string, unknown> {
  const s = find(objs, 'Secret', 'metal-cloud-config');
  const b64 = (s.data as Record<string, string>)['cloud-sa.json']!;
  return JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as Record<string, unknown>;
}

type PodSpec = {
  containers: Array<Record<string, unknown> & { args: string[] }>;
  tolerations: unknown[];
  affinity: unknown;
  volumes: unknown[];
  [k: string]: unknown;
};
function podOf(objs: KubeObject[]): { spec: PodSpec; annotations: Record<string, string> } {
  const ds = find(objs, 'DaemonSet', 'cloud-provider-equinix-metal');
  const tpl = (
    ds.spec as { template: { metadata: { annotations: Record<string, string> }; spec: PodSpec } }
  ).template;
  return { spec: tpl.spec, annotations: tpl.metadata.annotations };
}

describe('cloud-provider-equinix-metal render', () => {
  it('is a bootstrap component in kube-system with no upstream manifests', () => {
    expect(cpem).toMatchObject({
      name: 'cloud-provider-equinix-metal',
      namespace: 'kube-system',
      bootstrap: true,
      dependsOn: [],
      upstream: [],
    });
  });

  it('renders exactly these objects', () => {
    const objs = cpem.render(defaults, ctx());
    expect(objs.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'ServiceAccount/kube-system/cloud-provider-equinix-metal',
      'Role/kube-system/cloud-provider-equinix-metal',
      'RoleBinding/kube-system/cloud-provider-equinix-metal',
      'RoleBinding/kube-system/cloud-provider-equinix-metal:extension-apiserver-authentication-reader',
      'ClusterRole//cloud-provider-equinix-metal',
      'ClusterRoleBinding//cloud-provider-equinix-metal',
      'Secret/kube-system/metal-cloud-config',
      'DaemonSet/kube-system/cloud-provider-equinix-metal',
    ]);
  });

  it('runs CPEM v3.8.1 with the upstream args, leader election and the config file', () => {
    const { spec } = podOf(cpem.render(defaults, ctx()));
    const c = spec.containers[0]!;
    expect(c.image).toBe('quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1');
    expect(c.command).toEqual(['./cloud-provider-equinix-metal']);
    expect(c.args).toEqual([
      '--cloud-provider=equinixmetal',
      '--leader-elect=true',
      '--authentication-skip-lookup=true',
      '--cloud-config=/etc/cloud-sa/cloud-sa.json',
      '--v=2',
    ]);
    expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '50Mi' } });
    expect(c.volumeMounts).toEqual([
      { name: 'cloud-config', mountPath: '/etc/cloud-sa', readOnly: true },
    ]);
    expect(spec.volumes).toEqual([
      { name: 'cloud-config', secret: { secretName: 'metal-cloud-config' } },
    ]);
    expect(spec).toMatchObject({
      serviceAccountName: 'cloud-provider-equinix-metal',
      hostNetwork: true,
      dnsPolicy: 'Default',
      priorityClassName: 'system-cluster-critical',
    });
    const logged = podOf(cpem.render({ ...defaults, logLevel: 5 }, ctx())).spec.containers[0]!;
    expect(logged.args.at(-1)).toBe('--v=5');
  });

  it('tolerates uninitialized, control-plane, master, not-ready and CriticalAddonsOnly', () => {
    const { spec } = podOf(cpem.render(defaults, ctx()));
    expect(spec.tolerations).toEqual([
      {
        key: 'node.cloudprovider.kubernetes.io/uninitialized',
        value: 'true',
        effect: 'NoSchedule',
      },
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'CriticalAddonsOnly', operator: 'Exists' },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it('runs on control-plane nodes only (any of the three label forms)', () => {
    const { spec } = podOf(cpem.render(defaults, ctx()));
    expect(spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            {
              matchExpressions: [{ key: 'kubernetes.io/role', operator: 'In', values: ['master'] }],
            },
            {
              matchExpressions: [
                { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' },
              ],
            },
            { matchExpressions: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists' }] },
          ],
        },
      },
    });
  });

  it('writes cloud-sa.json with the cluster key, project, metro, eipTag, port and BGP selector, in a fixed order', () => {
    const objs = cpem.render(defaults, ctx());
    const json = cloudSa(objs);
    expect(Object.keys(json)).toEqual([
      'apiKey',
      'projectID',
      'metro',
      'eipTag',
      'apiServerPort',
      'bgpNodeSelector',
    ]);
    expect(json).toEqual({
      apiKey: KEY,
      projectID: PROJECT,
      metro: 'sv',
      eipTag: 'loko:control-plane-endpoint=demo',
      apiServerPort: 6443,
      bgpNodeSelector: 'loko.dev/bgp-enabled=true',
    });
    const secret = find(objs, 'Secret', 'metal-cloud-config');
    expect(Object.keys(secret.data as object)).toEqual(['cloud-sa.json']);
    expect(secret.type).toBe('Opaque');
    expect(secret.metadata.annotations).toBeUndefined();
  });

  it('load balancer: none by default, also with the metallb component (it owns its pools); explicit choices', () => {
    expect(cloudSa(cpem.render(defaults, ctx())).loadbalancer).toBeUndefined();
    const withMetallb = ctx({ components: new Set(['cloud-provider-equinix-metal', 'metallb']) });
    expect(cloudSa(cpem.render(defaults, withMetallb)).loadbalancer).toBeUndefined();
    expect(
      Object.keys(cloudSa(cpem.render({ ...defaults, loadBalancer: 'metallb' }, withMetallb))).at(
        -1,
      ),
    ).toBe('loadbalancer');
    const lb = (l: CpemConfig['loadBalancer'], c = ctx()) =>
      cloudSa(cpem.render({ ...defaults, loadBalancer: l }, c)).loadbalancer;
    expect(lb('kube-vip')).toBe('kube-vip://');
    expect(lb('empty')).toBe('empty://');
    expect(lb('metallb')).toBe('metallb:///metallb-system?crdConfiguration=true');
    expect(lb('disabled', withMetallb)).toBeUndefined();
  });

  it('pins the RBAC rules: a kube-system Role for leases and endpoint writes, the rest cluster-wide', () => {
    const objs = cpem.render(defaults, ctx());
    expect(find(objs, 'Role').rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['create', 'get', 'list', 'watch', 'update', 'patch'],
      },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['create', 'update', 'patch'] },
    ]);
    const base = [
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      { apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['*'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      {
        apiGroups: [''],
        resources: ['services'],
        verbs: ['get', 'list', 'patch', 'update', 'watch', 'create'],
      },
      {
        apiGroups: [''],
        resources: ['services/status'],
        verbs: ['list', 'patch', 'update', 'watch'],
      },
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['create', 'get', 'list', 'watch', 'update', 'patch'],
      },
      {
        apiGroups: [''],
        resources: ['events'],
        verbs: ['create', 'get', 'list', 'watch', 'update', 'patch'],
      },
    ];
    expect(find(objs, 'ClusterRole').rules).toEqual(base);
    const withMetallb = cpem.render({ ...defaults, loadBalancer: 'metallb' }, ctx());
    expect(find(withMetallb, 'ClusterRole').rules).toEqual([
      ...base,
      {
        apiGroups: ['metallb.io'],
        resources: ['ipaddresspools', 'bgppeers', 'bgpadvertisements'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    for (const l of ['kube-vip', 'empty', 'disabled'] as const) {
      expect(
        find(cpem.render({ ...defaults, loadBalancer: l }, ctx()), 'ClusterRole').rules,
      ).toEqual(base);
    }
    const sa = {
      kind: 'ServiceAccount',
      name: 'cloud-provider-equinix-metal',
      namespace: 'kube-system',
    };
    expect(find(objs, 'RoleBinding', 'cloud-provider-equinix-metal')).toMatchObject({
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'cloud-provider-equinix-metal',
      },
      subjects: [sa],
    });
    expect(
      find(
        objs,
        'RoleBinding',
        'cloud-provider-equinix-metal:extension-apiserver-authentication-reader',
      ),
    ).toMatchObject({
      metadata: { namespace: 'kube-system' },
      roleRef: { kind: 'Role', name: 'extension-apiserver-authentication-reader' },
      subjects: [sa],
    });
    expect(find(objs, 'ClusterRoleBinding')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'cloud-provider-equinix-metal' },
      subjects: [sa],
    });
  });

  it('annotates the pod template with the config sha256: same config, same template; changed config, new one', () => {
    const a = podOf(cpem.render(defaults, ctx())).annotations['checksum/config'];
    const b = podOf(cpem.render(defaults, ctx())).annotations['checksum/config'];
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    expect(cpem.render(defaults, ctx())).toEqual(cpem.render(defaults, ctx()));
    const rotated = podOf(cpem.render(defaults, ctx({ metalApiKey: 'another' }))).annotations[
      'checksum/config'
    ];
    expect(rotated).not.toBe(a);
    const lb = podOf(cpem.render({ ...defaults, loadBalancer: 'empty' }, ctx())).annotations[
      'checksum/config'
    ];
    expect(lb).not.toBe(a);
    // The image or log level roll the pods by themselves; they are not config.
    expect(
      podOf(cpem.render({ ...defaults, logLevel: 4 }, ctx())).annotations['checksum/config'],
    ).toBe(a);
  });

  it('without a cluster or key: block values, else placeholders named on the Secret; no eipTag', () => {
    const bare: ComponentContext = { upstream: new Map(), components: new Set() };
    const objs = cpem.render(defaults, bare);
    expect(cloudSa(objs)).toEqual({
      apiKey: 'loko-placeholder-not-configured',
      projectID: 'loko-placeholder-not-configured',
      bgpNodeSelector: 'loko.dev/bgp-enabled=true',
    });
    expect(find(objs, 'Secret').metadata.annotations).toEqual({
      'loko.dev/placeholder-keys': 'apiKey,projectID',
    });
    const own = cpem.render(
      { ...defaults, apiKey: 'users-key', projectId: PROJECT, metro: 'da' },
      bare,
    );
    expect(cloudSa(own)).toEqual({
      apiKey: 'users-key',
      projectID: PROJECT,
      metro: 'da',
      bgpNodeSelector: 'loko.dev/bgp-enabled=true',
    });
    expect(find(own, 'Secret').metadata.annotations).toBeUndefined();
    // The cluster's own key wins over a block api_key.
    expect(cloudSa(cpem.render({ ...defaults, apiKey: 'users-key' }, ctx())).apiKey).toBe(KEY);
  });
});

describe('cloud-provider-equinix-metal block', () => {
  it('an empty block decodes to the defaults (load balancer left to render)', async () => {
    const d = await decodeComponent(cpem, 'component "cloud-provider-equinix-metal" {}\n');
    expect(d.where).toEqual([]);
    expect(d.config).toEqual(defaults);
  });

  it('decodes every attribute', async () => {
    const d = await decodeComponent(
      cpem,
      `component "cloud-provider-equinix-metal" {
  load_balancer = "kube-vip"
  image         = "registry.example/cpem:v3.8.1"
  log_level     = 4
  api_key       = "secret"
  project_id    = "${PROJECT.toUpperCase()}"
  metro         = "DA"
}
`,
    );
    expect(d.where).toEqual([]);
    expect(d.config).toEqual({
      loadBalancer: 'kube-vip',
      image: 'registry.example/cpem:v3.8.1',
      logLevel: 4,
      apiKey: 'secret',
      projectId: PROJECT,
      metro: 'da',
    });
  });

  it('reports bad values where they are written', async () => {
    const d = await decodeComponent(
      cpem,
      `component "cloud-provider-equinix-metal" {
  load_balancer = "emlb"
  log_level     = 20
  project_id    = "nope"
}
`,
    );
    expect(d.where).toEqual([
      '2:19 error: Invalid value for "load_balancer"',
      '4:19 error: Invalid value for "project_id"',
      '3:19 error: log_level 20 is above 10',
    ]);
  });
});
