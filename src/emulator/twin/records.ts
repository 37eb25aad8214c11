/**
 * The twin's records on disk, so that a later emulator (the next CLI run of the embedded one)
 * finds and reuses the control plane an earlier one started, and `stopTwin` can stop it without
 * any emulator running:
 *
 *   <twinDir>/twin/<endpoint address>/
 *     record.json      components (name, pid, binary, ports, log), owning device, CA hash
 *     pki/             certificates the twin issued from the userdata's CAs, kubeconfigs
 *     etcd/            etcd's data
 *     logs/<name>.log  component output; logs/twin.log the twin's own account (joins refused, …)
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { commandLineHas, isAlive, killGroupNow } from './processes.js';

export const RECORD_FORMAT = 'loko-emulator-twin';

/** One process of a cluster's control plane. */
export interface ComponentRecord {
  name: string;
  pid: number;
  binary: string;
  logFile: string;
  /** Named ports it listens on (all on the endpoint address). */
  ports: Record<string, number>;
}

/** What `record.json` holds. */
export interface ClusterRecord {
  format: typeof RECORD_FORMAT;
  version: 1;
  /** The control-plane endpoint address (loopback Elastic IP) and port. */
  address: string;
  port: number;
  clusterName: string;
  /** The device whose userdata holds the InitConfiguration. */
  controllerDeviceId: string;
  /** kubeadm's pin of the userdata's CA (a different CA means a different cluster). */
  caCertHash: string;
  createdAt: string;
  /** Whether the processes die with the emulator process that started them. */
  dieWithParent: boolean;
  /**
   * The Unix socket the apiserver's egress selector sends cluster traffic to (./egress.ts). A
   * record without one is of a twin before the egress proxy, never reused.
   */
  egressSocket?: string;
  components: ComponentRecord[];
}

/** `<twinDir>/twin`. */
export function twinRoot(twinDir: string): string {
  return join(twinDir, 'twin');
}

/** The directory of the cluster served on `address`. */
export function clusterDir(twinDir: string, address: string): string {
  return join(twinRoot(twinDir), address);
}

/** Reads a cluster's record (undefined when absent or unreadable). */
export function readRecord(dir: string): ClusterRecord | undefined {
  try {
    const rec = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as ClusterRecord;
    return rec.format === RECORD_FORMAT ? rec : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a cluster's record atomically (0600), and its entry in the machine-wide registry. */
export function writeRecord(dir: string, rec: ClusterRecord): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'record.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(rec, null, 2) + '\n', { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  register(dir, rec.components);
}

/**
 * The registry of running twin clusters of this user (`$TMPDIR/loko-twin-registry-<uid>/`): one
 * entry per cluster directory with its pids. It finds processes whose twin directory was deleted
 * while they ran (an asset dir removed without `cluster destroy`), which no record names any more.
 */
export function registryDir(): string {
  return join(tmpdir(), `loko-twin-registry-${process.getuid?.() ?? 'user'}`);
}

interface RegistryEntry {
  clusterDir: string;
  components: Array<{ pid: number; binary: string }>;
}

function registryFile(dir: string): string {
  const key = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 24);
  return join(registryDir(), `${key}.json`);
}

function register(dir: string, components: ComponentRecord[]): void {
  const file = registryFile(dir);
  try {
    if (components.length === 0) {
      rmSync(file, { force: true });
      return;
    }
    mkdirSync(registryDir(), { recursive: true, mode: 0o700 });
    const entry: RegistryEntry = {
      clusterDir: resolve(dir),
      components: components.map(({ pid, binary }) => ({ pid, binary })),
    };
    writeFileSync(`${file}.tmp`, JSON.stringify(entry) + '\n', { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    /* best effort: the record in the cluster directory is what counts */
  }
}

/** Drops a cluster directory's registry entry (its processes are stopped, its data removed). */
export function unregister(dir: string): void {
  rmSync(registryFile(dir), { force: true });
}

/**
 * Kills the processes of registered clusters whose directory is gone (only a pid whose command
 * line still names its binary and that directory), and drops entries that name nothing running.
 * Returns the directories swept.
 */
export function sweepOrphans(): string[] {
  let files: string[];
  try {
    files = readdirSync(registryDir()).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const swept: string[] = [];
  for (const f of files) {
    const file = join(registryDir(), f);
    let entry: RegistryEntry;
    try {
      entry = JSON.parse(readFileSync(file, 'utf8')) as RegistryEntry;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (existsSync(join(entry.clusterDir, 'record.json'))) continue;
    for (const c of entry.components) {
      if (commandLineHas(c.pid, c.binary, entry.clusterDir)) killGroupNow(c.pid);
    }
    rmSync(file, { force: true });
    swept.push(entry.clusterDir);
  }
  return swept;
}

/** Every cluster directory under `<twinDir>/twin` with its record. */
export function listClusters(twinDir: string): Array<{ dir: string; record?: ClusterRecord }> {
  let entries: string[];
  try {
    entries = readdirSync(twinRoot(twinDir));
  } catch {
    return [];
  }
  return entries
    .filter((e) => /^127\.\d+\.\d+\.\d+$/.test(e))
    .map((e) => {
      const dir = join(twinRoot(twinDir), e);
      const record = readRecord(dir);
      return record ? { dir, record } : { dir };
    });
}

/** Appends a line to the cluster's `logs/twin.log` (synchronously: lines stay in order). */
export function appendTwinLog(dir: string, line: string): void {
  try {
    appendFileSync(join(dir, 'logs', 'twin.log'), `${new Date().toISOString()} ${line}\n`, {
      mode: 0o600,
    });
  } catch {
    /* the directory went away (stopped meanwhile) */
  }
}

/** The lock file of the cluster on `address` (beside its directory, which a restart may wipe). */
export function lockFile(twinDir: string, address: string): string {
  return join(twinRoot(twinDir), `${address}.lock`);
}

/**
 * A lock across processes (two emulators on one twin dir must not run one cluster twice): a file
 * holding the owner's pid, taken over when that pid is gone. Returns a release function, or
 * undefined when another live process (or another twin of this one) holds it.
 */
export function tryLock(file: string): (() => void) | undefined {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  if (heldLocks.has(file)) return undefined;
  const release = () => {
    heldLocks.delete(file);
    rmSync(file, { force: true });
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      heldLocks.add(file);
      return release;
    } catch {
      let owner = NaN;
      try {
        owner = Number(readFileSync(file, 'utf8'));
      } catch {
        /* gone meanwhile */
      }
      // Held by another live process; a lock of this process that no one holds is stale.
      if (owner !== process.pid && Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        return undefined;
      }
      rmSync(file, { force: true });
    }
  }
  return undefined;
}

/** Locks this process holds (a second twin in the same process must not share them). */
const heldLocks = new Set<string>();
