/**
 * The generated userdata and kubeadm configs against the real validators: `cloud-init schema` and
 * `kubeadm config validate` (plus `kubeadm init phase certs`, which proves kubeadm accepts loko's
 * CA and service-account files and issues its leaf certificates from them). Nothing here touches
 * the network: the validators only read the files given to them.
 */
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { ClusterConfig } from '../../../src/config/types.js';
import {
  KUBEADM_CONFIG_PATH,
  renderUserdata,
} from '../../../src/platforms/equinixmetal/userdata/index.js';
import {
  ENDPOINT,
  haConfig,
  makeFixture,
  singleConfig,
  type Fixture,
} from '../../unit/userdata/fixtures.js';
import { findCloudInit, findKubeadm, isCI, run } from './validators.js';

const cloudInit = findCloudInit();
const kubeadm = findKubeadm();
if (!cloudInit.path && !isCI) console.warn(`[skip] cloud-init schema suite: ${cloudInit.notice}`);
if (!kubeadm.path && !isCI) console.warn(`[skip] kubeadm config suite: ${kubeadm.notice}`);

let fx: Fixture;
let work: string;

/** Every machine's userdata of `config`, by hostname. */
function userdataOf(config: ClusterConfig): Map<string, string> {
  const { cluster, nodes } = fx.bootstrap(config);
  return new Map(nodes.map((n) => [n.hostname, renderUserdata(cluster, n)]));
}

/** The kubeadm config exactly as the userdata ships it. */
function kubeadmFileOf(userdata: string): string {
  const cfg = parse(userdata, { version: '1.1' }) as {
    write_files: Array<{ path: string; content: string }>;
  };
  const f = cfg.write_files.find((w) => w.path === KUBEADM_CONFIG_PATH);
  if (!f) throw new Error('no kubeadm config in the userdata');
  return f.content;
}

async function writeWork(name: string, content: string): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, content, { mode: 0o600 });
  return file;
}

beforeAll(async () => {
  fx = await makeFixture();
  work = await mkdtemp(path.join(os.tmpdir(), 'loko-userdata-validate-'));
});
afterAll(async () => {
  await fx?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(!cloudInit.path && !isCI)(
  `cloud-init schema (cloud-init ${cloudInit.version ?? 'missing'})`,
  () => {
    beforeAll(() => {
      if (!cloudInit.path) throw new Error(`CI=true and ${cloudInit.notice}`);
    });

    const cases: Array<[string, () => ClusterConfig, string]> = [
      ['controller 0 (kubeadm init, 1 controller)', singleConfig, 'demo-controller-0'],
      ['worker (1 controller)', singleConfig, 'demo-general-0'],
      ['controller 0 (kubeadm init, 3 controllers)', haConfig, 'demo-controller-0'],
      ['a joining controller', haConfig, 'demo-controller-1'],
      ['a worker with labels and taints', haConfig, 'demo-general-1'],
      ['a worker without BGP', haConfig, 'demo-edge-0'],
    ];
    it.each(cases)('accepts the userdata of %s', async (_what, config, hostname) => {
      const userdata = userdataOf(config()).get(hostname)!;
      const file = await writeWork(`${hostname}-${config.name}.cloud-config`, userdata);
      const r = await run(cloudInit.path!, ['schema', '--config-file', file]);
      expect(r.output).toContain('Valid cloud-config');
      expect(r.output).not.toMatch(/DEPRECATED/);
      expect(r.code).toBe(0);
    });

    it('rejects a broken cloud-config (the validator really validates)', async () => {
      const userdata = userdataOf(singleConfig()).get('demo-controller-0')!;
      const cfg = parse(userdata, { version: '1.1' }) as {
        write_files: Array<Record<string, unknown>>;
      };
      cfg.write_files[0]!.mode = '0600';
      const file = await writeWork('broken.cloud-config', '#cloud-config\n' + stringify(cfg));
      const r = await run(cloudInit.path!, ['schema', '--config-file', file]);
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/write_files\.0.*'mode' was unexpected/);
    });
  },
);

describe.skipIf(!kubeadm.path && !isCI)(
  `kubeadm config validate (kubeadm ${kubeadm.version ?? 'missing'})`,
  () => {
    beforeAll(() => {
      if (!kubeadm.path) throw new Error(`CI=true and ${kubeadm.notice}`);
    });

    const configs: Array<[string, () => ClusterConfig]> = [
      ['1 controller', singleConfig],
      ['3 controllers', haConfig],
    ];
    for (const [label, config] of configs) {
      it(`accepts every machine's kubeadm config with ${label}`, async () => {
        const kinds: string[] = [];
        for (const [hostname, userdata] of userdataOf(config())) {
          const text = kubeadmFileOf(userdata);
          kinds.push(
            `${hostname}:${parseAllDocuments(text)
              .map((d) => (d.toJS() as { kind: string }).kind)
              .join('+')}`,
          );
          const file = await writeWork(`${hostname}-${label.replace(' ', '')}.kubeadm.yaml`, text);
          const r = await run(kubeadm.path!, ['config', 'validate', '--config', file]);
          expect(r.output.trim(), hostname).toBe('ok');
          expect(r.code, hostname).toBe(0);
        }
        // Every kind of machine was covered.
        expect(
          kinds.some((k) =>
            k.endsWith('InitConfiguration+ClusterConfiguration+KubeletConfiguration'),
          ),
        ).toBe(true);
        expect(kinds.some((k) => k.includes('-general-') && k.endsWith(':JoinConfiguration'))).toBe(
          true,
        );
        if (label === '3 controllers') {
          expect(kinds.filter((k) => /controller-[12]:JoinConfiguration$/.test(k))).toHaveLength(2);
        }
      });
    }

    it('rejects a broken kubeadm config (the validator really validates)', async () => {
      const text = kubeadmFileOf(userdataOf(singleConfig()).get('demo-general-0')!);
      const file = await writeWork(
        'broken.kubeadm.yaml',
        text.replace('kind: JoinConfiguration', 'kind: JoinConfiguration\nbogus: 1'),
      );
      const r = await run(kubeadm.path!, ['config', 'validate', '--config', file]);
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/unknown field "bogus"/);
    });

    it("issues its leaf certificates from loko's CAs and service-account key (init phase certs)", async () => {
      // controller 0's config, with the certificate directory moved to a scratch copy of the PKI and
      // a fixed loopback advertise address (kubeadm would otherwise read the default route).
      const text = kubeadmFileOf(userdataOf(haConfig()).get('demo-controller-0')!);
      const certDir = path.join(work, 'certs');
      await mkdir(certDir, { recursive: true });
      await cp(fx.pki.dir, certDir, { recursive: true });
      await rm(path.join(certDir, 'admin.crt'));
      await rm(path.join(certDir, 'admin.key'));
      const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
      docs[0]!.localAPIEndpoint = { advertiseAddress: '192.0.2.1', bindPort: 6443 };
      docs[1]!.certificatesDir = certDir;
      const file = await writeWork(
        'phase-certs.kubeadm.yaml',
        docs.map((d) => stringify(d)).join('---\n'),
      );

      const r = await run(kubeadm.path!, ['init', 'phase', 'certs', 'all', '--config', file]);
      expect(r.code, r.output).toBe(0);
      for (const ca of ['ca', 'front-proxy-ca', 'etcd/ca']) {
        expect(r.output).toContain(`Using existing ${ca} certificate authority`);
      }
      expect(r.output).toContain('Using the existing "sa" key');

      // loko's files are untouched and the new leaves chain to them.
      expect(await readFile(path.join(certDir, 'ca.crt'), 'utf8')).toBe(fx.pki.ca.certPem);
      const ca = new X509Certificate(fx.pki.ca.certPem);
      const apiserver = new X509Certificate(await readFile(path.join(certDir, 'apiserver.crt')));
      expect(apiserver.verify(ca.publicKey)).toBe(true);
      expect(apiserver.subjectAltName).toContain(`IP Address:${ENDPOINT}`);
      expect(apiserver.publicKey.asymmetricKeyType).toBe('ec');
      const etcdServer = new X509Certificate(
        await readFile(path.join(certDir, 'etcd', 'server.crt')),
      );
      expect(etcdServer.verify(new X509Certificate(fx.pki.etcdCa.certPem).publicKey)).toBe(true);
      const frontProxy = new X509Certificate(
        await readFile(path.join(certDir, 'front-proxy-client.crt')),
      );
      expect(frontProxy.verify(new X509Certificate(fx.pki.frontProxyCa.certPem).publicKey)).toBe(
        true,
      );
    });
  },
);
