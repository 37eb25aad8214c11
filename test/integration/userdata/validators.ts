/**
 * The real validators of the userdata suites: `cloud-init schema` (Debian package `cloud-init`) and
 * the pinned `kubeadm` built by `npm run kube:build`. Missing outside CI: the suite skips with a
 * notice. Missing under `CI=true`: the suite fails (`.ci/run` installs/builds both).
 */
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface Validator {
  /** Executable path, absent when missing. */
  path?: string;
  /** What `--version` printed, e.g. `22.4.2` or `v1.36.3`. */
  version?: string;
  /** Why it is missing and how to get it. */
  notice: string;
}

export const isCI = process.env.CI === 'true' || process.env.CI === '1';

/** `cloud-init` on PATH. */
export function findCloudInit(): Validator {
  const r = spawnSync('cloud-init', ['--version'], { encoding: 'utf8' });
  const notice =
    'cloud-init is not installed. Install it with ' +
    '`apt-get update && apt-get install -y cloud-init` (it starts no service in a container).';
  if (r.status !== 0) return { notice };
  const version = /(\d+\.\d+(\.\d+)?)/.exec(`${r.stdout}${r.stderr}`)?.[1];
  return { path: 'cloud-init', version, notice };
}

/** The kubeadm of tools/k8s/versions.json in kube-build's bin dir (same rule as the script). */
export function findKubeadm(env: NodeJS.ProcessEnv = process.env): Validator {
  const versions = JSON.parse(
    readFileSync(join(REPO_ROOT, 'tools', 'k8s', 'versions.json'), 'utf8'),
  ) as { kubernetes: string };
  const binDir = env.LOKO_KUBE_BIN_DIR
    ? resolve(env.LOKO_KUBE_BIN_DIR)
    : join(
        env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'),
        'loko',
        'k8s',
        versions.kubernetes,
        'bin',
      );
  const path = join(binDir, 'kubeadm');
  const notice =
    `kubeadm is missing in ${binDir}. ` +
    'Build it with `npm run kube:build` (docs/kube-binaries.md).';
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { notice };
  }
  const r = spawnSync(path, ['version', '-o', 'short'], { encoding: 'utf8' });
  return { path, version: r.stdout.trim() || undefined, notice };
}

/** Runs a validator; resolves with its exit code and combined output (never rejects on exit != 0). */
export function run(
  file: string,
  args: string[],
  opts: { cwd?: string } = {},
): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { timeout: 60_000, cwd: opts.cwd, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}
