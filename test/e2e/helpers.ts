/**
 * Helpers for e2e tests: spawn the built `bin/loko` (run `npm run build` first; `npm run test:e2e`
 * does) against a temporary copy of examples/quickstart, so each test has its own asset dir and
 * embedded-emulator state.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'loko');

/** Fails early with a clear message when the build is missing. */
export function requireBuild(): void {
  if (!existsSync(path.join(ROOT, 'dist', 'cli.js'))) {
    throw new Error('dist/cli.js is missing: run `npm run build` (npm run test:e2e does it)');
  }
}

/**
 * A Kubernetes binary directory that does not exist: emulators started with it (embedded or `loko
 * emulator start`) run without their Kubernetes twin, so tests of machine behaviour stay
 * machine-only and fast whether or not `npm run kube:build` has run. Tests of the Kubernetes
 * flow pass `LOKO_KUBE_BIN_DIR: undefined` (or a directory) to {@link baseEnv}.
 */
export const NO_KUBE_BIN_DIR = '/nonexistent/loko-e2e-machines-only';

/**
 * Environment for spawned runs: no real endpoint, no colour, a fast embedded emulator, and no
 * Kubernetes twin unless `extra` sets LOKO_KUBE_BIN_DIR (undefined: the default directory).
 */
export function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    LOKO_EMULATOR_TIME_SCALE: '10',
    LOKO_KUBE_BIN_DIR: NO_KUBE_BIN_DIR,
    ...extra,
  };
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete env[k];
  for (const k of ['METAL_API_URL', 'METAL_AUTH_TOKEN', 'FORCE_COLOR'])
    if (!(k in extra)) delete env[k];
  for (const k of Object.keys(env)) if (k.startsWith('LOKO_VAR_')) delete env[k];
  return env;
}

/** A temporary copy of examples/quickstart; `assets` is inside it (asset_dir = "./assets"). */
export async function quickstartCopy(): Promise<{
  dir: string;
  assets: string;
  cleanup(): Promise<void>;
}> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'loko-e2e-'));
  const dir = path.join(tmp, 'quickstart');
  await cp(path.join(ROOT, 'examples', 'quickstart'), dir, {
    recursive: true,
    filter: (src) => !src.split(path.sep).includes('assets'),
  });
  return {
    dir,
    assets: path.join(dir, 'assets'),
    cleanup: () => rm(tmp, { recursive: true, force: true }),
  };
}

/** Result of a finished run. */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A spawned run that can be watched and signalled before it ends. */
export interface Running {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once stderr (or stdout) contains `pattern`. */
  waitFor(pattern: string | RegExp): Promise<void>;
  done: Promise<RunResult>;
  stderr(): string;
}

/** Spawns `node bin/loko ...args` with stdin closed (never a TTY). */
export function start(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: opts.env ?? baseEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ pattern: string | RegExp; resolve: () => void }> = [];
  const check = (): void => {
    for (const w of [...waiters]) {
      const text = stderr + stdout;
      if (typeof w.pattern === 'string' ? text.includes(w.pattern) : w.pattern.test(text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    check();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    check();
  });
  const done = new Promise<RunResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    done,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ pattern, resolve });
        check();
        void done.then((r) =>
          reject(
            new Error(
              `loko exited (${r.code ?? r.signal}) before printing ${String(pattern)}:\n${r.stderr}`,
            ),
          ),
        );
      }),
  };
}

/** Runs `node bin/loko ...args` to completion. */
export function loko(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  return start(args, opts).done;
}

/** A `loko emulator start` process and what its ready file says. */
export interface StartedEmulator {
  url: string;
  controlUrl: string;
  token: string;
  projectId: string;
  proc: Running;
  /** POSTs/PUTs JSON to the control API (`/_emulator/...`). */
  control(method: string, route: string, body?: unknown): Promise<unknown>;
  stop(): Promise<RunResult>;
}

/** Starts `loko emulator start --ready-file` in `dir` and waits until it serves. */
export async function startEmulatorProcess(
  dir: string,
  projectId: string,
  extraArgs: string[] = [],
): Promise<StartedEmulator> {
  const { readFile } = await import('node:fs/promises');
  const readyFile = path.join(dir, 'ready.json');
  const proc = start([
    'emulator',
    'start',
    '--ready-file',
    readyFile,
    '--project-id',
    projectId,
    ...extraArgs,
  ]);
  await proc.waitFor('Press Ctrl-C to stop.');
  const ready = JSON.parse(await readFile(readyFile, 'utf8')) as {
    url: string;
    token: string;
    projectId: string;
  };
  const controlUrl = ready.url.replace(/\/metal\/v1$/, '/_emulator');
  return {
    ...ready,
    controlUrl,
    proc,
    async control(method, route, body) {
      const res = await fetch(`${controlUrl}${route}`, {
        method,
        headers: {
          'x-auth-token': ready.token,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
      const text = await res.text();
      return text ? (JSON.parse(text) as unknown) : null;
    },
    async stop() {
      proc.child.kill('SIGINT');
      return proc.done;
    },
  };
}
