/**
 * Cluster PKI and bootstrap secrets (DESIGN.md §1 `pki/`): the CAs and service-account keys kubeadm
 * expects, loko's admin client certificate, kubeadm's CA pin, bootstrap tokens. Depends on nothing
 * of ours but `util/errors`. The x509 library is loaded only when something must be generated.
 */
export { PkiError } from './errors.js';
export { caCertHash, CA_CERT_HASH_PATTERN } from './hash.js';
export { Secret } from './secret.js';
export {
  ADMIN_GROUP,
  ADMIN_RENEW_BEFORE_DAYS,
  ADMIN_USER,
  ADMIN_VALIDITY_DAYS,
  CA_VALIDITY_DAYS,
  ensureClusterPki,
  kubeadmPkiFiles,
  PKI_DIR_MODE,
  PKI_FILE_MODE,
  PKI_FILES,
  pkiDir,
  type CertificateAuthority,
  type ClusterPki,
  type ControlPlanePki,
  type EnsurePkiOptions,
  type KubeadmPkiFile,
} from './store.js';
export {
  BOOTSTRAP_TOKEN_PATTERN,
  BootstrapToken,
  DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS,
  generateCertificateKey,
  goDuration,
} from './tokens.js';
