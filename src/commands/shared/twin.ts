/**
 * The embedded emulator's Kubernetes twin, as the commands see it (`--emulator`): is it on (so
 * `cluster apply` waits for the Kubernetes API it serves), and stopping its processes on
 * `cluster destroy`. The twin itself lives in src/emulator/twin; commands reach it only through
 * the emulator's exports (`twinStatus`, `stopTwin`), loaded lazily.
 *
 * The binary-directory rule is the twin's own (and `scripts/kube-build.mjs`'s), repeated here
 * because src/emulator depends on nothing outside itself: `LOKO_KUBE_BIN_DIR`, else
 * `${XDG_CACHE_HOME:-$HOME/.cache}/loko/k8s/<version>/bin`, the version being the pinned default
 * (src/config/defaults.ts, kept equal to tools/k8s/versions.json by a unit test).
 */
import { access, constants } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { DEFAULT_KUBERNETES_VERSION } from '../../config/defaults.js';

/** Overrides the directory of the Kubernetes binaries (also for `npm run kube:build`). */
export const KUBE_BIN_DIR_ENV = 'LOKO_KUBE_BIN_DIR';

/** The binaries the twin runs. */
export const TWIN_BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;

/** Where the twin looks for its binaries. */
export function kubeBinDir(env: Record<string, string | undefined>): string {
  const override = env[KUBE_BIN_DIR_ENV];
  if (override) return path.resolve(override);
  const cacheHome = env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache');
  return path.join(cacheHome, 'loko', 'k8s', DEFAULT_KUBERNETES_VERSION, 'bin');
}

/** Whether the twin serves a Kubernetes API for the embedded emulator, and if not, why. */
export type TwinAvailability = { on: true; binDir: string } | { on: false; reason: string };

/** The emulator's twin entry points, when this build has them. */
interface TwinExports {
  twinStatus: (twinDir: string) => unknown;
  stopTwin: (twinDir: string) => unknown;
}

async function twinExports(): Promise<TwinExports | undefined> {
  const mod = (await import('../../emulator/index.js')) as Record<string, unknown>;
  return typeof mod.twinStatus === 'function' && typeof mod.stopTwin === 'function'
    ? (mod as unknown as TwinExports)
    : undefined;
}

/**
 * Is the twin on for `--emulator`? Off when this build of the emulator has no twin, or when a
 * binary it runs is missing or not executable in {@link kubeBinDir}.
 */
export async function emulatorTwin(
  env: Record<string, string | undefined>,
): Promise<TwinAvailability> {
  if (!(await twinExports())) {
    return { on: false, reason: 'this build of the emulator has no Kubernetes twin' };
  }
  const binDir = kubeBinDir(env);
  const missing: string[] = [];
  for (const name of TWIN_BINARIES) {
    try {
      await access(path.join(binDir, name), constants.X_OK);
    } catch {
      missing.push(name);
    }
  }
  if (missing.length > 0) {
    return {
      on: false,
      reason: `Kubernetes binaries missing in ${binDir} (${missing.join(', ')}); build them with \`npm run kube:build\``,
    };
  }
  return { on: true, binDir };
}

/** The twin's directory for a cluster: the embedded emulator's, `<asset_dir>/emulator`. */
export function twinDir(assetDir: string): string {
  return path.join(assetDir, 'emulator');
}

/**
 * Stops the twin's processes recorded under `<asset_dir>/emulator` (`cluster destroy
 * --emulator`). Resolves false when this build of the emulator has no twin (nothing can run).
 */
export async function stopEmulatorTwin(assetDir: string): Promise<boolean> {
  const twin = await twinExports();
  if (!twin) return false;
  await twin.stopTwin(twinDir(assetDir));
  return true;
}
