import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import {
  clusterBootstrap,
  cloudConfig,
  controllerNode,
  DEFAULT_KUBERNETES_VERSION,
  DOCKER_APT_KEY_FINGERPRINT,
  ENDPOINT_UNIT,
  KUBEADM_CONFIG_PATH,
  kubeadmConfig,
  KUBERNETES_APT_KEY_FINGERPRINT,
  renderUserdata,
  UserdataError,
  workerNode,
  type ClusterBootstrap,
  type NodeBootstrap,
} from '../../../src/platforms/equinixmetal/userdata/index.js';
import { ENDPOINT, haConfig, makeFixture, singleConfig, type Fixture } from './fixtures.js';

type Doc = Record<string, unknown> & { kind: string };

/** Keys of cloud-config loko may emit (cloud-init 22.4 does not reject unknown top-level keys). */
const CLOUD_CONFIG_KEYS = [
  'hostname',
  'preserve_hostname',
  'package_update',
  'apt',
  'packages',
  'write_files',
  'runcmd',
];

interface Rendered {
  text: string;
  cfg: {
    hostname: string;
    apt: { sources: Record<string, Record<string, string>> };
    packages: Array<string | string[]>;
    write_files: Array<{ path: string; content: string; permissions: string; defer?: boolean }>;
    runcmd: Array<string | string[]>;
  };
  file(path: string): { content: string; permissions: string; defer?: boolean } | undefined;
  kubeadmDocs: Doc[];
}

function render(cluster: ClusterBootstrap, node: NodeBootstrap): Rendered {
  const text = renderUserdata(cluster, node);
  const cfg = parse(text, { version: '1.1' }) as Rendered['cfg'];
  const file = (p: string) => cfg.write_files.find((f) => f.path === p);
  const kubeadmFile = file(KUBEADM_CONFIG_PATH);
  const kubeadmDocs = parseAllDocuments(kubeadmFile!.content).map((d) => d.toJS() as Doc);
  return { text, cfg, file, kubeadmDocs };
}

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
});
afterAll(async () => {
  await fx.cleanup();
});

const PKI_PATHS = [
  '/etc/kubernetes/pki/ca.crt',
  '/etc/kubernetes/pki/ca.key',
  '/etc/kubernetes/pki/front-proxy-ca.crt',
  '/etc/kubernetes/pki/front-proxy-ca.key',
  '/etc/kubernetes/pki/etcd/ca.crt',
  '/etc/kubernetes/pki/etcd/ca.key',
  '/etc/kubernetes/pki/sa.key',
  '/etc/kubernetes/pki/sa.pub',
];

describe('controller 0 userdata (kubeadm init)', () => {
  let r: Rendered;
  let cluster: ClusterBootstrap;
  beforeAll(() => {
    const b = fx.bootstrap(haConfig());
    cluster = b.cluster;
    r = render(cluster, b.nodes[0]!);
  });

  it('is #cloud-config with only known keys and the node hostname', () => {
    expect(r.text.startsWith('#cloud-config\n')).toBe(true);
    expect(Object.keys(r.cfg).sort()).toEqual([...CLOUD_CONFIG_KEYS].sort());
    expect(r.cfg.hostname).toBe('demo-controller-0');
  });

  it('adds pkgs.k8s.io for the minor version and Docker for containerd 2.x, keys pinned by fingerprint', () => {
    expect(r.cfg.apt.sources).toEqual({
      kubernetes: {
        source: 'deb [signed-by=$KEY_FILE] https://pkgs.k8s.io/core:/stable:/v1.36/deb/ /',
        keyid: KUBERNETES_APT_KEY_FINGERPRINT,
        keyserver: 'keyserver.ubuntu.com',
      },
      docker: {
        source:
          'deb [signed-by=$KEY_FILE] https://download.docker.com/linux/ubuntu $RELEASE stable',
        keyid: DOCKER_APT_KEY_FINGERPRINT,
        keyserver: 'keyserver.ubuntu.com',
      },
    });
    expect(KUBERNETES_APT_KEY_FINGERPRINT).toMatch(/^[0-9A-F]{40}$/);
    expect(DOCKER_APT_KEY_FINGERPRINT).toMatch(/^[0-9A-F]{40}$/);
  });

  it('installs containerd and kubelet/kubeadm/kubectl pinned to the cluster version', () => {
    expect(DEFAULT_KUBERNETES_VERSION).toBe('v1.36.3');
    expect(r.cfg.packages).toEqual([
      'containerd.io',
      'conntrack',
      'socat',
      ['kubelet', '1.36.3-1.1'],
      ['kubeadm', '1.36.3-1.1'],
      ['kubectl', '1.36.3-1.1'],
    ]);
  });

  it('writes the shared PKI 0600 with the contents of <asset_dir>/pki', () => {
    const expected: Record<string, string> = {
      '/etc/kubernetes/pki/ca.crt': fx.pki.ca.certPem,
      '/etc/kubernetes/pki/ca.key': fx.pki.ca.key.reveal(),
      '/etc/kubernetes/pki/front-proxy-ca.crt': fx.pki.frontProxyCa.certPem,
      '/etc/kubernetes/pki/front-proxy-ca.key': fx.pki.frontProxyCa.key.reveal(),
      '/etc/kubernetes/pki/etcd/ca.crt': fx.pki.etcdCa.certPem,
      '/etc/kubernetes/pki/etcd/ca.key': fx.pki.etcdCa.key.reveal(),
      '/etc/kubernetes/pki/sa.key': fx.pki.serviceAccount.privateKey.reveal(),
      '/etc/kubernetes/pki/sa.pub': fx.pki.serviceAccount.publicKeyPem,
    };
    for (const [p, content] of Object.entries(expected)) {
      const f = r.file(p);
      expect(f, p).toBeDefined();
      expect(f!.content, p).toBe(content);
      expect(f!.permissions, p).toBe('0600');
    }
    // Never the admin client certificate.
    expect(r.text).not.toContain(fx.pki.admin.key.reveal());
    expect(r.text).not.toContain(fx.pki.admin.certPem);
  });

  it('writes kernel settings, the kubeadm config (0600) and containerd config after the packages', () => {
    expect(r.file('/etc/modules-load.d/kubernetes.conf')!.content).toMatch(/^overlay$/m);
    expect(r.file('/etc/modules-load.d/kubernetes.conf')!.content).toMatch(/^br_netfilter$/m);
    const sysctl = r.file('/etc/sysctl.d/90-kubernetes.conf')!.content;
    expect(sysctl).toContain('net.ipv4.ip_forward = 1');
    expect(sysctl).toContain('net.bridge.bridge-nf-call-iptables = 1');
    expect(r.file(KUBEADM_CONFIG_PATH)!.permissions).toBe('0600');
    const containerd = r.file('/etc/containerd/config.toml')!;
    expect(containerd.defer).toBe(true);
    expect(containerd.content).toContain('version = 3');
    expect(containerd.content).toContain('SystemdCgroup = true');
  });

  it('puts the Elastic IP on lo through a unit enabled before kubeadm init', () => {
    const unit = r.file(`/etc/systemd/system/${ENDPOINT_UNIT}`)!;
    expect(unit.content).toContain(`ExecStart=/usr/sbin/ip address replace ${ENDPOINT}/32 dev lo`);
    const cmds = r.cfg.runcmd.map((c) => (Array.isArray(c) ? c.join(' ') : c));
    const enable = cmds.indexOf(`systemctl enable --now ${ENDPOINT_UNIT}`);
    const init = cmds.indexOf(`kubeadm init --config ${KUBEADM_CONFIG_PATH} --skip-token-print`);
    expect(enable).toBeGreaterThan(0);
    expect(init).toBe(cmds.length - 1);
    expect(enable).toBeLessThan(init);
    expect(cmds[0]).toBe('set -eu');
    expect(cmds).toContain('modprobe br_netfilter');
    expect(cmds).toContain('apt-mark hold containerd.io kubelet kubeadm kubectl');
  });

  it('has Init + Cluster + Kubelet configuration with the endpoint, SANs, subnets and version', () => {
    expect(r.kubeadmDocs.map((d) => `${d.apiVersion as string}/${d.kind}`)).toEqual([
      'kubeadm.k8s.io/v1beta4/InitConfiguration',
      'kubeadm.k8s.io/v1beta4/ClusterConfiguration',
      'kubelet.config.k8s.io/v1beta1/KubeletConfiguration',
    ]);
    const [init, clusterCfg, kubelet] = r.kubeadmDocs as [Doc, Doc, Doc];
    expect(init.bootstrapTokens).toEqual([
      {
        token: fx.token.reveal(),
        description: 'loko: machines of cluster demo join with this token',
        ttl: '4h0m0s',
        usages: ['signing', 'authentication'],
        groups: ['system:bootstrappers:kubeadm:default-node-token'],
      },
    ]);
    expect(init.nodeRegistration).toEqual({
      name: 'demo-controller-0',
      criSocket: 'unix:///run/containerd/containerd.sock',
      kubeletExtraArgs: [
        { name: 'cloud-provider', value: 'external' },
        { name: 'node-labels', value: 'loko.dev/bgp-enabled=false' },
      ],
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    });
    expect(clusterCfg).toMatchObject({
      clusterName: 'demo',
      kubernetesVersion: 'v1.36.3',
      controlPlaneEndpoint: `${ENDPOINT}:6443`,
      certificatesDir: '/etc/kubernetes/pki',
      encryptionAlgorithm: 'ECDSA-P256',
      networking: {
        podSubnet: '10.2.0.0/16',
        serviceSubnet: '10.3.0.0/16',
        dnsDomain: 'cluster.local',
      },
      apiServer: { certSANs: [ENDPOINT] },
      etcd: { local: { dataDir: '/var/lib/etcd' } },
    });
    expect(kubelet.cgroupDriver).toBe('systemd');
  });
});

describe('joining controller userdata (kubeadm join --control-plane)', () => {
  let r: Rendered;
  beforeAll(() => {
    const b = fx.bootstrap(haConfig());
    r = render(b.cluster, b.nodes[2]!);
  });

  it('carries the shared PKI but not the endpoint unit', () => {
    expect(r.cfg.hostname).toBe('demo-controller-2');
    for (const p of PKI_PATHS) expect(r.file(p)?.permissions, p).toBe('0600');
    expect(r.file(`/etc/systemd/system/${ENDPOINT_UNIT}`)).toBeUndefined();
    expect(r.text).not.toContain(ENDPOINT_UNIT);
  });

  it('joins as a control-plane node through token discovery pinned to the CA hash', () => {
    const last = r.cfg.runcmd.at(-1);
    expect(last).toEqual(['kubeadm', 'join', '--config', KUBEADM_CONFIG_PATH]);
    expect(r.kubeadmDocs).toHaveLength(1);
    const join = r.kubeadmDocs[0]!;
    expect(join).toMatchObject({
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'JoinConfiguration',
      discovery: {
        bootstrapToken: {
          token: fx.token.reveal(),
          apiServerEndpoint: `${ENDPOINT}:6443`,
          caCertHashes: [fx.pki.caCertHash],
        },
      },
      controlPlane: { localAPIEndpoint: { bindPort: 6443 } },
      timeouts: { discovery: '30m0s', etcdAPICall: '10m0s' },
    });
    // The CA files are pre-written, so no certificate key travels.
    expect(JSON.stringify(join)).not.toContain('certificateKey');
    expect(join.nodeRegistration).toMatchObject({
      name: 'demo-controller-2',
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    });
  });
});

describe('worker userdata (kubeadm join)', () => {
  let general: Rendered;
  let edge: Rendered;
  beforeAll(() => {
    const b = fx.bootstrap(haConfig());
    general = render(
      b.cluster,
      b.nodes.find((n) => n.hostname === 'demo-general-1')!,
    );
    edge = render(
      b.cluster,
      b.nodes.find((n) => n.hostname === 'demo-edge-0')!,
    );
  });

  it('carries no PKI and no private key at all, only the token and the CA hash', () => {
    for (const r of [general, edge]) {
      for (const p of PKI_PATHS) expect(r.file(p), p).toBeUndefined();
      expect(r.text).not.toContain('PRIVATE KEY');
      expect(r.text).not.toContain('BEGIN CERTIFICATE');
      expect(r.text).toContain(fx.pki.caCertHash);
    }
  });

  it('joins as a worker with pool labels, loko labels and pool taints', () => {
    const join = general.kubeadmDocs[0]!;
    expect(join.kind).toBe('JoinConfiguration');
    expect(join.controlPlane).toBeUndefined();
    expect(join.nodeRegistration).toEqual({
      name: 'demo-general-1',
      criSocket: 'unix:///run/containerd/containerd.sock',
      kubeletExtraArgs: [
        { name: 'cloud-provider', value: 'external' },
        {
          name: 'node-labels',
          value:
            'example.com/tier=web,loko.dev/bgp-enabled=true,loko.dev/pool=general,node.kubernetes.io/disk=',
        },
      ],
      taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
    });
    expect(join.timeouts).toEqual({ discovery: '30m0s' });
    expect(general.cfg.runcmd.at(-1)).toEqual(['kubeadm', 'join', '--config', KUBEADM_CONFIG_PATH]);
  });

  it('labels a pool with disable_bgp as loko.dev/bgp-enabled=false and taints nothing', () => {
    const reg = edge.kubeadmDocs[0]!.nodeRegistration as Record<string, unknown>;
    expect(reg.kubeletExtraArgs).toContainEqual({
      name: 'node-labels',
      value: 'loko.dev/bgp-enabled=false,loko.dev/pool=edge',
    });
    expect(reg.taints).toEqual([]);
  });
});

describe('parameters', () => {
  it('follows kubernetes_version for the repository, packages and ClusterConfiguration', () => {
    const { cluster, nodes } = fx.bootstrap(singleConfig(), { kubernetesVersion: 'v1.35.2' });
    const r = render(cluster, nodes[0]!);
    expect(r.cfg.apt.sources.kubernetes!.source).toContain('/core:/stable:/v1.35/deb/');
    expect(r.cfg.packages).toContainEqual(['kubeadm', '1.35.2-1.1']);
    expect(r.kubeadmDocs[1]!.kubernetesVersion).toBe('v1.35.2');
  });

  it('takes pod and service subnets', () => {
    const { cluster, nodes } = fx.bootstrap(singleConfig(), {
      podSubnet: '192.168.0.0/17',
      serviceSubnet: '192.168.128.0/20',
    });
    expect(kubeadmConfig(cluster, nodes[0]!).documents[1]!.networking).toMatchObject({
      podSubnet: '192.168.0.0/17',
      serviceSubnet: '192.168.128.0/20',
    });
  });

  it('embeds armored apt keys instead of fetching them when given', () => {
    const key =
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF\n-----END PGP PUBLIC KEY BLOCK-----\n';
    const { cluster, nodes } = fx.bootstrap(singleConfig(), {
      aptSigningKeys: { kubernetes: key },
    });
    const sources = cloudConfig(cluster, nodes[0]!).apt.sources;
    expect(sources.kubernetes).toEqual({ source: expect.any(String), key });
    expect(sources.docker!.keyid).toBe(DOCKER_APT_KEY_FINGERPRINT);
  });

  it('rejects malformed inputs with a UserdataError naming the value', () => {
    const base = {
      clusterName: 'demo',
      controllerCount: 1,
      controlPlaneEndpoint: ENDPOINT,
      pki: fx.pki,
      caCertHash: fx.pki.caCertHash,
      bootstrapToken: fx.token,
    };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ kubernetesVersion: '1.36.3' }, /kubernetes version "1.36.3"/],
      [{ kubernetesVersion: 'v1.36' }, /kubernetes version "v1.36"/],
      [{ controlPlaneEndpoint: '127.0.0.300' }, /not an IPv4 address/],
      [{ controlPlaneEndpoint: '127.0.0.10/32' }, /not an IPv4 address/],
      [{ podSubnet: '10.2.0.0' }, /pod subnet "10.2.0.0" is not an IPv4 CIDR/],
      [{ serviceSubnet: '10.3.0.0/33' }, /service subnet/],
      [{ podSubnet: '10.0.0.0/8', serviceSubnet: '10.3.0.0/16' }, /overlaps/],
      [{ controllerCount: 0 }, /controller count/],
      [{ caCertHash: 'sha256:abc' }, /CA certificate hash/],
    ];
    for (const [over, msg] of cases) {
      expect(() => clusterBootstrap({ ...base, ...over }), JSON.stringify(over)).toThrow(msg);
      expect(() => clusterBootstrap({ ...base, ...over })).toThrow(UserdataError);
    }
  });

  it('is pure: the same inputs render the same text', () => {
    const { cluster, nodes } = fx.bootstrap(haConfig());
    for (const n of nodes) expect(renderUserdata(cluster, n)).toBe(renderUserdata(cluster, n));
  });
});

describe('nodes from the cluster config', () => {
  it('match desiredState hostnames and order', () => {
    const config = haConfig();
    const { nodes } = fx.bootstrap(config);
    expect(nodes.map((n) => n.hostname)).toEqual(
      desiredState(config).devices.map((d) => d.hostname),
    );
    expect(nodes.map((n) => `${n.role}:${n.index}`)).toEqual([
      'controller:0',
      'controller:1',
      'controller:2',
      'worker:0',
      'worker:1',
      'worker:0',
    ]);
  });

  it('refuses labels a kubelet may not set on itself, naming pool and key', () => {
    const bad = (labels: Record<string, string>) => () =>
      workerNode('demo', { name: 'web', labels, taints: [], disableBgp: false }, 0);
    expect(bad({ 'node-role.kubernetes.io/worker': '' })).toThrow(
      /worker pool "web": a kubelet may not set label "node-role.kubernetes.io\/worker"/,
    );
    expect(bad({ 'k8s.io/owner': 'me' })).toThrow(UserdataError);
    expect(bad({ 'loko.dev/bgp-enabled': 'false' })).toThrow(/set by loko/);
    expect(bad({ 'example.com/x': 'a,b' })).toThrow(/value of label "example.com\/x" is invalid/);
    expect(bad({ 'Example.com/x': 'a' })).toThrow(/label key "Example.com\/x" is invalid/);
    expect(() =>
      workerNode(
        'demo',
        {
          name: 'web',
          labels: {},
          taints: [{ key: 'bad key', value: '', effect: 'NoSchedule' }],
          disableBgp: false,
        },
        0,
      ),
    ).toThrow(/taint key "bad key" is invalid/);
  });

  it('refuses a hostname that cannot be a node name', () => {
    expect(() => controllerNode('Demo', 0)).toThrow(/cannot be a node name/);
  });
});

describe('secrets', () => {
  it('the token object never prints its secret even though the rendered userdata carries it', () => {
    const { cluster, nodes } = fx.bootstrap(singleConfig());
    const secret = fx.token.reveal().split('.')[1]!;
    expect(renderUserdata(cluster, nodes[1]!)).toContain(secret);
    expect(inspect(cluster, { depth: 10 })).not.toContain(secret);
    expect(JSON.stringify(cluster)).not.toContain(secret);
    expect(JSON.stringify(cluster)).not.toContain('PRIVATE KEY');
  });
});
