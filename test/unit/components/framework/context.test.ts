import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildComponentContext,
  manifestCacheDir,
  MANIFEST_MIRROR_ENV,
} from '../../../../src/components/context.js';
import type { ConfiguredComponent } from '../../../../src/components/resolve.js';
import type { ComponentDefinition, UpstreamManifest } from '../../../../src/components/types.js';
import { fakeComponent } from './fake.js';

const manifest: UpstreamManifest = {
  name: 'thing',
  url: 'https://example.invalid/thing/v1/thing.yaml',
  sha256: 'a'.repeat(64),
  goModule: { module: 'example.invalid/thing', version: 'v1.0.0', path: 'thing.yaml' },
};
const withUpstream = fakeComponent({ name: 'up', extra: { upstream: [manifest] } });
const plain = fakeComponent({ name: 'plain' });
const set = (...defs: ComponentDefinition<never>[]): ConfiguredComponent[] =>
  defs.map((def) => ({ def: def as ComponentDefinition, config: {}, configured: false }));

describe('manifestCacheDir', () => {
  it('is <asset_dir>/manifests with a cluster, else the per-user cache', () => {
    expect(manifestCacheDir('/a/assets', {})).toBe('/a/assets/manifests');
    expect(manifestCacheDir(undefined, { HOME: '/home/u' })).toBe('/home/u/.cache/loko/manifests');
    expect(manifestCacheDir(undefined, { HOME: '/home/u', XDG_CACHE_HOME: '/xdg' })).toBe(
      path.join('/xdg', 'loko', 'manifests'),
    );
  });
});

describe('buildComponentContext', () => {
  it('fetches the set’s manifests with cache, mirror and dir, and carries the cluster facts', async () => {
    const calls: unknown[] = [];
    const ctx = await buildComponentContext({
      set: set(withUpstream as never, plain as never),
      assetDir: '/a/assets',
      manifestMirror: 'https://mirror.example.invalid/m',
      manifestDir: '/offline',
      env: { HOME: '/home/u' },
      clusterName: 'demo',
      podCidr: '10.2.0.0/16',
      metalApiKey: 'key',
      components: ['plain', 'up', 'other'],
      fetch: async (manifests, opts) => {
        calls.push({ names: manifests.map((m) => m.name), opts });
        return new Map([['thing', 'kind: Thing\n']]);
      },
    });
    expect(calls).toEqual([
      {
        names: ['thing'],
        opts: {
          cacheDir: '/a/assets/manifests',
          sharedCacheDirs: ['/home/u/.cache/loko/manifests'],
          mirror: 'https://mirror.example.invalid/m',
          dir: '/offline',
        },
      },
    ]);
    expect(ctx.upstream.get('thing')).toBe('kind: Thing\n');
    expect([...ctx.components]).toEqual(['plain', 'up', 'other']);
    expect(ctx.clusterName).toBe('demo');
    expect(ctx.podCidr).toBe('10.2.0.0/16');
    expect(ctx.metalApiKey).toBe('key');
    expect('metro' in ctx).toBe(false);
  });

  it(`${MANIFEST_MIRROR_ENV} overrides manifest_mirror; no manifests means no fetch`, async () => {
    let mirror: string | undefined;
    await buildComponentContext({
      set: set(withUpstream as never),
      manifestMirror: 'https://config.invalid',
      env: { [MANIFEST_MIRROR_ENV]: 'http://127.0.0.1:9/env/', HOME: '/h' },
      fetch: async (_m, opts) => {
        mirror = opts.mirror;
        return new Map();
      },
    });
    expect(mirror).toBe('http://127.0.0.1:9/env');
    const ctx = await buildComponentContext({
      set: set(plain as never),
      env: {},
      fetch: () => {
        throw new Error('must not fetch');
      },
    });
    expect(ctx.upstream.size).toBe(0);
    expect([...ctx.components]).toEqual(['plain']);
  });

  it(`a ${MANIFEST_MIRROR_ENV} that is not an http(s) URL is refused, naming the variable`, async () => {
    const err = await buildComponentContext({
      set: set(withUpstream as never),
      env: { [MANIFEST_MIRROR_ENV]: 'ftp:/x', HOME: '/h' },
      fetch: () => {
        throw new Error('must not fetch');
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`${MANIFEST_MIRROR_ENV}=ftp:/x is not an http(s) URL`);
  });
});
