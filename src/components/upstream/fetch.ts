/**
 * Obtains pinned third-party manifests (DESIGN.md §6, docs/manifests.md): every byte loko renders
 * from is checked against the sha256 pinned in the component's {@link UpstreamManifest} before use.
 *
 * Sources, in order, for each manifest:
 * 1. the cache `<cacheDir>/<sha256>.yaml` (re-verified on every read; a corrupt entry is ignored and
 *    replaced), then any `sharedCacheDirs` (e.g. the per-user cache `npm run kube:build` fills);
 * 2. `dir` (`manifest_dir`): the file `<dir>/<host>/<path>` of the URL, e.g.
 *    `<dir>/raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml`;
 * 3. HTTP(S): `<mirror>/<host>/<path>` when `mirror` (`manifest_mirror`) is set, else the URL.
 * A verified download is written to the cache atomically (temporary file + rename).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import type { UpstreamManifest } from '../types.js';
import { LokoError, InterruptedError } from '../../util/errors.js';

/** Options of {@link fetchUpstreamManifests}. */
export interface FetchUpstreamOptions {
  /** Cache directory (e.g. `<asset_dir>/manifests`); created when missing. */
  cacheDir: string;
  /** Base URL of a mirror holding `<host>/<path>` of each pinned URL (`manifest_mirror`). */
  mirror?: string;
  /** Local directory holding `<host>/<path>` of each pinned URL (`manifest_dir`). */
  dir?: string;
  /**
   * Further caches in the same `<sha256>.yaml` layout, read only (after `cacheDir`, before `dir`),
   * e.g. {@link userManifestCacheDir} that `npm run kube:build` fills for offline `--emulator`
   * runs. A verified hit is copied into `cacheDir`.
   */
  sharedCacheDirs?: readonly string[];
  /** Aborts downloads (Ctrl-C); rejects with {@link InterruptedError}. */
  signal?: AbortSignal;
  /** Per-download timeout in milliseconds (default {@link DEFAULT_FETCH_TIMEOUT_MS}). */
  timeoutMs?: number;
  /**
   * Download only from loopback hosts (a local mirror): the embedded emulator's runs stay on the
   * machine, so a missing cache is an error naming `npm run kube:build`, never a download.
   */
  loopbackOnly?: boolean;
}

/** True for `localhost`, 127.0.0.0/8 and ::1. */
function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Default per-download timeout: generous for a ~100 KiB file over a slow link. */
export const DEFAULT_FETCH_TIMEOUT_MS = 60_000;

const HINT_OFFLINE =
  'Without internet access, set manifest_dir (a directory holding <host>/<path> of each URL) or ' +
  'manifest_mirror (an HTTP server with the same layout); see docs/manifests.md.';

/**
 * The per-user manifest cache `${XDG_CACHE_HOME:-$HOME/.cache}/loko/manifests` (same `<sha256>.yaml`
 * layout), which `npm run kube:build` fills with the verified pinned manifests.
 */
export function userManifestCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache');
  return path.join(cacheHome, 'loko', 'manifests');
}

/** Lowercase hex sha256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Cache file of a manifest: `<cacheDir>/<sha256>.yaml`. */
export function cachePath(cacheDir: string, m: UpstreamManifest): string {
  return path.join(cacheDir, `${m.sha256}.yaml`);
}

/**
 * The `<host>/<path>` of a pinned URL, the layout of `manifest_dir` and `manifest_mirror`. Throws a
 * LokoError when the URL is not http(s) or its path would escape the layout (`..`).
 */
export function mirrorRelativePath(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new LokoError(`upstream manifest URL ${url} is not a valid URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new LokoError(`upstream manifest URL ${url} is not http(s)`);
  }
  const segments = decodeURIComponent(u.pathname).split('/').filter(Boolean);
  if (segments.some((s) => s === '..' || s === '.')) {
    throw new LokoError(`upstream manifest URL ${url} has '.' or '..' path segments`);
  }
  return [u.host, ...segments].join('/');
}

/** Joins a mirror base URL and a `<host>/<path>` relative path with exactly one slash. */
export function mirrorUrl(mirror: string, url: string): string {
  return `${mirror.replace(/\/+$/, '')}/${mirrorRelativePath(url)}`;
}

/** The sha256-mismatch error: names where the bytes came from and both digests. */
export function digestMismatch(m: UpstreamManifest, source: string, actual: string): LokoError {
  const origin = source === m.url ? m.url : `${source} (for ${m.url})`;
  return new LokoError(
    `upstream manifest ${m.name}: sha256 mismatch for ${origin}: expected ${m.sha256}, got ${actual}`,
    {
      hint:
        'The bytes differ from the pinned release. Use the exact file of the pinned tag (a mirror ' +
        'or manifest_dir must hold it byte for byte), or check for a proxy rewriting the download.',
    },
  );
}

/**
 * Reads, verifies and returns every manifest's text, keyed by {@link UpstreamManifest.name}.
 * Duplicate names must carry the same URL and digest (they are fetched once).
 *
 * Errors (LokoError): a digest mismatch (naming the URL or file and both digests), an HTTP status
 * other than 200, a network failure or timeout (naming the URL and suggesting manifest_dir /
 * manifest_mirror), a missing file in `dir`. An aborted `signal` rejects with InterruptedError.
 */
export async function fetchUpstreamManifests(
  manifests: readonly UpstreamManifest[],
  opts: FetchUpstreamOptions,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const seen = new Map<string, UpstreamManifest>();
  for (const m of manifests) {
    const prev = seen.get(m.name);
    if (prev) {
      if (prev.url !== m.url || prev.sha256 !== m.sha256) {
        throw new LokoError(
          `upstream manifest name ${m.name} is pinned twice with different sources (${prev.url} and ${m.url})`,
        );
      }
      continue;
    }
    seen.set(m.name, m);
  }
  // Sequential on purpose: a handful of files, and a clear first error beats parallel noise.
  for (const m of seen.values()) {
    checkDigestShape(m);
    out.set(m.name, await fetchOne(m, opts));
  }
  return out;
}

function checkDigestShape(m: UpstreamManifest): void {
  if (!/^[0-9a-f]{64}$/.test(m.sha256)) {
    throw new LokoError(
      `upstream manifest ${m.name}: pinned sha256 "${m.sha256}" is not 64 lowercase hex digits`,
    );
  }
}

async function fetchOne(m: UpstreamManifest, opts: FetchUpstreamOptions): Promise<string> {
  throwIfAborted(opts.signal);
  const cached = await readCache(m, opts.cacheDir);
  if (cached !== undefined) return Buffer.from(cached).toString('utf8');
  for (const shared of opts.sharedCacheDirs ?? []) {
    const hit = await readCache(m, shared);
    if (hit === undefined) continue;
    await writeCache(opts.cacheDir, m, hit);
    return Buffer.from(hit).toString('utf8');
  }

  let bytes: Uint8Array;
  let source: string;
  if (opts.dir !== undefined) {
    source = path.join(opts.dir, ...mirrorRelativePath(m.url).split('/'));
    bytes = await readFromDir(m, source);
  } else {
    source = opts.mirror !== undefined ? mirrorUrl(opts.mirror, m.url) : m.url;
    bytes = await download(m, source, opts);
  }
  const actual = sha256Hex(bytes);
  if (actual !== m.sha256) throw digestMismatch(m, source, actual);
  await writeCache(opts.cacheDir, m, bytes);
  return Buffer.from(bytes).toString('utf8');
}

async function readCache(m: UpstreamManifest, cacheDir: string): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(cachePath(cacheDir, m));
  } catch {
    return undefined;
  }
  // A cache entry is trusted only after re-verification: a truncated or edited file is refetched.
  if (sha256Hex(bytes) !== m.sha256) return undefined;
  return bytes;
}

async function writeCache(cacheDir: string, m: UpstreamManifest, bytes: Uint8Array): Promise<void> {
  const final = cachePath(cacheDir, m);
  const tmp = `${final}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(cacheDir, { recursive: true });
    await writeFile(tmp, bytes, { mode: 0o644 });
    await rename(tmp, final);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new LokoError(`cannot write the manifest cache ${final}: ${(err as Error).message}`, {
      hint: 'Check that the cache directory is writable.',
      cause: err,
    });
  }
}

async function readFromDir(m: UpstreamManifest, file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LokoError(
      `upstream manifest ${m.name}: cannot read ${file} from manifest_dir (${code ?? (err as Error).message})`,
      {
        hint: `Put the file of ${m.url} at <manifest_dir>/<host>/<path>, i.e. ${file} (sha256 ${m.sha256}); see docs/manifests.md.`,
        cause: err,
      },
    );
  }
}

async function download(
  m: UpstreamManifest,
  url: string,
  opts: FetchUpstreamOptions,
): Promise<Uint8Array> {
  if (opts.loopbackOnly && !isLoopbackHost(new URL(url).hostname)) {
    throw new LokoError(
      `upstream manifest ${m.name} is not cached, and runs on the embedded emulator do not download (${url})`,
      {
        hint: 'Run `npm run kube:build` once (it fills the manifest cache from the Go module proxy), or point manifest_mirror / LOKO_MANIFEST_MIRROR at a local mirror, or set manifest_dir (docs/manifests.md).',
      },
    );
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: 'follow' });
    if (res.status !== 200) {
      // Drain so the connection can be reused / closed cleanly.
      await res.body?.cancel().catch(() => undefined);
      throw new LokoError(
        `upstream manifest ${m.name}: GET ${url} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
        {
          hint:
            opts.mirror !== undefined
              ? `The mirror must serve the file at <mirror>/<host>/<path>; see docs/manifests.md.`
              : HINT_OFFLINE,
        },
      );
    }
    return new Uint8Array(await res.arrayBuffer());
  } catch (err) {
    if (err instanceof LokoError) throw err;
    throwIfAborted(opts.signal);
    if (timeout.aborted) {
      throw new LokoError(
        `upstream manifest ${m.name}: GET ${url} did not finish within ${Math.round(timeoutMs / 1000)}s`,
        { hint: HINT_OFFLINE, cause: err },
      );
    }
    throw new LokoError(
      `upstream manifest ${m.name}: cannot download ${url}: ${describeFetchError(err)}`,
      { hint: HINT_OFFLINE, cause: err },
    );
  }
}

/** undici wraps the system error in `cause`; show its code (ECONNREFUSED, ENOTFOUND...). */
function describeFetchError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  if (cause?.message) return cause.message;
  return e.message ?? String(err);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('manifest download interrupted');
}
