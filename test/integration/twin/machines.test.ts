/**
 * What the twin makes of userdata, without a control plane: kubeadm cloud-init read the way
 * cloud-init and kubeadm read it (loko's own renderer as input), everything else ignored; a
 * device whose userdata is not kubeadm cloud-init never starts anything; without binaries the
 * twin is off and says so once. Plus the loopback mapping of the cluster ranges and the detached
 * JWS check of token discovery.
 */
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { startEmulator, twinStatus } from '../../../src/emulator/index.js';
import { loopbackRange, firstHost } from '../../../src/emulator/twin/network.js';
import { verifyDetachedJws } from '../../../src/emulator/twin/nodes.js';
import { parseGoDuration, tokenSecret } from '../../../src/emulator/twin/bootstrap.js';
import { parseMachineUserdata } from '../../../src/emulator/twin/userdata.js';
import {
  clusterBootstrap,
  controllerNode,
  renderUserdata,
  workerNode,
} from '../../../src/platforms/equinixmetal/userdata/index.js';
import { BootstrapToken, ensureClusterPki } from '../../../src/pki/index.js';
import { wrap } from '../../harness/emulator.js';
import { createDevice, describeTwin } from './helpers.js';

describe('twin: reading userdata', () => {
  it('reads controller 0, a joining controller and a worker as kubeadm would', async () => {
    const assets = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-parse-'));
    try {
      const pki = await ensureClusterPki(assets);
      const token = BootstrapToken.generate();
      const cluster = clusterBootstrap({
        clusterName: 'demo',
        controllerCount: 3,
        controlPlaneEndpoint: '127.9.192.0',
        pki,
        caCertHash: pki.caCertHash,
        bootstrapToken: token,
      });
      const c0 = parseMachineUserdata(renderUserdata(cluster, controllerNode('demo', 0)))!;
      expect(c0).toMatchObject({
        action: 'init',
        nodeName: 'demo-controller-0',
        labels: { 'loko.dev/bgp-enabled': 'false' },
        taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
        externalCloudProvider: true,
        endpoint: { host: '127.9.192.0', port: 6443 },
        bootstrapTokens: [{ token: token.reveal(), ttl: '4h0m0s' }],
        cluster: {
          clusterName: 'demo',
          kubernetesVersion: 'v1.36.3',
          podSubnet: '10.2.0.0/16',
          serviceSubnet: '10.3.0.0/16',
          dnsDomain: 'cluster.local',
          certSANs: ['127.9.192.0'],
        },
      });
      expect(c0.pki['ca.crt']).toBe(pki.ca.certPem);
      expect(c0.pki['ca.key']).toBe(pki.ca.key.reveal());
      expect(Object.keys(c0.pki).sort()).toEqual([
        'ca.crt',
        'ca.key',
        'etcd/ca.crt',
        'etcd/ca.key',
        'front-proxy-ca.crt',
        'front-proxy-ca.key',
        'sa.key',
        'sa.pub',
      ]);

      const c1 = parseMachineUserdata(renderUserdata(cluster, controllerNode('demo', 1)))!;
      expect(c1.action).toBe('join-control-plane');
      expect(c1.discovery).toEqual({
        token: token.reveal(),
        caCertHashes: [pki.caCertHash],
        unsafeSkipCAVerification: false,
        tlsBootstrapToken: token.reveal(),
        timeout: '30m0s',
      });

      const pool = {
        name: 'gpu',
        labels: { 'example.com/gpu': 'a100' },
        taints: [{ key: 'gpu', value: 'true', effect: 'NoExecute' as const }],
        disableBgp: true,
      };
      const w = parseMachineUserdata(renderUserdata(cluster, workerNode('demo', pool, 2)))!;
      expect(w).toMatchObject({
        action: 'join-worker',
        nodeName: 'demo-gpu-2',
        labels: {
          'example.com/gpu': 'a100',
          'loko.dev/bgp-enabled': 'false',
          'loko.dev/pool': 'gpu',
        },
        taints: [{ key: 'gpu', value: 'true', effect: 'NoExecute' }],
        endpoint: { host: '127.9.192.0', port: 6443 },
        pki: {},
      });
    } finally {
      await rm(assets, { recursive: true, force: true });
    }
  });

  it('ignores userdata that is not kubeadm cloud-init', () => {
    for (const u of [
      '',
      '#!/bin/sh\necho hi\n',
      '#cloud-config\nhostname: web-0\n',
      '#cloud-config\nwrite_files:\n  - path: /etc/motd\n    content: hello\n',
      '#cloud-config\n: [unbalanced\n',
      '#!ipxe\nchain http://127.0.0.1/boot\n',
    ]) {
      expect(parseMachineUserdata(u)).toBeUndefined();
    }
  });

  it('decodes base64 and gzip write_files content', () => {
    const kubeadm = [
      'apiVersion: kubeadm.k8s.io/v1beta4',
      'kind: JoinConfiguration',
      'discovery:',
      '  bootstrapToken:',
      '    token: abcdef.0123456789abcdef',
      '    apiServerEndpoint: 127.1.192.0:6443',
      '    caCertHashes: [sha256:00]',
      'nodeRegistration:',
      '  name: w',
      '  kubeletExtraArgs: {node-labels: "a=b,c=d"}',
      '',
    ].join('\n');
    const b64 = Buffer.from(kubeadm).toString('base64');
    const gz = gzipSync(kubeadm).toString('base64');
    for (const [encoding, content] of [
      ['b64', b64],
      ['gz+b64', gz],
    ]) {
      const u = `#cloud-config\nwrite_files:\n  - path: /etc/kubernetes/kubeadm.yaml\n    encoding: ${encoding}\n    content: ${content}\n`;
      // v1beta3's map form of kubeletExtraArgs works too.
      expect(parseMachineUserdata(u)).toMatchObject({
        action: 'join-worker',
        nodeName: 'w',
        labels: { a: 'b', c: 'd' },
        taints: [],
        endpoint: { host: '127.1.192.0', port: 6443 },
      });
    }
  });

  it('maps cluster ranges into 127.0.0.0/8', () => {
    expect(loopbackRange('10.3.0.0/16')).toBe('127.3.0.0/16');
    expect(loopbackRange('10.96.0.0/12')).toBe('127.96.0.0/12');
    expect(loopbackRange('192.168.10.0/24')).toBe('127.168.10.0/24');
    expect(loopbackRange('10.0.0.0/6')).toBe('127.0.0.0/8');
    expect(firstHost('127.3.0.0/16')).toBe('127.3.0.1');
  });

  it('creates token Secrets the way kubeadm init does', () => {
    const now = new Date('2026-11-30T00:00:00Z');
    expect(parseGoDuration('4h0m0s')).toBe(14_400);
    expect(parseGoDuration('1h30m')).toBe(5400);
    expect(parseGoDuration('nonsense')).toBeUndefined();
    expect(tokenSecret({ token: 'abcdef.0123456789abcdef', ttl: '4h0m0s' }, now)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      stringData: {
        'token-id': 'abcdef',
        'token-secret': '0123456789abcdef',
        expiration: '2026-11-30T04:00:00Z',
        'usage-bootstrap-signing': 'true',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
      },
    });
  });

  it("verifies the bootstrap signer's detached JWS with the token secret", () => {
    const payload = 'apiVersion: v1\nkind: Config\n';
    const header = Buffer.from('{"alg":"HS256","kid":"abcdef"}').toString('base64url');
    const sign = (key: string) =>
      createHmac('sha256', key)
        .update(`${header}.${Buffer.from(payload).toString('base64url')}`)
        .digest('base64url');
    const jws = `${header}..${sign('0123456789abcdef')}`;
    expect(verifyDetachedJws(jws, payload, '0123456789abcdef')).toBe(true);
    expect(verifyDetachedJws(jws, payload, '0123456789abcdeX')).toBe(false);
    expect(verifyDetachedJws(jws, `${payload} `, '0123456789abcdef')).toBe(false);
    expect(
      verifyDetachedJws(`${header}.x.${sign('0123456789abcdef')}`, payload, '0123456789abcdef'),
    ).toBe(false);
  });
});

describe('twin: off without binaries', () => {
  it('says so once and runs nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-off-'));
    const lines: string[] = [];
    const emu = await startEmulator({
      port: 0,
      statePath: path.join(dir, 'state.json'),
      twinOptions: { binDir: path.join(dir, 'no-binaries-here') },
      logger: { info: (m) => lines.push(m) },
    });
    try {
      expect(emu.twin.enabled).toBe(false);
      expect(emu.twin.reason).toContain('npm run kube:build');
      const off = lines.filter((l) => l.startsWith('Kubernetes twin off'));
      expect(off).toHaveLength(1);
      expect(off[0]).toContain(path.join(dir, 'no-binaries-here'));
      expect(off[0]).toContain('kube-apiserver');
    } finally {
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('twin: "off" runs nothing even with binaries', async () => {
    const emu = await startEmulator({ port: 0, twin: 'off' });
    try {
      expect(emu.twin).toEqual({ enabled: false, reason: 'off (twin: "off")' });
    } finally {
      await emu.close();
    }
  });
});

describeTwin('twin: devices without kubeadm userdata', () => {
  it('never start anything', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'loko-twin-plain-'));
    const statePath = path.join(dir, 'state.json');
    const lines: string[] = [];
    const emu = wrap(
      await startEmulator({ port: 0, statePath, logger: { info: (m) => lines.push(m) } }),
      dir,
      statePath,
    );
    try {
      expect(emu.twin.enabled).toBe(true);
      await createDevice(
        emu,
        'plain-0',
        '#cloud-config\nhostname: plain-0\npreserve_hostname: false\n',
      );
      await createDevice(emu, 'plain-1', '#!/bin/sh\necho hello\n');
      await createDevice(emu, 'plain-2', '');
      await emu.control.advanceClock(10);
      const active = await emu.api('GET', `/projects/${emu.projectId}/devices`);
      expect(active.body.devices.map((d: { state: string }) => d.state)).toEqual([
        'active',
        'active',
        'active',
      ]);
      // A few reconcile rounds (every 500 ms).
      await new Promise((r) => setTimeout(r, 2000));
      expect(existsSync(path.join(dir, 'twin'))).toBe(false);
      expect((await twinStatus(dir)).clusters).toEqual([]);
      expect(lines.filter((l) => l.startsWith('Kubernetes twin'))).toEqual([]);
    } finally {
      await emu.stop();
    }
  });
});
