/**
 * fetchUpstreamManifests against a loopback mirror and temp directories: digest checks (the
 * mismatch message names the URL and both digests), the mirror and manifest_dir layouts, the cache
 * (re-verified on read, repaired when corrupt, shared caches), offline and HTTP errors.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UpstreamManifest } from '../../../../src/components/types.js';
import {
  cachePath,
  fetchUpstreamManifests,
  mirrorRelativePath,
  mirrorUrl,
  userManifestCacheDir,
} from '../../../../src/components/upstream/fetch.js';
import { InterruptedError, LokoError } from '../../../../src/util/errors.js';
import {
  startManifestMirror,
  writeManifestDir,
  type ManifestMirror,
} from '../../../harness/upstream/index.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const TEXT_A = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';
const TEXT_B = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n';

const manifest = (
  name: string,
  text: string,
  path = `org/repo/v1.0.0/${name}.yaml`,
): UpstreamManifest => ({
  name,
  // Never dialled: tests fetch through a loopback mirror or a directory.
  url: `https://upstream.example.test/${path}`,
  sha256: sha(text),
  goModule: { module: 'example.test/none', version: 'v1.0.0', path: `${name}.yaml` },
});

const A = manifest('a', TEXT_A);
const B = manifest('b', TEXT_B, 'other/repo/v2.0.0/deploy/b.yaml');

/** A loopback port with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

let tmp: string;
let cacheDir: string;
let mirror: ManifestMirror | undefined;

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loko-upstream-'));
  cacheDir = join(tmp, 'cache');
});
afterEach(async () => {
  await mirror?.close();
  mirror = undefined;
  rmSync(tmp, { recursive: true, force: true });
});

describe('mirror layout', () => {
  it('maps a URL to <host>/<path>', () => {
    expect(mirrorRelativePath(A.url)).toBe('upstream.example.test/org/repo/v1.0.0/a.yaml');
    expect(
      mirrorRelativePath(
        'https://raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml',
      ),
    ).toBe(
      'raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml',
    );
    expect(mirrorUrl('http://10.0.0.1:8080/mirror/', A.url)).toBe(
      'http://10.0.0.1:8080/mirror/upstream.example.test/org/repo/v1.0.0/a.yaml',
    );
  });

  it('refuses URLs that are not http(s) or escape the layout', () => {
    expect(() => mirrorRelativePath('file:///etc/passwd')).toThrow(/not http\(s\)/);
    expect(() => mirrorRelativePath('https://h.test/a/..%2Fb')).toThrow(/'\.\.'/);
  });
});

describe('fetchUpstreamManifests', () => {
  it('downloads from <mirror>/<host>/<path>, verifies, and caches as <sha256>.yaml', async () => {
    mirror = await startManifestMirror([A, B], { a: { body: TEXT_A }, b: { body: TEXT_B } });
    const got = await fetchUpstreamManifests([A, B], { cacheDir, mirror: mirror.url });
    expect([...got.entries()]).toEqual([
      ['a', TEXT_A],
      ['b', TEXT_B],
    ]);
    expect(mirror.requests).toEqual([
      '/upstream.example.test/org/repo/v1.0.0/a.yaml',
      '/upstream.example.test/other/repo/v2.0.0/deploy/b.yaml',
    ]);
    expect(readFileSync(cachePath(cacheDir, A), 'utf8')).toBe(TEXT_A);
    expect(readdirSync(cacheDir).sort()).toEqual([`${A.sha256}.yaml`, `${B.sha256}.yaml`].sort());
  });

  it('loopbackOnly (the embedded emulator): a loopback mirror serves, the URL itself is never fetched', async () => {
    mirror = await startManifestMirror([A], { a: { body: TEXT_A } });
    const got = await fetchUpstreamManifests([A], {
      cacheDir,
      mirror: mirror.url,
      loopbackOnly: true,
    });
    expect(got.get('a')).toBe(TEXT_A);
    const err = await rejection(
      fetchUpstreamManifests([B], { cacheDir: join(tmp, 'empty'), loopbackOnly: true }),
    );
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toContain('do not download');
    expect(err.message).toContain(B.url);
    expect((err as LokoError).hint).toContain('npm run kube:build');
  });

  it('serves a second call from the cache without any request', async () => {
    mirror = await startManifestMirror([A], { a: { body: TEXT_A } });
    await fetchUpstreamManifests([A], { cacheDir, mirror: mirror.url });
    await mirror.close();
    mirror = undefined;
    const port = await closedPort();
    const got = await fetchUpstreamManifests([A], { cacheDir, mirror: `http://127.0.0.1:${port}` });
    expect(got.get('a')).toBe(TEXT_A);
  });

  it('re-verifies the cache on read: a corrupt entry is fetched again and repaired', async () => {
    mirror = await startManifestMirror([A], { a: { body: TEXT_A } });
    await fetchUpstreamManifests([A], { cacheDir, mirror: mirror.url });
    writeFileSync(cachePath(cacheDir, A), TEXT_A.replace('name: a', 'name: evil'));
    const got = await fetchUpstreamManifests([A], { cacheDir, mirror: mirror.url });
    expect(got.get('a')).toBe(TEXT_A);
    expect(mirror.requests).toHaveLength(2);
    expect(readFileSync(cachePath(cacheDir, A), 'utf8')).toBe(TEXT_A);
  });

  it('never uses a corrupt cache entry when no source can deliver the bytes', async () => {
    const port = await closedPort();
    await fetchUpstreamManifests([A], { cacheDir, dir: writeDir({ a: TEXT_A }) });
    writeFileSync(cachePath(cacheDir, A), 'tampered');
    const err = await rejection(
      fetchUpstreamManifests([A], { cacheDir, mirror: `http://127.0.0.1:${port}` }),
    );
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toContain(
      `http://127.0.0.1:${port}/upstream.example.test/org/repo/v1.0.0/a.yaml`,
    );
  });

  it('refuses a mismatching mirror file naming the mirror URL, the pinned URL and both digests', async () => {
    const bad = TEXT_A + '# changed\n';
    mirror = await startManifestMirror([A], { a: { body: bad } });
    const err = await rejection(fetchUpstreamManifests([A], { cacheDir, mirror: mirror.url }));
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toContain(`${mirror.url}/upstream.example.test/org/repo/v1.0.0/a.yaml`);
    expect(err.message).toContain(A.url);
    expect(err.message).toContain(`expected ${A.sha256}`);
    expect(err.message).toContain(`got ${sha(bad)}`);
    expect(existsSync(cachePath(cacheDir, A))).toBe(false);
  });

  it('refuses a mismatching download from the URL itself, naming that URL and both digests', async () => {
    const bad = 'kind: Tampered\n';
    mirror = await startManifestMirror([A], { a: { body: bad } });
    // The pinned URL itself points at the loopback server (no mirror option).
    const direct: UpstreamManifest = { ...A, url: `${mirror.url}/${mirrorRelativePath(A.url)}` };
    const err = await rejection(fetchUpstreamManifests([direct], { cacheDir }));
    expect(err.message).toBe(
      `upstream manifest a: sha256 mismatch for ${direct.url}: expected ${A.sha256}, got ${sha(bad)}`,
    );
    expect((err as LokoError).hint).toMatch(/pinned tag/);
  });

  it('reads <dir>/<host>/<path> from manifest_dir without any network', async () => {
    const dir = writeDir({ a: TEXT_A, b: TEXT_B });
    const got = await fetchUpstreamManifests([A, B], {
      cacheDir,
      dir,
      mirror: 'http://127.0.0.1:9',
    });
    expect(got.get('b')).toBe(TEXT_B);
    expect(existsSync(cachePath(cacheDir, B))).toBe(true);
  });

  it('refuses a mismatching manifest_dir file naming the file and both digests', async () => {
    const dir = writeDir({ a: 'not the pinned bytes' });
    const err = await rejection(fetchUpstreamManifests([A], { cacheDir, dir }));
    const file = join(dir, 'upstream.example.test', 'org', 'repo', 'v1.0.0', 'a.yaml');
    expect(err.message).toContain(file);
    expect(err.message).toContain(A.url);
    expect(err.message).toContain(A.sha256);
    expect(err.message).toContain(sha('not the pinned bytes'));
  });

  it('names the expected path when manifest_dir lacks a file', async () => {
    const dir = join(tmp, 'empty');
    const err = await rejection(fetchUpstreamManifests([A], { cacheDir, dir }));
    expect(err.message).toContain(
      join(dir, 'upstream.example.test', 'org', 'repo', 'v1.0.0', 'a.yaml'),
    );
    expect(err.message).toContain('ENOENT');
  });

  it('offline: names the URL and suggests manifest_mirror / manifest_dir', async () => {
    const port = await closedPort();
    const offline: UpstreamManifest = { ...A, url: `http://127.0.0.1:${port}/x/a.yaml` };
    const err = await rejection(fetchUpstreamManifests([offline], { cacheDir }));
    expect(err).toBeInstanceOf(LokoError);
    expect(err.message).toBe(
      `upstream manifest a: cannot download http://127.0.0.1:${port}/x/a.yaml: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port})`,
    );
    expect((err as LokoError).hint).toMatch(/manifest_dir/);
    expect((err as LokoError).hint).toMatch(/manifest_mirror/);
  });

  it('reports a non-200 answer with its status', async () => {
    mirror = await startManifestMirror([A], { a: { body: 'gone', status: 404 } });
    const err = await rejection(fetchUpstreamManifests([A], { cacheDir, mirror: mirror.url }));
    expect(err.message).toContain('answered HTTP 404');
    expect(err.message).toContain(`${mirror.url}/upstream.example.test/org/repo/v1.0.0/a.yaml`);
  });

  it('times out naming the URL', async () => {
    // An HTTP server that takes the request and never answers.
    const srv = createHttpServer(() => undefined);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    try {
      const err = await rejection(
        fetchUpstreamManifests([A], {
          cacheDir,
          mirror: `http://127.0.0.1:${port}`,
          timeoutMs: 200,
        }),
      );
      expect(err.message).toMatch(/did not finish within/);
      expect(err.message).toContain(`http://127.0.0.1:${port}/upstream.example.test/`);
      expect((err as LokoError).hint).toMatch(/manifest_dir/);
    } finally {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('an aborted signal rejects with InterruptedError', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await rejection(
      fetchUpstreamManifests([A], { cacheDir, mirror: 'http://127.0.0.1:9', signal: ac.signal }),
    );
    expect(err).toBeInstanceOf(InterruptedError);
  });

  it('takes a verified entry of a shared cache and copies it into the cache', async () => {
    const shared = join(tmp, 'shared');
    await fetchUpstreamManifests([A], { cacheDir: shared, dir: writeDir({ a: TEXT_A }) });
    const got = await fetchUpstreamManifests([A], {
      cacheDir,
      sharedCacheDirs: [join(tmp, 'missing'), shared],
      mirror: 'http://127.0.0.1:9',
    });
    expect(got.get('a')).toBe(TEXT_A);
    expect(readFileSync(cachePath(cacheDir, A), 'utf8')).toBe(TEXT_A);
  });

  it('ignores a corrupt shared cache entry', async () => {
    const shared = join(tmp, 'shared');
    await fetchUpstreamManifests([A], { cacheDir: shared, dir: writeDir({ a: TEXT_A }) });
    writeFileSync(cachePath(shared, A), 'bad');
    mirror = await startManifestMirror([A], { a: { body: TEXT_A } });
    await fetchUpstreamManifests([A], { cacheDir, sharedCacheDirs: [shared], mirror: mirror.url });
    expect(mirror.requests).toHaveLength(1);
  });

  it('refuses a malformed pin and one name pinned twice differently', async () => {
    await expect(fetchUpstreamManifests([{ ...A, sha256: 'ABC' }], { cacheDir })).rejects.toThrow(
      /not 64 lowercase hex/,
    );
    await expect(fetchUpstreamManifests([A, { ...B, name: 'a' }], { cacheDir })).rejects.toThrow(
      /pinned twice/,
    );
  });

  it('puts the per-user cache under XDG_CACHE_HOME or ~/.cache', () => {
    expect(userManifestCacheDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/loko/manifests');
    expect(userManifestCacheDir({ HOME: '/home/u' })).toBe('/home/u/.cache/loko/manifests');
  });
});

function writeDir(texts: Record<string, string>): string {
  const dir = join(tmp, `dir-${Object.keys(texts).join('')}-${readdirSync(tmp).length}`);
  const ms = [A, B].filter((m) => m.name in texts);
  writeManifestDir(dir, ms, texts);
  return dir;
}
