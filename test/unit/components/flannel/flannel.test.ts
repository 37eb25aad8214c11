/**
 * flannel: net-conf.json from the pod CIDR (VXLAN), the optional VXLAN port, and the DaemonSet
 * shape the emulator's twin recognises as a CNI (host network + hostPath /etc/cni/net.d).
 */
import { describe, expect, it } from 'vitest';
import {
  FLANNEL_MANIFEST,
  flannel,
  renderFlannel,
  renderNetConf,
} from '../../../../src/components/flannel/index.js';
import type { ComponentContext } from '../../../../src/components/types.js';
import { DEFAULT_POD_CIDR } from '../../../../src/config/defaults.js';
import type { KubeObject } from '../../../../src/kube/objects.js';
import { describeUpstream, pinnedUpstream } from '../../../harness/upstream/index.js';
import { decodeComponent } from '../decode-helper.js';

const UPSTREAM_NET_CONF = `{
  "Network": "10.244.0.0/16",
  "EnableNFTables": false,
  "Backend": {
    "Type": "vxlan"
  }
}
`;

describe('renderNetConf', () => {
  it('sets Network to the pod CIDR and keeps the other keys and the VXLAN backend', () => {
    expect(renderNetConf(UPSTREAM_NET_CONF, '10.2.0.0/16', {})).toBe(`{
  "Network": "10.2.0.0/16",
  "EnableNFTables": false,
  "Backend": {
    "Type": "vxlan"
  }
}
`);
  });

  it('forces the VXLAN backend and sets its port when configured', () => {
    const out = JSON.parse(
      renderNetConf('{"Network":"x","Backend":{"Type":"host-gw"}}', '10.9.0.0/16', {
        vxlanPort: 4789,
      }),
    ) as unknown;
    expect(out).toEqual({ Network: '10.9.0.0/16', Backend: { Type: 'vxlan', Port: 4789 } });
  });

  it('refuses a net-conf.json that is not JSON', () => {
    expect(() => renderNetConf('{', '10.2.0.0/16', {})).toThrow(/net-conf.json is not JSON/);
  });
});

describe('flannel config', () => {
  it('takes an empty block and a VXLAN port', async () => {
    expect((await decodeComponent(flannel, 'component "flannel" {}\n')).config).toEqual({});
    const d = await decodeComponent(flannel, 'component "flannel" {\n  vxlan_port = 4789\n}\n');
    expect(d.where).toEqual([]);
    expect(d.config).toEqual({ vxlanPort: 4789 });
  });

  it('refuses a port outside 1..65535 at its line', async () => {
    const d = await decodeComponent(flannel, 'component "flannel" {\n  vxlan_port = 70000\n}\n');
    expect(d.where).toEqual(['2:16 error: Invalid value for "vxlan_port"']);
    const z = await decodeComponent(flannel, 'component "flannel" {\n  vxlan_port = 0\n}\n');
    expect(z.where).toHaveLength(1);
    expect(z.where[0]).toMatch(/^2:16 error: /);
  });

  it('is the bootstrap CNI in kube-flannel', () => {
    expect(flannel.name).toBe('flannel');
    expect(flannel.namespace).toBe('kube-flannel');
    expect(flannel.bootstrap).toBe(true);
    expect(flannel.upstream).toEqual([FLANNEL_MANIFEST]);
  });
});

describeUpstream('flannel render (pinned kube-flannel.yml)', [FLANNEL_MANIFEST], () => {
  const ctx = (podCidr?: string): ComponentContext => ({
    upstream: pinnedUpstream([FLANNEL_MANIFEST]),
    components: new Set(['flannel']),
    ...(podCidr ? { podCidr } : {}),
  });
  const find = (objs: KubeObject[], kind: string, name: string) =>
    objs.find((o) => o.kind === kind && o.metadata.name === name)!;
  const netConf = (objs: KubeObject[]) =>
    JSON.parse(
      (find(objs, 'ConfigMap', 'kube-flannel-cfg').data as Record<string, string>)[
        'net-conf.json'
      ]!,
    ) as {
      Network: string;
      Backend: { Type: string; Port?: number };
    };

  it('pod_cidr (a cluster loko did not create) wins over the cluster block, which wins over the default', () => {
    expect(netConf(renderFlannel({ podCidr: '10.244.0.0/16' }, ctx('10.7.0.0/16'))).Network).toBe(
      '10.244.0.0/16',
    );
    expect(netConf(renderFlannel({}, ctx('10.7.0.0/16'))).Network).toBe('10.7.0.0/16');
  });

  it('puts the pod CIDR into net-conf.json, deterministically', () => {
    const objs = renderFlannel({}, ctx('10.7.0.0/16'));
    expect(renderFlannel({}, ctx('10.7.0.0/16'))).toEqual(objs);
    expect(netConf(objs)).toEqual({
      Network: '10.7.0.0/16',
      EnableNFTables: false,
      Backend: { Type: 'vxlan' },
    });
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/kube-flannel',
      'ClusterRole/flannel',
      'ClusterRoleBinding/flannel',
      'ServiceAccount/flannel',
      'ConfigMap/kube-flannel-cfg',
      'DaemonSet/kube-flannel-ds',
    ]);
  });

  it('falls back to the default pod CIDR and carries the VXLAN port', () => {
    expect(netConf(renderFlannel({}, ctx())).Network).toBe(DEFAULT_POD_CIDR);
    expect(netConf(renderFlannel({ vxlanPort: 4789 }, ctx('10.2.0.0/16'))).Backend).toEqual({
      Type: 'vxlan',
      Port: 4789,
    });
  });

  it('runs a host-network DaemonSet mounting hostPath /etc/cni/net.d (what the twin detects as a CNI)', () => {
    const ds = find(renderFlannel({}, ctx('10.2.0.0/16')), 'DaemonSet', 'kube-flannel-ds');
    const spec = (ds.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      hostNetwork: boolean;
      volumes: { name: string; hostPath?: { path: string } }[];
      tolerations: { operator: string; effect: string }[];
      containers: { image: string }[];
    };
    expect(spec.hostNetwork).toBe(true);
    expect(
      spec.volumes.filter((v) => v.hostPath?.path === '/etc/cni/net.d').map((v) => v.name),
    ).toEqual(['cni']);
    // Tolerates every NoSchedule taint: runs on not-ready, uninitialized and control-plane nodes.
    expect(spec.tolerations).toEqual([{ operator: 'Exists', effect: 'NoSchedule' }]);
    expect(spec.containers[0]!.image).toBe('ghcr.io/flannel-io/flannel:v0.28.10');
  });

  it('fails naming the manifest when it was not provided', () => {
    expect(() => renderFlannel({}, { upstream: new Map(), components: new Set() })).toThrow(
      /upstream manifest kube-flannel was not provided/,
    );
  });
});
