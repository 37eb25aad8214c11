/**
 * The certificates the twin's control plane needs, issued from the CAs found in controller 0's
 * userdata exactly as `kubeadm init` would issue them on the machine: the apiserver's serving
 * certificate, client certificates for the controller-manager, scheduler, kwok and the twin
 * itself, and the aggregator's front-proxy client certificate. Keys are ECDSA P-256; a CA with an
 * RSA or other EC key signs with its own algorithm.
 */
// tsyringe, which @peculiar/x509 uses internally, needs the Reflect metadata API first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createHash, createPrivateKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const subtle = webcrypto.subtle;
const KEY = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Like kubeadm: tolerate clocks a few minutes behind. */
const BACKDATE_MS = 5 * 60 * 1000;

/** A PEM certificate and its PKCS#8 PEM key. */
export interface CertPair {
  certPem: string;
  keyPem: string;
}

/** What a leaf certificate is for. */
export interface LeafSpec {
  commonName: string;
  organizations?: string[];
  /** `server` adds serverAuth, `client` clientAuth. */
  usages: Array<'server' | 'client'>;
  ipAddresses?: string[];
  dnsNames?: string[];
  validityDays?: number;
}

/** kubeadm's CA pin: `sha256:<hex>` over the DER SubjectPublicKeyInfo of the CA certificate. */
export function caCertHash(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

async function signingKey(
  pem: string,
): Promise<{ key: CryptoKey; algorithm: webcrypto.Algorithm }> {
  const keyObject = createPrivateKey(pem);
  const der = keyObject.export({ type: 'pkcs8', format: 'der' });
  if (keyObject.asymmetricKeyType === 'ec') {
    const curve = keyObject.asymmetricKeyDetails?.namedCurve ?? '';
    const named = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[curve];
    if (!named) throw new Error(`the CA key uses an unsupported EC curve (${curve || '?'})`);
    const hash = { 'P-256': 'SHA-256', 'P-384': 'SHA-384', 'P-521': 'SHA-512' }[named];
    const key = await subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: named }, false, [
      'sign',
    ]);
    return { key, algorithm: { name: 'ECDSA', hash } as webcrypto.Algorithm };
  }
  if (keyObject.asymmetricKeyType === 'rsa') {
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await subtle.importKey('pkcs8', der, algorithm, false, ['sign']), algorithm };
  }
  throw new Error(`the CA key type ${keyObject.asymmetricKeyType ?? '?'} is not supported`);
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey('pkcs8', key));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** A leaf certificate for `spec`, signed by `ca` (never valid beyond the CA). */
export async function issueLeaf(ca: CertPair, spec: LeafSpec, now = new Date()): Promise<CertPair> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const signer = await signingKey(ca.keyPem);
  const keys = (await subtle.generateKey(KEY, true, ['sign', 'verify'])) as CryptoKeyPair;
  const eku = [
    ...(spec.usages.includes('server') ? [x509.ExtendedKeyUsage.serverAuth] : []),
    ...(spec.usages.includes('client') ? [x509.ExtendedKeyUsage.clientAuth] : []),
  ];
  const names: x509.JsonGeneralNames = [
    ...(spec.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(spec.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const subject: x509.JsonName = [{ CN: [spec.commonName] }];
  for (const o of spec.organizations ?? []) subject.push({ O: [o] });
  const caSki = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: caCert.subjectName,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(
      Math.min(now.getTime() + (spec.validityDays ?? 365) * DAY_MS, caCert.notAfter.getTime()),
    ),
    signingAlgorithm: signer.algorithm,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension(eku),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      caSki
        ? new x509.AuthorityKeyIdentifierExtension(caSki.keyId)
        : await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}

/**
 * A new self-signed CA (ECDSA P-256, `cA=TRUE`, keyCertSign) named `commonName`, valid for
 * `validityDays` (default 10 years). The twin's webhook stand-in signs its serving certificates
 * with it, like a component's own cert rotator does with its self-made CA.
 */
export async function issueCa(
  commonName: string,
  validityDays = 3650,
  now = new Date(),
): Promise<CertPair> {
  const keys = (await subtle.generateKey(KEY, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [commonName] }],
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + validityDays * DAY_MS),
    signingAlgorithm: KEY,
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
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}
