/**
 * Where the twin finds the real Kubernetes binaries: `LOKO_KUBE_BIN_DIR`, else the cache directory
 * `npm run kube:build` fills (`${XDG_CACHE_HOME:-$HOME/.cache}/loko/k8s/<kubernetes version>/bin`,
 * docs/kube-binaries.md). The version comes from the repository's `tools/k8s/versions.json`, found
 * by walking up from this module to the package root, so the rule holds from `src/` (tests) and
 * from `dist/` (the built CLI) alike.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every binary the twin runs. */
export const TWIN_BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;
export type TwinBinary = (typeof TWIN_BINARIES)[number];

/** The package root: the nearest ancestor of this module holding tools/k8s/versions.json. */
function versionsFile(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'tools', 'k8s', 'versions.json');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The Kubernetes version the binaries are built at (tools/k8s/versions.json), if known. */
export function pinnedKubernetesVersion(): string | undefined {
  const file = versionsFile();
  if (!file) return undefined;
  try {
    const v = (JSON.parse(readFileSync(file, 'utf8')) as { kubernetes?: unknown }).kubernetes;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The directory the binaries are expected in, or undefined when neither `LOKO_KUBE_BIN_DIR` is set
 * nor the pinned version can be read (an installed package without the repository's tools/).
 */
export function kubeBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LOKO_KUBE_BIN_DIR) return resolve(env.LOKO_KUBE_BIN_DIR);
  const version = pinnedKubernetesVersion();
  if (!version) return undefined;
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'loko', 'k8s', version, 'bin');
}

/** Result of {@link findBinaries}. */
export type BinaryLookup =
  | { ok: true; binDir: string; paths: Record<TwinBinary, string> }
  | { ok: false; binDir: string | undefined; missing: string[] };

/** Looks for every binary the twin needs (present and executable). */
export function findBinaries(binDir: string | undefined = kubeBinDir()): BinaryLookup {
  if (!binDir) return { ok: false, binDir, missing: [...TWIN_BINARIES] };
  const missing = TWIN_BINARIES.filter((name) => {
    try {
      accessSync(join(binDir, name), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) return { ok: false, binDir, missing };
  const paths = Object.fromEntries(TWIN_BINARIES.map((n) => [n, join(binDir, n)])) as Record<
    TwinBinary,
    string
  >;
  return { ok: true, binDir, paths };
}
