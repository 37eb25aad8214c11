/**
 * Where the real control-plane binaries are, and what a Kubernetes suite does when they are not
 * there: skip with a notice on a developer machine, fail under `CI=true` (docs/testing.md).
 *
 * The directory is the one `scripts/kube-build.mjs` builds into (`LOKO_KUBE_BIN_DIR`, else
 * `${XDG_CACHE_HOME:-$HOME/.cache}/loko/k8s/<kubernetes version>/bin`); the rule is repeated here
 * rather than imported because the script is plain JavaScript without type declarations.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The binaries of the full harness (etcd + apiserver are the minimum). */
export const CORE_BINARIES = ['etcd', 'kube-apiserver'] as const;
/** Extra binaries a harness with controllers (rollouts, namespace deletion, fake nodes) needs. */
export const CONTROLLER_BINARIES = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

/** Versions pinned in tools/k8s/versions.json. */
export function kubeVersions(): { kubernetes: string; etcd: string; kwok: string } {
  return JSON.parse(readFileSync(join(REPO_ROOT, 'tools', 'k8s', 'versions.json'), 'utf8'));
}

/** The directory holding the binaries (same rule as scripts/kube-build.mjs `kubeBinDir`). */
export function kubeBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOKO_KUBE_BIN_DIR) return resolve(env.LOKO_KUBE_BIN_DIR);
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'loko', 'k8s', kubeVersions().kubernetes, 'bin');
}

/** True when the tests run under CI (`CI=true` or `CI=1`): missing binaries are then a failure. */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** Which of `names` are present and executable in `binDir`, and which are missing. */
export function checkBinaries(
  names: readonly string[],
  binDir: string = kubeBinDir(),
): { binDir: string; missing: string[] } {
  const missing = names.filter((n) => {
    try {
      accessSync(join(binDir, n), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  return { binDir, missing };
}

/** One line telling the reader what is missing and how to get it. */
export function missingNotice(binDir: string, missing: readonly string[]): string {
  return (
    `Kubernetes control-plane binaries missing in ${binDir}: ${missing.join(', ')}. ` +
    `Build them with \`npm run kube:build\` (docs/kube-binaries.md).`
  );
}
