/**
 * kubeadm's CA pin: `sha256:<hex>` over the DER SubjectPublicKeyInfo of the CA certificate, the
 * value of `--discovery-token-ca-cert-hash` / `discovery.bootstrapToken.caCertHashes`. Same as
 * `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | sha256sum`.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { PkiError } from './errors.js';

export const CA_CERT_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

export function caCertHash(certPem: string): string {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    throw new PkiError('cannot compute the CA certificate hash: not a readable PEM certificate');
  }
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}
