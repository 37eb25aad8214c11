/**
 * Certificate and key generation with `@peculiar/x509` on Node's WebCrypto. Loaded lazily by
 * {@link ensureClusterPki} (the x509/ASN.1 stack is not needed by `--help` or `plan`).
 *
 * Keys are ECDSA P-256 (see docs/bootstrap.md for why); CAs found on disk may also be RSA or other
 * EC curves, and then sign with their own algorithm.
 */
// tsyringe, which @peculiar/x509 uses internally, needs the Reflect metadata API; it must be
// evaluated before @peculiar/x509 (ESM evaluates imports in order).
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import { PkiError } from './errors.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type EcdsaParams = webcrypto.EcdsaParams;
type SigningAlgorithm = webcrypto.Algorithm | EcdsaParams;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const subtle = webcrypto.subtle;

/** ECDSA P-256 with SHA-256: every key loko generates. */
export const KEY_ALGORITHM: webcrypto.EcKeyGenParams & EcdsaParams = {
  name: 'ECDSA',
  namedCurve: 'P-256',
  hash: 'SHA-256',
};

/** Like kubeadm (`CertificateBackdate`): tolerate clocks a few minutes behind loko's. */
export const CERTIFICATE_BACKDATE_MS = 5 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface PemPair {
  certPem: string;
  keyPem: string;
}

/** A PKIX (`PUBLIC KEY`) and PKCS#8 (`PRIVATE KEY`) PEM key pair. */
export interface PemKeyPair {
  publicKeyPem: string;
  privateKeyPem: string;
}

/** Subject of a certificate: one CN and any number of O (Kubernetes groups). */
export interface Subject {
  commonName: string;
  organizations?: string[];
}

/** A new self-signed CA (`cA=TRUE`, keyCertSign) valid for `validityDays` from `now`. */
export async function createCa(
  subject: Subject,
  validityDays: number,
  now: Date = new Date(),
): Promise<PemPair> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: jsonName(subject),
    notBefore: new Date(now.getTime() - CERTIFICATE_BACKDATE_MS),
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
    signingAlgorithm: KEY_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign |
          x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportPrivateKey(keys.privateKey) };
}

/**
 * A new client certificate (`clientAuth`) signed by `ca`, valid for `validityDays` from `now` (never
 * beyond the CA's own expiry).
 */
export async function createClientCert(
  ca: PemPair,
  subject: Subject,
  validityDays: number,
  now: Date = new Date(),
): Promise<PemPair> {
  const caCert = parseCert(ca.certPem, 'the CA certificate');
  const signer = await importSigningKey(ca.keyPem);
  const keys = await generateKeys();
  const notAfter = new Date(
    Math.min(now.getTime() + validityDays * DAY_MS, caCert.notAfter.getTime()),
  );
  const caSki = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: jsonName(subject),
    issuer: caCert.subjectName,
    notBefore: new Date(now.getTime() - CERTIFICATE_BACKDATE_MS),
    notAfter,
    signingAlgorithm: signer.algorithm,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      caSki
        ? new x509.AuthorityKeyIdentifierExtension(caSki.keyId)
        : await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportPrivateKey(keys.privateKey) };
}

/** A bare key pair (the service-account signing key `sa.key`/`sa.pub`). */
export async function createKeyPair(): Promise<PemKeyPair> {
  const keys = await generateKeys();
  const privateKeyPem = await exportPrivateKey(keys.privateKey);
  const publicKeyPem = createPublicKey(createPrivateKey(privateKeyPem))
    .export({ type: 'spki', format: 'pem' })
    .toString();
  return { publicKeyPem, privateKeyPem };
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportPrivateKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey('pkcs8', key));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

/** Imports a PEM private key of any common encoding (PKCS#8, SEC1, PKCS#1) for signing. */
async function importSigningKey(
  pem: string,
): Promise<{ key: CryptoKey; algorithm: SigningAlgorithm }> {
  let keyObject;
  try {
    keyObject = createPrivateKey(pem);
  } catch {
    throw new PkiError('the CA private key is not a readable PEM private key');
  }
  const der = keyObject.export({ type: 'pkcs8', format: 'der' });
  if (keyObject.asymmetricKeyType === 'ec') {
    const curve = keyObject.asymmetricKeyDetails?.namedCurve;
    const named = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[curve ?? ''];
    if (!named) throw new PkiError(`the CA key uses an unsupported EC curve (${curve ?? '?'})`);
    const hash = { 'P-256': 'SHA-256', 'P-384': 'SHA-384', 'P-521': 'SHA-512' }[named];
    const key = await subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: named }, false, [
      'sign',
    ]);
    return { key, algorithm: { name: 'ECDSA', hash } as EcdsaParams };
  }
  if (keyObject.asymmetricKeyType === 'rsa') {
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const key = await subtle.importKey('pkcs8', der, algorithm, false, ['sign']);
    return { key, algorithm };
  }
  throw new PkiError(
    `the CA key type ${keyObject.asymmetricKeyType ?? '?'} is not supported (use ECDSA or RSA)`,
  );
}

function parseCert(pem: string, what: string): x509.X509Certificate {
  try {
    return new x509.X509Certificate(pem);
  } catch {
    throw new PkiError(`${what} is not a readable PEM certificate`);
  }
}

function jsonName(subject: Subject): x509.JsonName {
  const name: x509.JsonName = [{ CN: [subject.commonName] }];
  for (const o of subject.organizations ?? []) name.push({ O: [o] });
  return name;
}

/** 128 random bits, positive (top bit clear), as RFC 5280 asks of serial numbers. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  if (bytes[0] === 0) bytes[0] = 0x01;
  return bytes.toString('hex');
}
