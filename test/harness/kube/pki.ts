/**
 * Throw-away PKI for the test control plane: a CA, one serving certificate for 127.0.0.1 (used by
 * kube-apiserver, kube-controller-manager and kube-scheduler), an admin client certificate in
 * `system:masters`, a front-proxy CA with the aggregator's client certificate, and the
 * service-account signing key pair.
 *
 * Certificates are made with the `openssl` CLI (test-only; loko's own PKI lives in src/pki), keys
 * are ECDSA P-256 because they are fast to generate. Everything is written 0600 into `dir`.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths (and the PEM text of what kubeconfigs embed) of the harness PKI. */
export interface HarnessPki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  frontProxyCaCert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  saPublic: string;
  saPrivate: string;
  caPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

/** Names and addresses in the serving certificate: loopback only, plus the in-cluster names. */
export const SERVING_SANS = [
  'IP:127.0.0.1',
  'DNS:localhost',
  'DNS:kubernetes',
  'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc',
  'DNS:kubernetes.default.svc.cluster.local',
];

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr || e.message}`);
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Writes the harness PKI into `dir` (which must exist) and returns its paths. */
export async function createPki(dir: string): Promise<HarnessPki> {
  const p = (f: string) => join(dir, f);
  const ca = (name: string, cn: string) =>
    openssl(
      [
        'req',
        '-x509',
        ...EC,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.crt`,
        '-days',
        '2',
        '-subj',
        `/CN=${cn}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
  await Promise.all([ca('ca', 'loko-test-ca'), ca('front-proxy-ca', 'loko-test-front-proxy-ca')]);
  const leaf = (name: string, subj: string, ext: string[], signer = 'ca') =>
    openssl(
      [
        'req',
        '-x509',
        ...EC,
        '-CA',
        `${signer}.crt`,
        '-CAkey',
        `${signer}.key`,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.crt`,
        '-days',
        '2',
        '-subj',
        subj,
        '-addext',
        'basicConstraints=critical,CA:FALSE',
        '-addext',
        'keyUsage=critical,digitalSignature',
        ...ext.flatMap((e) => ['-addext', e]),
      ],
      dir,
    );
  await Promise.all([
    leaf('serving', '/CN=kube-apiserver', [
      'extendedKeyUsage=serverAuth',
      `subjectAltName=${SERVING_SANS.join(',')}`,
    ]),
    leaf('admin', '/O=system:masters/CN=loko-test-admin', ['extendedKeyUsage=clientAuth']),
    leaf(
      'front-proxy-client',
      '/CN=front-proxy-client',
      ['extendedKeyUsage=clientAuth'],
      'front-proxy-ca',
    ),
  ]);
  const sa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  await writeFile(p('sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  await writeFile(p('sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }), {
    mode: 0o600,
  });
  const [caPem, adminCertPem, adminKeyPem] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(p(f), 'utf8')),
  );
  return {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('serving.crt'),
    servingKey: p('serving.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    frontProxyCaCert: p('front-proxy-ca.crt'),
    frontProxyClientCert: p('front-proxy-client.crt'),
    frontProxyClientKey: p('front-proxy-client.key'),
    saPublic: p('sa.pub'),
    saPrivate: p('sa.key'),
    caPem: caPem!,
    adminCertPem: adminCertPem!,
    adminKeyPem: adminKeyPem!,
  };
}
