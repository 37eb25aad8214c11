/**
 * The cluster PKI in `<asset_dir>/pki/`: what kubeadm expects under `/etc/kubernetes/pki` (the three
 * CAs and the service-account key pair; kubeadm issues every leaf certificate itself) plus loko's
 * admin client certificate for the kubeconfig.
 *
 * {@link ensureClusterPki} is idempotent: it loads what exists, generates what is missing, and never
 * regenerates a CA that exists (a new CA would orphan every node already issued by the old one).
 * Callers serialise runs on one asset dir with the asset-dir lock (`acquireClusterLock`).
 */
import { randomBytes, createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PkiError } from './errors.js';
import { caCertHash } from './hash.js';
import { Secret } from './secret.js';

/** File names under `<asset_dir>/pki/`; the CA and SA names are kubeadm's. */
export const PKI_FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  frontProxyCaCert: 'front-proxy-ca.crt',
  frontProxyCaKey: 'front-proxy-ca.key',
  etcdCaCert: 'etcd/ca.crt',
  etcdCaKey: 'etcd/ca.key',
  serviceAccountKey: 'sa.key',
  serviceAccountPub: 'sa.pub',
  adminCert: 'admin.crt',
  adminKey: 'admin.key',
} as const;

/** Mode of every file in the PKI directory (certificates included) and of the directories. */
export const PKI_FILE_MODE = 0o600;
export const PKI_DIR_MODE = 0o700;

/** Validity of a new CA: 10 years, kubeadm's `caCertificateValidityPeriod` default. */
export const CA_VALIDITY_DAYS = 3650;
/** Validity of a new admin client certificate: 1 year, kubeadm's leaf default. */
export const ADMIN_VALIDITY_DAYS = 365;
/** The admin certificate is reissued when it has less than this left (or no longer verifies). */
export const ADMIN_RENEW_BEFORE_DAYS = 30;

/**
 * The admin certificate's group. kubeadm (since 1.29) gives `admin.conf` this group, which its
 * `kubeadm:cluster-admins` ClusterRoleBinding binds to `cluster-admin`: unlike `system:masters`,
 * which short-circuits RBAC and cannot be revoked short of replacing the CA, access through it can
 * be withdrawn by deleting one binding.
 */
export const ADMIN_GROUP = 'kubeadm:cluster-admins';
/** The admin certificate's CN: the user name Kubernetes audit logs show for loko's kubeconfig. */
export const ADMIN_USER = 'loko-admin';

/** A CA certificate (public) and its private key (redacted). */
export interface CertificateAuthority {
  certPem: string;
  key: Secret;
}

/** The material every control-plane node needs before `kubeadm init`/`join --control-plane`. */
export interface ControlPlanePki {
  ca: CertificateAuthority;
  frontProxyCa: CertificateAuthority;
  etcdCa: CertificateAuthority;
  serviceAccount: { publicKeyPem: string; privateKey: Secret };
}

/** Everything in `<asset_dir>/pki/`. */
export interface ClusterPki extends ControlPlanePki {
  /** `<asset_dir>/pki`. */
  dir: string;
  /** Client certificate for the kubeconfig: CN {@link ADMIN_USER}, O {@link ADMIN_GROUP}. */
  admin: { certPem: string; key: Secret };
  /** `sha256:<hex>` of the cluster CA's SubjectPublicKeyInfo (kubeadm's discovery pin). */
  caCertHash: string;
  /** Files (relative to `dir`) this call created or replaced; empty on a no-op run. */
  written: string[];
}

export interface EnsurePkiOptions {
  /** The clock, for tests. */
  now?: Date;
}

/** Where the PKI of a cluster lives. */
export function pkiDir(assetDir: string): string {
  return path.join(assetDir, 'pki');
}

/**
 * Loads `<asset_dir>/pki/`, generating whatever is missing, and returns it. Safe to call on every
 * run. Throws {@link PkiError} (naming the file, never its contents) when a file is unreadable, a
 * certificate and its key do not match, or only one half of a CA exists.
 */
export async function ensureClusterPki(
  assetDir: string,
  opts: EnsurePkiOptions = {},
): Promise<ClusterPki> {
  const dir = pkiDir(assetDir);
  if (!(await exists(dir))) {
    // A new PKI is generated in a staging directory and renamed into place, so a run killed
    // half-way leaves no half CA (which the next run would refuse to complete) behind.
    const written = await createStaged(dir, opts);
    const pki = await ensureIn(dir, opts);
    return { ...pki, written: [...written, ...pki.written] };
  }
  return ensureIn(dir, opts);
}

/** Prefix of the staging directories next to `pki/`; leftovers of killed runs are removed. */
const STAGING_PREFIX = 'pki.new-';

async function createStaged(dir: string, opts: EnsurePkiOptions): Promise<string[]> {
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true });
  // Callers hold the asset-dir lock: any staging directory here is a leftover of a killed run.
  for (const name of await readdir(parent)) {
    if (name.startsWith(STAGING_PREFIX))
      await rm(path.join(parent, name), { recursive: true, force: true });
  }
  const staging = path.join(
    parent,
    `${STAGING_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  try {
    const pki = await ensureIn(staging, opts);
    await rename(staging, dir);
    return pki.written;
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    // Another process (without the lock) got there first: use its PKI.
    if ((code === 'EEXIST' || code === 'ENOTEMPTY') && (await exists(dir))) return [];
    throw err;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new PkiError(`cannot read ${p}: ${(err as NodeJS.ErrnoException).code}`);
  }
}

async function ensureIn(dir: string, opts: EnsurePkiOptions): Promise<ClusterPki> {
  const now = opts.now ?? new Date();
  await ensureDir(dir);
  await ensureDir(path.join(dir, 'etcd'));
  const written: string[] = [];
  const files = new PkiFiles(dir, written);

  const ca = await ensureCa(files, PKI_FILES.caCert, PKI_FILES.caKey, 'kubernetes', now);
  const frontProxyCa = await ensureCa(
    files,
    PKI_FILES.frontProxyCaCert,
    PKI_FILES.frontProxyCaKey,
    'front-proxy-ca',
    now,
  );
  const etcdCa = await ensureCa(files, PKI_FILES.etcdCaCert, PKI_FILES.etcdCaKey, 'etcd-ca', now);
  const serviceAccount = await ensureServiceAccountKeys(files);
  const admin = await ensureAdmin(files, ca, now);

  for (const name of Object.values(PKI_FILES)) await chmod(path.join(dir, name), PKI_FILE_MODE);
  return {
    dir,
    ca,
    frontProxyCa,
    etcdCa,
    serviceAccount,
    admin,
    caCertHash: caCertHash(ca.certPem),
    written,
  };
}

/** Reads and writes files of one PKI directory, recording what it wrote. */
class PkiFiles {
  constructor(
    readonly dir: string,
    private readonly written: string[],
  ) {}

  path(name: string): string {
    return path.join(this.dir, name);
  }

  async read(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new PkiError(`cannot read ${this.path(name)}: ${(err as NodeJS.ErrnoException).code}`);
    }
  }

  /** Writes through a temporary file and a rename, so a reader never sees half a PEM. */
  async write(name: string, content: string): Promise<void> {
    const target = this.path(name);
    const tmp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await writeFile(tmp, content, { mode: PKI_FILE_MODE, flag: 'wx' });
      await chmod(tmp, PKI_FILE_MODE);
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw new PkiError(`cannot write ${target}: ${(err as NodeJS.ErrnoException).code}`);
    }
    this.written.push(name);
  }
}

async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PKI_DIR_MODE });
  const st = await lstat(dir);
  if (!st.isDirectory()) throw new PkiError(`${dir} exists and is not a directory`);
  await chmod(dir, PKI_DIR_MODE);
}

async function ensureCa(
  files: PkiFiles,
  certName: string,
  keyName: string,
  commonName: string,
  now: Date,
): Promise<CertificateAuthority> {
  const [certPem, keyPem] = [await files.read(certName), await files.read(keyName)];
  if (certPem !== undefined && keyPem !== undefined) {
    const cert = parseCert(certPem, files.path(certName));
    if (!cert.ca) {
      throw new PkiError(
        `${files.path(certName)} is not a CA certificate (basicConstraints CA:FALSE)`,
      );
    }
    checkKeyMatches(cert, keyPem, files.path(certName), files.path(keyName));
    return { certPem, key: new Secret(keyPem) };
  }
  if (certPem !== undefined || keyPem !== undefined) {
    const [have, missing] = certPem !== undefined ? [certName, keyName] : [keyName, certName];
    throw new PkiError(`${files.path(have)} exists but ${files.path(missing)} does not`, {
      hint:
        'loko never replaces half of a CA. Restore the missing file from a backup of the asset ' +
        'directory, or delete both files to create a new CA (machines of the existing cluster ' +
        'then no longer trust it).',
    });
  }
  const { createCa } = await import('./certs.js');
  const pair = await createCa({ commonName }, CA_VALIDITY_DAYS, now);
  // The key first: a crash between the two writes leaves a key without a certificate, which the
  // next run reports instead of silently pairing a new certificate with an unknown key.
  await files.write(keyName, pair.keyPem);
  await files.write(certName, pair.certPem);
  return { certPem: pair.certPem, key: new Secret(pair.keyPem) };
}

async function ensureServiceAccountKeys(
  files: PkiFiles,
): Promise<ControlPlanePki['serviceAccount']> {
  const keyName = PKI_FILES.serviceAccountKey;
  const pubName = PKI_FILES.serviceAccountPub;
  const [keyPem, pubPem] = [await files.read(keyName), await files.read(pubName)];
  if (keyPem !== undefined) {
    const derived = publicPemOf(keyPem, files.path(keyName));
    if (pubPem === undefined) {
      await files.write(pubName, derived);
      return { publicKeyPem: derived, privateKey: new Secret(keyPem) };
    }
    if (!samePublicKey(pubPem, derived)) {
      throw new PkiError(`${files.path(pubName)} is not the public half of ${files.path(keyName)}`);
    }
    return { publicKeyPem: pubPem, privateKey: new Secret(keyPem) };
  }
  if (pubPem !== undefined) {
    throw new PkiError(`${files.path(pubName)} exists but ${files.path(keyName)} does not`, {
      hint:
        'Restore sa.key from a backup of the asset directory, or delete sa.pub to create a new ' +
        'service-account key pair (tokens signed by the old key then stop working).',
    });
  }
  const { createKeyPair } = await import('./certs.js');
  const pair = await createKeyPair();
  await files.write(keyName, pair.privateKeyPem);
  await files.write(pubName, pair.publicKeyPem);
  return { publicKeyPem: pair.publicKeyPem, privateKey: new Secret(pair.privateKeyPem) };
}

async function ensureAdmin(
  files: PkiFiles,
  ca: CertificateAuthority,
  now: Date,
): Promise<ClusterPki['admin']> {
  const certPem = await files.read(PKI_FILES.adminCert);
  const keyPem = await files.read(PKI_FILES.adminKey);
  if (certPem !== undefined && keyPem !== undefined && adminStillGood(certPem, keyPem, ca, now)) {
    return { certPem, key: new Secret(keyPem) };
  }
  const { createClientCert } = await import('./certs.js');
  const pair = await createClientCert(
    { certPem: ca.certPem, keyPem: ca.key.reveal() },
    { commonName: ADMIN_USER, organizations: [ADMIN_GROUP] },
    ADMIN_VALIDITY_DAYS,
    now,
  );
  await files.write(PKI_FILES.adminKey, pair.keyPem);
  await files.write(PKI_FILES.adminCert, pair.certPem);
  return { certPem: pair.certPem, key: new Secret(pair.keyPem) };
}

/** Signed by this CA, matching its key, and not within the renewal window of its expiry. */
function adminStillGood(
  certPem: string,
  keyPem: string,
  ca: CertificateAuthority,
  now: Date,
): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const caCert = new X509Certificate(ca.certPem);
    if (!cert.checkIssued(caCert) || !cert.verify(caCert.publicKey)) return false;
    if (
      !samePublicKey(
        cert.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
        publicPemOf(keyPem, ''),
      )
    ) {
      return false;
    }
    const renewAt = new Date(cert.validTo).getTime() - ADMIN_RENEW_BEFORE_DAYS * 86_400_000;
    return now.getTime() < renewAt && now.getTime() >= new Date(cert.validFrom).getTime();
  } catch {
    return false;
  }
}

function parseCert(pem: string, file: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new PkiError(`${file} is not a readable PEM certificate`);
  }
}

function publicPemOf(keyPem: string, file: string): string {
  try {
    return createPublicKey(createPrivateKey(keyPem))
      .export({ type: 'spki', format: 'pem' })
      .toString();
  } catch {
    throw new PkiError(`${file} is not a readable PEM private key`);
  }
}

function samePublicKey(a: string, b: string): boolean {
  try {
    const da = createPublicKey(a).export({ type: 'spki', format: 'der' });
    const db = createPublicKey(b).export({ type: 'spki', format: 'der' });
    return da.equals(db);
  } catch {
    return false;
  }
}

function checkKeyMatches(cert: X509Certificate, keyPem: string, certFile: string, keyFile: string) {
  const fromKey = publicPemOf(keyPem, keyFile);
  const fromCert = cert.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  if (!samePublicKey(fromKey, fromCert)) {
    throw new PkiError(`${keyFile} is not the private key of ${certFile}`);
  }
}

/** One file of kubeadm's certificate directory; `name` is relative to it (`etcd/ca.key`). */
export interface KubeadmPkiFile {
  name: string;
  /** A certificate or public key as text; a private key as a {@link Secret}. */
  content: string | Secret;
}

/**
 * The shared control-plane files kubeadm expects in `certificatesDir` (`/etc/kubernetes/pki`)
 * before `kubeadm init` uses them instead of generating its own, and that `kubeadm join
 * --control-plane` requires when no certificate key is used. Never the admin certificate.
 */
export function kubeadmPkiFiles(pki: ControlPlanePki): KubeadmPkiFile[] {
  return [
    { name: PKI_FILES.caCert, content: pki.ca.certPem },
    { name: PKI_FILES.caKey, content: pki.ca.key },
    { name: PKI_FILES.frontProxyCaCert, content: pki.frontProxyCa.certPem },
    { name: PKI_FILES.frontProxyCaKey, content: pki.frontProxyCa.key },
    { name: PKI_FILES.etcdCaCert, content: pki.etcdCa.certPem },
    { name: PKI_FILES.etcdCaKey, content: pki.etcdCa.key },
    { name: PKI_FILES.serviceAccountKey, content: pki.serviceAccount.privateKey },
    { name: PKI_FILES.serviceAccountPub, content: pki.serviceAccount.publicKeyPem },
  ];
}
