/**
 * Upstream manifests for tests: the very bytes of each pinned manifest, taken from its Go module
 * in the module cache (`go mod download -json <module>@<version>` prints `Dir`; module zips hold
 * files byte for byte, so the pinned sha256 is checked against the real upstream file), served
 * from a loopback HTTP server in the `<host>/<path>` mirror layout or written as a manifest_dir,
 * so tests fetch through the real `fetchUpstreamManifests`.
 *
 * Network safety: `go` runs with `GOPROXY=off`, so it only reads the module cache and never dials
 * out; `npm run kube:build` is what downloads the modules (scripts/kube-build.mjs). Without them a
 * suite is skipped with a notice, or fails under CI=true (like the Kubernetes harness).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, it } from 'vitest';
import type { UpstreamManifest } from '../../../src/components/types.js';
import {
  fetchUpstreamManifests,
  mirrorRelativePath,
} from '../../../src/components/upstream/fetch.js';
import { isCI } from '../kube/binaries.js';

const dirs = new Map<string, string>();

/**
 * The module cache directory of `module@version` (`go mod download -json`, offline). Throws an
 * Error naming the module and `npm run kube:build` when it is not in the cache or `go` is missing.
 */
export function goModuleDir(module: string, version: string): string {
  const key = `${module}@${version}`;
  const known = dirs.get(key);
  if (known) return known;
  const r = spawnSync('go', ['mod', 'download', '-json', key], {
    encoding: 'utf8',
    // GOPROXY=off: read the module cache only, never the network. GOFLAGS must not carry
    // -mod=vendor from the caller's environment; outside a module it is irrelevant otherwise.
    env: { ...process.env, GOPROXY: 'off', GOFLAGS: '', GOTOOLCHAIN: 'local' },
    cwd: '/',
  });
  if (r.error) {
    throw new Error(`cannot run "go" to find ${key} in the module cache: ${r.error.message}`);
  }
  let info: { Dir?: string; Error?: string } = {};
  try {
    info = JSON.parse(r.stdout) as typeof info;
  } catch {
    // fall through to the error below
  }
  if (r.status !== 0 || !info.Dir) {
    throw new Error(
      `${key} is not in the Go module cache (${info.Error ?? r.stderr.trim()}); ` +
        'run `npm run kube:build`, which downloads the pinned manifest modules',
    );
  }
  dirs.set(key, info.Dir);
  return info.Dir;
}

/** Path of a pinned manifest's file inside its module in the module cache. */
export function pinnedFile(m: UpstreamManifest): string {
  return join(goModuleDir(m.goModule.module, m.goModule.version), ...m.goModule.path.split('/'));
}

/**
 * The pinned bytes of `m` from the module cache. Throws when their sha256 differs from the pin
 * (a wrong pin must fail the tests, not be served).
 */
export function pinnedBytes(m: UpstreamManifest): Buffer {
  const file = pinnedFile(m);
  const bytes = readFileSync(file);
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== m.sha256) {
    throw new Error(
      `${file} (${m.goModule.module}@${m.goModule.version}) has sha256 ${got}, pinned ${m.sha256}`,
    );
  }
  return bytes;
}

/** The pinned texts by manifest name, as the framework hands them to render. */
export function pinnedUpstream(manifests: readonly UpstreamManifest[]): Map<string, string> {
  return new Map(manifests.map((m) => [m.name, pinnedBytes(m).toString('utf8')]));
}

/** Why the manifests cannot be provided, or undefined when they can. */
export function upstreamUnavailable(manifests: readonly UpstreamManifest[]): string | undefined {
  try {
    for (const m of manifests) pinnedBytes(m);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * `describe` for suites that need pinned manifests: skipped with a notice when the modules are not
 * in the cache, one failing test under CI=true.
 */
export function describeUpstream(
  name: string,
  manifests: readonly UpstreamManifest[],
  fn: () => void,
): void {
  const why = upstreamUnavailable(manifests);
  if (why === undefined) {
    describe(name, fn);
    return;
  }
  if (isCI()) {
    describe(name, () => {
      it('has the pinned upstream manifests in the Go module cache (required when CI=true)', () => {
        throw new Error(why);
      });
    });
    return;
  }
  console.warn(`[upstream] skipping "${name}": ${why}`);
  describe.skip(name, fn);
}

/** What a mirror serves at one `<host>/<path>`. */
export interface MirrorEntry {
  /** Bytes to serve (default: the pinned bytes). */
  body?: Buffer | string;
  /** HTTP status (default 200). */
  status?: number;
}

/** A running loopback mirror. */
export interface ManifestMirror {
  /** Base URL, `http://127.0.0.1:<port>` (the `manifest_mirror` value). */
  url: string;
  /** Paths requested so far, in order (e.g. `/raw.githubusercontent.com/metallb/...`). */
  requests: string[];
  /** Replaces or adds what is served at `m`'s `<host>/<path>`. */
  set(m: UpstreamManifest, entry: MirrorEntry): void;
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (random port) serving each manifest at `/<host>/<path>` of
 * its URL: the pinned bytes, or what `overrides` (by manifest name) says. Unknown paths are 404.
 */
export async function startManifestMirror(
  manifests: readonly UpstreamManifest[],
  overrides: Readonly<Record<string, MirrorEntry>> = {},
): Promise<ManifestMirror> {
  const files = new Map<string, { body: Buffer; status: number }>();
  const set = (m: UpstreamManifest, e: MirrorEntry) => {
    const body = e.body === undefined ? pinnedBytes(m) : Buffer.from(e.body);
    files.set(`/${mirrorRelativePath(m.url)}`, { body, status: e.status ?? 200 });
  };
  for (const m of manifests) set(m, overrides[m.name] ?? {});
  const requests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(path);
    const f = files.get(path);
    if (!f) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(f.status, { 'content-type': 'text/plain; charset=utf-8' }).end(f.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Writes a manifest_dir: each manifest's pinned bytes (or `overrides[name]`) at
 * `<dir>/<host>/<path>` of its URL. Returns the written file paths by manifest name.
 */
export function writeManifestDir(
  dir: string,
  manifests: readonly UpstreamManifest[],
  overrides: Readonly<Record<string, Buffer | string>> = {},
): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of manifests) {
    const file = join(dir, ...mirrorRelativePath(m.url).split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, overrides[m.name] ?? pinnedBytes(m));
    out.set(m.name, file);
  }
  return out;
}

/**
 * Fetches `manifests` through the real `fetchUpstreamManifests` from a loopback mirror of the
 * pinned bytes (into a fresh cache directory), as `cluster apply` would with `manifest_mirror`.
 * Returns the texts and the paths the mirror served.
 */
export async function fetchPinned(
  manifests: readonly UpstreamManifest[],
): Promise<{ upstream: Map<string, string>; requests: string[] }> {
  const mirror = await startManifestMirror(manifests);
  const cacheDir = mkdtempSync(join(tmpdir(), 'loko-manifests-'));
  try {
    const upstream = await fetchUpstreamManifests(manifests, { cacheDir, mirror: mirror.url });
    return { upstream, requests: [...mirror.requests] };
  } finally {
    await mirror.close();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}
