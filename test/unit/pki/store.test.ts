import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  webcrypto,
  X509Certificate,
} from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN_GROUP,
  ADMIN_USER,
  CA_CERT_HASH_PATTERN,
  caCertHash,
  ensureClusterPki,
  kubeadmPkiFiles,
  PKI_FILES,
  PkiError,
  type ClusterPki,
} from '../../../src/pki/index.js';

const DAY = 86_400_000;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

let assetDir: string;
beforeEach(async () => {
  assetDir = await mkdtemp(path.join(os.tmpdir(), 'loko-pki-'));
});
afterEach(async () => {
  await rm(assetDir, { recursive: true, force: true });
});

const pkiPath = (name: string) => path.join(assetDir, 'pki', name);
const mode = async (p: string) => (await stat(p)).mode & 0o777;

async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.values(PKI_FILES)) out[name] = await readFile(pkiPath(name), 'utf8');
  return out;
}

async function expectPkiError(p: Promise<unknown>, match: RegExp): Promise<PkiError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(PkiError);
  expect((err as Error).message).toMatch(match);
  expect((err as Error).message).not.toContain('-----BEGIN');
  return err as PkiError;
}

describe('ensureClusterPki: generation', () => {
  let pki: ClusterPki;
  beforeEach(async () => {
    pki = await ensureClusterPki(assetDir);
  });

  it('writes kubeadm file names plus the admin pair, files 0600, directories 0700', async () => {
    expect(pki.dir).toBe(path.join(assetDir, 'pki'));
    expect([...pki.written].sort()).toEqual(Object.values(PKI_FILES).sort());
    expect(await mode(path.join(assetDir, 'pki'))).toBe(0o700);
    expect(await mode(path.join(assetDir, 'pki', 'etcd'))).toBe(0o700);
    for (const name of Object.values(PKI_FILES))
      expect(await mode(pkiPath(name)), name).toBe(0o600);
  });

  it('makes three self-signed ECDSA P-256 CAs valid for 10 years, with kubeadm common names', async () => {
    const now = Date.now();
    const cases: Array<[string, string]> = [
      [pki.ca.certPem, 'CN=kubernetes'],
      [pki.frontProxyCa.certPem, 'CN=front-proxy-ca'],
      [pki.etcdCa.certPem, 'CN=etcd-ca'],
    ];
    for (const [pem, subject] of cases) {
      const cert = new X509Certificate(pem);
      expect(cert.subject).toBe(subject);
      expect(cert.ca).toBe(true);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.publicKey.asymmetricKeyType).toBe('ec');
      expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
      const days = (new Date(cert.validTo).getTime() - now) / DAY;
      expect(days).toBeGreaterThan(3649);
      expect(days).toBeLessThan(3651);
      expect(new Date(cert.validFrom).getTime()).toBeLessThanOrEqual(now);
    }
    // Three distinct CAs, not one key reused.
    const spkis = cases.map(([pem]) =>
      new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).toString('hex'),
    );
    expect(new Set(spkis).size).toBe(3);
  });

  it('issues the admin client certificate from the cluster CA: 1 year, clientAuth, kubeadm:cluster-admins', async () => {
    const admin = new X509Certificate(pki.admin.certPem);
    const ca = new X509Certificate(pki.ca.certPem);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.checkIssued(ca)).toBe(true);
    expect(admin.verify(new X509Certificate(pki.etcdCa.certPem).publicKey)).toBe(false);
    expect(admin.ca).toBe(false);
    expect(admin.subject).toBe(`CN=${ADMIN_USER}\nO=${ADMIN_GROUP}`);
    expect(ADMIN_GROUP).toBe('kubeadm:cluster-admins');
    const days = (new Date(admin.validTo).getTime() - Date.now()) / DAY;
    expect(days).toBeGreaterThan(364);
    expect(days).toBeLessThan(366);
    const parsed = new x509.X509Certificate(pki.admin.certPem);
    const eku = parsed.getExtension(x509.ExtendedKeyUsageExtension);
    expect(eku?.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    // The key on disk is the certificate's key.
    const fromKey = createPublicKey(createPrivateKey(pki.admin.key.reveal())).export({
      type: 'spki',
      format: 'der',
    });
    expect(fromKey.equals(admin.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
  });

  it('writes a service-account key pair (sa.key private, sa.pub its PKIX public key)', async () => {
    const key = createPrivateKey(pki.serviceAccount.privateKey.reveal());
    const pub = createPublicKey(pki.serviceAccount.publicKeyPem);
    expect(pki.serviceAccount.publicKeyPem).toContain('-----BEGIN PUBLIC KEY-----');
    expect(
      createPublicKey(key)
        .export({ type: 'spki', format: 'der' })
        .equals(pub.export({ type: 'spki', format: 'der' })),
    ).toBe(true);
  });

  it('computes the CA hash as sha256 over the DER SubjectPublicKeyInfo', () => {
    expect(pki.caCertHash).toMatch(CA_CERT_HASH_PATTERN);
    expect(pki.caCertHash).toBe(caCertHash(pki.ca.certPem));
  });

  it.skipIf(!hasOpenssl)(
    'matches openssl x509 -pubkey | openssl pkey -pubin -outform der | sha256sum',
    () => {
      const pubPem = execFileSync('openssl', ['x509', '-pubkey', '-noout'], {
        input: pki.ca.certPem,
      });
      const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pubPem });
      const sum = execFileSync('sha256sum', [], { input: der }).toString().split(/\s+/)[0];
      expect(pki.caCertHash).toBe(`sha256:${sum}`);
    },
  );

  it('never shows a private key when the result is printed or serialised', () => {
    for (const rendering of [
      JSON.stringify(pki),
      inspect(pki, { depth: 10 }),
      String(pki.ca.key),
    ]) {
      expect(rendering).not.toContain('PRIVATE KEY');
    }
    expect(pki.ca.key.reveal()).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it('lists the kubeadm files (never the admin pair) with keys as secrets', () => {
    const files = kubeadmPkiFiles(pki);
    expect(files.map((f) => f.name)).toEqual([
      'ca.crt',
      'ca.key',
      'front-proxy-ca.crt',
      'front-proxy-ca.key',
      'etcd/ca.crt',
      'etcd/ca.key',
      'sa.key',
      'sa.pub',
    ]);
    for (const f of files) {
      const isKey = f.name.endsWith('.key');
      expect(typeof f.content === 'string', f.name).toBe(!isKey);
    }
  });
});

describe('ensureClusterPki: a new PKI appears whole', () => {
  it('is generated in a staging directory and renamed into place; leftovers of a killed run go', async () => {
    // A run killed while generating left a staging directory with half a CA.
    const stale = path.join(assetDir, 'pki.new-4242-deadbeef');
    await mkdir(stale, { recursive: true });
    await writeFile(path.join(stale, 'ca.key'), 'half');
    const pki = await ensureClusterPki(assetDir);
    expect(pki.dir).toBe(path.join(assetDir, 'pki'));
    expect(pki.written).toHaveLength(Object.keys(PKI_FILES).length);
    expect((await readdir(assetDir)).sort()).toEqual(['pki']);
    expect(await mode(path.join(assetDir, 'pki'))).toBe(0o700);
    for (const name of Object.values(PKI_FILES)) expect(await mode(pkiPath(name))).toBe(0o600);
    expect((await ensureClusterPki(assetDir)).written).toEqual([]);
  });
});

describe('ensureClusterPki: idempotence', () => {
  it('a second run loads everything and writes nothing', async () => {
    const first = await ensureClusterPki(assetDir);
    const before = await snapshot();
    const second = await ensureClusterPki(assetDir);
    expect(second.written).toEqual([]);
    expect(await snapshot()).toEqual(before);
    expect(second.caCertHash).toBe(first.caCertHash);
    expect(second.ca.key.equals(first.ca.key)).toBe(true);
  });

  it('regenerates only what is missing and never touches an existing CA', async () => {
    const first = await ensureClusterPki(assetDir);
    const before = await snapshot();
    await rm(pkiPath(PKI_FILES.adminCert));
    await rm(pkiPath(PKI_FILES.serviceAccountPub));
    const second = await ensureClusterPki(assetDir);
    expect([...second.written].sort()).toEqual(['admin.crt', 'admin.key', 'sa.pub']);
    const after = await snapshot();
    for (const name of [
      'ca.crt',
      'ca.key',
      'front-proxy-ca.crt',
      'front-proxy-ca.key',
      'etcd/ca.crt',
      'etcd/ca.key',
      'sa.key',
    ]) {
      expect(after[name], name).toBe(before[name]);
    }
    // sa.pub is derived from the existing sa.key, so it comes back identical.
    expect(after['sa.pub']).toBe(before['sa.pub']);
    expect(second.caCertHash).toBe(first.caCertHash);
    expect(
      new X509Certificate(second.admin.certPem).verify(
        new X509Certificate(first.ca.certPem).publicKey,
      ),
    ).toBe(true);
  });

  it('creates the etcd CA alone when only it is missing', async () => {
    await ensureClusterPki(assetDir);
    await rm(path.join(assetDir, 'pki', 'etcd'), { recursive: true });
    const again = await ensureClusterPki(assetDir);
    expect([...again.written].sort()).toEqual(['etcd/ca.crt', 'etcd/ca.key']);
  });

  it('tightens loosened modes back to 0600/0700', async () => {
    await ensureClusterPki(assetDir);
    await chmod(pkiPath(PKI_FILES.caKey), 0o644);
    await chmod(path.join(assetDir, 'pki'), 0o755);
    const again = await ensureClusterPki(assetDir);
    expect(again.written).toEqual([]);
    expect(await mode(pkiPath(PKI_FILES.caKey))).toBe(0o600);
    expect(await mode(path.join(assetDir, 'pki'))).toBe(0o700);
  });

  it('renews the admin certificate within 30 days of its expiry, keeping the CA', async () => {
    const first = await ensureClusterPki(assetDir);
    const later = new Date(Date.now() + 340 * DAY);
    const renewed = await ensureClusterPki(assetDir, { now: later });
    expect([...renewed.written].sort()).toEqual(['admin.crt', 'admin.key']);
    expect(renewed.ca.certPem).toBe(first.ca.certPem);
    expect(new Date(new X509Certificate(renewed.admin.certPem).validTo).getTime()).toBeGreaterThan(
      later.getTime() + 364 * DAY,
    );
  });

  it('reissues the admin certificate when it was not issued by the current CA', async () => {
    await ensureClusterPki(assetDir);
    const other = await mkdtemp(path.join(os.tmpdir(), 'loko-pki-other-'));
    try {
      const foreign = await ensureClusterPki(other);
      await writeFile(pkiPath(PKI_FILES.adminCert), foreign.admin.certPem);
      await writeFile(pkiPath(PKI_FILES.adminKey), foreign.admin.key.reveal());
      const again = await ensureClusterPki(assetDir);
      expect([...again.written].sort()).toEqual(['admin.crt', 'admin.key']);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('ensureClusterPki: refusals', () => {
  it('refuses half a CA and names the files, never the contents', async () => {
    await ensureClusterPki(assetDir);
    await rm(pkiPath(PKI_FILES.caCert));
    const err = await expectPkiError(
      ensureClusterPki(assetDir),
      /ca\.key exists but .*ca\.crt does not/,
    );
    expect(err.hint).toMatch(/never replaces half of a CA/);
    // Nothing was regenerated.
    await expect(stat(pkiPath(PKI_FILES.caCert))).rejects.toThrow();
  });

  it('refuses a CA whose key is not its own', async () => {
    await ensureClusterPki(assetDir);
    const other = await readFile(pkiPath(PKI_FILES.etcdCaKey), 'utf8');
    await writeFile(pkiPath(PKI_FILES.caKey), other);
    await expectPkiError(ensureClusterPki(assetDir), /ca\.key is not the private key of .*ca\.crt/);
  });

  it('refuses an unreadable certificate or key', async () => {
    await ensureClusterPki(assetDir);
    await writeFile(pkiPath(PKI_FILES.frontProxyCaCert), 'not a certificate');
    await expectPkiError(
      ensureClusterPki(assetDir),
      /front-proxy-ca\.crt is not a readable PEM certificate/,
    );
  });

  it('refuses a leaf certificate where a CA belongs', async () => {
    const pki = await ensureClusterPki(assetDir);
    await writeFile(pkiPath(PKI_FILES.caCert), pki.admin.certPem);
    await writeFile(pkiPath(PKI_FILES.caKey), pki.admin.key.reveal());
    await expectPkiError(ensureClusterPki(assetDir), /is not a CA certificate/);
  });

  it('refuses sa.pub without sa.key, and an sa.pub of another key', async () => {
    const pki = await ensureClusterPki(assetDir);
    await rm(pkiPath(PKI_FILES.serviceAccountKey));
    await expectPkiError(ensureClusterPki(assetDir), /sa\.pub exists but .*sa\.key does not/);
    await writeFile(pkiPath(PKI_FILES.serviceAccountKey), pki.serviceAccount.privateKey.reveal());
    const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    await writeFile(
      pkiPath(PKI_FILES.serviceAccountPub),
      stranger.publicKey.export({ type: 'spki', format: 'pem' }),
    );
    await expectPkiError(ensureClusterPki(assetDir), /sa\.pub is not the public half of/);
  });
});

describe('ensureClusterPki: a CA brought by the user', () => {
  it('loads an RSA CA and signs the admin certificate with it', async () => {
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    const alg = {
      name: 'RSASSA-PKCS1-v1_5',
      hash: 'SHA-256',
      publicExponent: new Uint8Array([1, 0, 1]),
      modulusLength: 2048,
    };
    const keys = (await webcrypto.subtle.generateKey(alg, true, [
      'sign',
      'verify',
    ])) as webcrypto.CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=my-rsa-ca',
      keys,
      signingAlgorithm: alg,
      notAfter: new Date(Date.now() + 100 * DAY),
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    } as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]);
    const keyDer = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    const keyPem = createPrivateKey({ key: keyDer, format: 'der', type: 'pkcs8' })
      .export({ type: 'pkcs1', format: 'pem' })
      .toString();
    await mkdir(path.join(assetDir, 'pki'), { recursive: true });
    await writeFile(pkiPath(PKI_FILES.caCert), cert.toString('pem'));
    await writeFile(pkiPath(PKI_FILES.caKey), keyPem);

    const pki = await ensureClusterPki(assetDir);
    expect(pki.written).not.toContain('ca.crt');
    expect(pki.written).not.toContain('ca.key');
    const ca = new X509Certificate(pki.ca.certPem);
    const admin = new X509Certificate(pki.admin.certPem);
    expect(admin.verify(ca.publicKey)).toBe(true);
    // Never valid beyond the CA that issued it.
    expect(new Date(admin.validTo).getTime()).toBeLessThanOrEqual(new Date(ca.validTo).getTime());
  });
});
