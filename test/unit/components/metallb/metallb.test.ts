/**
 * MetalLB: config decoding (address pools validated with file:line, selectors, tolerations) and
 * render from the real pinned manifest (the module cache's bytes).
 */
import { describe, expect, it } from 'vitest';
import type { ComponentContext } from '../../../../src/components/types.js';
import {
  METALLB_MANIFEST,
  metallb,
  renderMetallb,
  type MetallbConfig,
} from '../../../../src/components/metallb/index.js';
import { networkOf, overlaps, parseCidr } from '../../../../src/components/metallb/cidr.js';
import { readyAddresses } from '../../../../src/components/metallb/ready.js';
import type { KubeObject } from '../../../../src/kube/objects.js';
import { describeUpstream, pinnedUpstream } from '../../../harness/upstream/index.js';
import { decodeComponent } from '../decode-helper.js';

const block = (body: string) => `component "metallb" {\n${body}\n}\n`;

describe('metallb config', () => {
  it('decodes pools sorted by name, selectors and tolerations', async () => {
    const { config, where } = await decodeComponent(
      metallb,
      block(`  address_pools = {
    public  = ["147.75.40.16/28", "2604:1380:4641:c500::/64"]
    default = ["147.75.80.0/30"]
  }
  controller_node_selectors = { "node-role.kubernetes.io/control-plane" = "" }
  speaker_node_selectors    = { "loko.dev/bgp-enabled" = "true" }
  controller_toleration {
    key      = "node-role.kubernetes.io/control-plane"
    operator = "Exists"
    effect   = "NoSchedule"
  }
  speaker_toleration {
    key                = "dedicated"
    value              = "lb"
    effect             = "NoExecute"
    toleration_seconds = 30
  }`),
    );
    expect(where).toEqual([]);
    expect(config).toEqual<MetallbConfig>({
      addressPools: [
        { name: 'default', addresses: ['147.75.80.0/30'] },
        { name: 'public', addresses: ['147.75.40.16/28', '2604:1380:4641:c500::/64'] },
      ],
      controllerNodeSelectors: { 'node-role.kubernetes.io/control-plane': '' },
      speakerNodeSelectors: { 'loko.dev/bgp-enabled': 'true' },
      controllerTolerations: [
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
      speakerTolerations: [
        {
          key: 'dedicated',
          operator: 'Equal',
          value: 'lb',
          effect: 'NoExecute',
          tolerationSeconds: 30,
        },
      ],
    });
  });

  it('requires address_pools, pointing at the block', async () => {
    const { where } = await decodeComponent(metallb, block(''));
    expect(where).toEqual(['1:1 error: Missing required attribute "address_pools"']);
  });

  it('reports each bad pool entry at its own line and column', async () => {
    const { where, diagnostics } = await decodeComponent(
      metallb,
      block(`  address_pools = {
    a = ["10.0.0.0/24", "nonsense", "10.1.0.7/24"]
    b = []
    c = ["10.0.0.128/25"]
    d = ["fd00::1/64", "10.2.0.0/33"]
  }`),
    );
    expect(where).toEqual([
      '3:25 error: Invalid CIDR "nonsense" in address pool "a"',
      '3:37 error: CIDR "10.1.0.7/24" in address pool "a" has host bits set',
      '4:9 error: Empty address pool "b"',
      '5:10 error: CIDR "10.0.0.128/25" in address pool "c" overlaps "10.0.0.0/24" of pool "a"',
      '6:10 error: CIDR "fd00::1/64" in address pool "d" has host bits set',
      '6:24 error: Invalid CIDR "10.2.0.0/33" in address pool "d"',
    ]);
    const hostBits = diagnostics.find((d) => d.summary.includes('10.1.0.7/24'))!;
    expect(hostBits.detail).toBe('Write the prefix\'s network address: "10.1.0.0/24".');
    const v6 = diagnostics.find((d) => d.summary.includes('fd00::1/64'))!;
    expect(v6.detail).toContain('"fd00::/64"');
    const overlap = diagnostics.find((d) => d.summary.includes('overlaps'))!;
    expect(overlap.detail).toContain('components.lokocfg:3:10');
  });

  it('refuses an empty pool map and a pool name that is no DNS label', async () => {
    expect((await decodeComponent(metallb, block('  address_pools = {}'))).where).toEqual([
      '2:19 error: Invalid value for "address_pools"',
    ]);
    const bad = await decodeComponent(
      metallb,
      block('  address_pools = { Pub_1 = ["10.0.0.0/8"] }'),
    );
    expect(bad.where).toHaveLength(1);
    expect(bad.where[0]).toMatch(/^2:21 error: /);
  });

  it('refuses contradicting tolerations', async () => {
    const { where } = await decodeComponent(
      metallb,
      block(`  address_pools = { a = ["10.0.0.0/24"] }
  speaker_toleration {
    operator = "Exists"
    value    = "x"
  }
  speaker_toleration {
    operator = "Equal"
  }
  controller_toleration {
    key                = "k"
    effect             = "NoSchedule"
    toleration_seconds = 5
  }`),
    );
    // Controller blocks are decoded before speaker blocks.
    expect(where).toEqual([
      '13:5 error: Invalid toleration',
      '5:5 error: Invalid toleration',
      '7:3 error: Invalid toleration',
    ]);
  });
});

describe('cidr helpers', () => {
  it('parses, aligns and compares prefixes of both families', () => {
    expect(networkOf(parseCidr('192.0.2.77/26')!)).toBe('192.0.2.64/26');
    expect(networkOf(parseCidr('2001:db8:0:0:1::5/64')!)).toBe('2001:db8::/64');
    expect(networkOf(parseCidr('2001:db8:1:2:3:4:5:6/128')!)).toBe('2001:db8:1:2:3:4:5:6/128');
    expect(parseCidr('10.0.0.0')).toBeUndefined();
    expect(parseCidr('10.0.0.0/08')).toBeUndefined();
    expect(parseCidr('::ffff:10.0.0.0/120')!.first).toBe(0xffff0a000000n);
    expect(overlaps(parseCidr('10.0.0.0/8')!, parseCidr('10.255.0.0/16')!)).toBe(true);
    expect(overlaps(parseCidr('10.0.0.0/25')!, parseCidr('10.0.0.128/25')!)).toBe(false);
    expect(overlaps(parseCidr('0.0.0.0/0')!, parseCidr('::/0')!)).toBe(false);
  });
});

describe('readyAddresses', () => {
  const slice = (endpoints: unknown[]): KubeObject & { endpoints?: never } =>
    ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 's' },
      endpoints,
    }) as never;
  it('counts ready (and unknown-readiness) addresses only', () => {
    expect(readyAddresses([])).toBe(0);
    expect(
      readyAddresses([slice([{ addresses: ['127.0.0.9'], conditions: { ready: false } }])]),
    ).toBe(0);
    expect(
      readyAddresses([
        slice([
          { addresses: ['127.0.0.9'], conditions: { ready: true } },
          { addresses: ['127.0.0.10'], conditions: {} },
        ]),
      ]),
    ).toBe(2);
  });
});

describeUpstream('metallb render (pinned metallb-native.yaml)', [METALLB_MANIFEST], () => {
  const ctx = (): ComponentContext => ({
    upstream: pinnedUpstream([METALLB_MANIFEST]),
    components: new Set(['metallb', 'flannel', 'cloud-provider-equinix-metal']),
  });
  const cfg: MetallbConfig = {
    addressPools: [
      { name: 'default', addresses: ['147.75.80.0/30'] },
      { name: 'public', addresses: ['147.75.40.16/28'] },
    ],
    controllerNodeSelectors: { 'node-role.kubernetes.io/control-plane': '' },
    speakerNodeSelectors: { 'loko.dev/bgp-enabled': 'true' },
    controllerTolerations: [
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    ],
    speakerTolerations: [
      // Already in upstream's list: not added twice.
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Equal', value: 'lb', effect: 'NoSchedule' },
    ],
  };
  const find = (objs: KubeObject[], kind: string, name: string) =>
    objs.find((o) => o.kind === kind && o.metadata.name === name)!;
  type Pod = {
    nodeSelector?: Record<string, string>;
    tolerations?: unknown[];
    containers: { image: string }[];
  };
  const pod = (o: KubeObject) => (o.spec as { template: { spec: Pod } }).template.spec;

  it('renders the upstream objects, the pools and one advertisement, deterministically', () => {
    const objs = renderMetallb(cfg, ctx());
    expect(renderMetallb(cfg, ctx())).toEqual(objs);
    const kinds = objs.map((o) => o.kind);
    expect(kinds.filter((k) => k === 'CustomResourceDefinition')).toHaveLength(9);
    expect(objs.filter((o) => o.kind === 'IPAddressPool')).toEqual([
      {
        apiVersion: 'metallb.io/v1beta1',
        kind: 'IPAddressPool',
        metadata: { name: 'default', namespace: 'metallb-system' },
        spec: { addresses: ['147.75.80.0/30'] },
      },
      {
        apiVersion: 'metallb.io/v1beta1',
        kind: 'IPAddressPool',
        metadata: { name: 'public', namespace: 'metallb-system' },
        spec: { addresses: ['147.75.40.16/28'] },
      },
    ]);
    expect(objs.filter((o) => o.kind === 'BGPAdvertisement')).toEqual([
      {
        apiVersion: 'metallb.io/v1beta1',
        kind: 'BGPAdvertisement',
        metadata: { name: 'loko', namespace: 'metallb-system' },
        spec: { ipAddressPools: ['default', 'public'] },
      },
    ]);
    // No BGPPeer: CPEM creates them per node.
    expect(kinds).not.toContain('BGPPeer');
    expect(kinds).not.toContain('L2Advertisement');
    // Every namespaced object is in metallb-system.
    for (const o of objs) {
      if (o.metadata.namespace !== undefined) expect(o.metadata.namespace).toBe('metallb-system');
    }
  });

  it('patches node selectors and tolerations into the controller and the speakers', () => {
    const objs = renderMetallb(cfg, ctx());
    const controller = pod(find(objs, 'Deployment', 'controller'));
    expect(controller.nodeSelector).toEqual({
      'kubernetes.io/os': 'linux',
      'node-role.kubernetes.io/control-plane': '',
    });
    expect(controller.tolerations).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(controller.containers[0]!.image).toBe('quay.io/metallb/controller:v0.16.2');
    const speaker = pod(find(objs, 'DaemonSet', 'speaker'));
    expect(speaker.nodeSelector).toEqual({
      'kubernetes.io/os': 'linux',
      'loko.dev/bgp-enabled': 'true',
    });
    expect(speaker.tolerations).toEqual([
      { effect: 'NoSchedule', key: 'node-role.kubernetes.io/master', operator: 'Exists' },
      { effect: 'NoSchedule', key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' },
      { key: 'dedicated', operator: 'Equal', value: 'lb', effect: 'NoSchedule' },
    ]);
    expect(speaker.containers[0]!.image).toBe('quay.io/metallb/speaker:v0.16.2');
  });

  it("keeps upstream untouched without selectors, drops the generator's null creationTimestamp", () => {
    const plain = renderMetallb(
      {
        ...cfg,
        controllerNodeSelectors: {},
        speakerNodeSelectors: {},
        controllerTolerations: [],
        speakerTolerations: [],
      },
      ctx(),
    );
    expect(pod(find(plain, 'Deployment', 'controller')).nodeSelector).toEqual({
      'kubernetes.io/os': 'linux',
    });
    expect(pod(find(plain, 'Deployment', 'controller')).tolerations).toBeUndefined();
    const vwc = find(plain, 'ValidatingWebhookConfiguration', 'metallb-webhook-configuration');
    expect('creationTimestamp' in vwc.metadata).toBe(false);
  });

  it('uses the native speaker (no FRR container) and declares its CR group and webhook readiness', () => {
    const objs = renderMetallb(cfg, ctx());
    const speaker = pod(find(objs, 'DaemonSet', 'speaker'));
    expect(speaker.containers.map((c) => c.image)).toEqual(['quay.io/metallb/speaker:v0.16.2']);
    expect(metallb.customResourceGroups).toEqual(['metallb.io']);
    expect(metallb.ready?.map((r) => r.description)).toEqual([
      'MetalLB webhook serves (metallb-system/metallb-webhook-service has a ready endpoint)',
      'MetalLB webhook trusted (metallb-webhook-configuration carries its caBundle)',
    ]);
    expect(metallb.bootstrap).toBe(false);
    expect(metallb.namespace).toBe('metallb-system');
  });
});
