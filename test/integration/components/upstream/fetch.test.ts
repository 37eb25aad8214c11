/**
 * The pinned upstream manifests through the real fetch code: the real files (from the Go module
 * cache) served by a loopback mirror and written as a manifest_dir verify against the pins; a
 * copy with one byte changed is refused naming the URL and both digests.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FLANNEL_MANIFEST } from '../../../../src/components/flannel/index.js';
import { METALLB_MANIFEST } from '../../../../src/components/metallb/index.js';
import { fetchUpstreamManifests } from '../../../../src/components/upstream/fetch.js';
import { parseManifest } from '../../../../src/components/upstream/parse.js';
import {
  describeUpstream,
  fetchPinned,
  pinnedBytes,
  startManifestMirror,
  writeManifestDir,
} from '../../../harness/upstream/index.js';

const PINS = [FLANNEL_MANIFEST, METALLB_MANIFEST];

describeUpstream('pinned upstream manifests through fetchUpstreamManifests', PINS, () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'loko-pins-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('a mirror of the real files in the <host>/<path> layout verifies against the pins', async () => {
    const { upstream, requests } = await fetchPinned(PINS);
    expect(requests).toEqual([
      '/raw.githubusercontent.com/flannel-io/flannel/v0.28.10/Documentation/kube-flannel.yml',
      '/raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml',
    ]);
    const flannel = parseManifest(upstream.get('kube-flannel')!, FLANNEL_MANIFEST.url);
    expect(flannel.map((o) => o.kind)).toContain('DaemonSet');
    const metallb = parseManifest(upstream.get('metallb-native')!, METALLB_MANIFEST.url);
    expect(
      metallb
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([
      'bfdprofiles.metallb.io',
      'bgpadvertisements.metallb.io',
      'bgppeers.metallb.io',
      'communities.metallb.io',
      'configurationstates.metallb.io',
      'ipaddresspools.metallb.io',
      'l2advertisements.metallb.io',
      'servicebgpstatuses.metallb.io',
      'servicel2statuses.metallb.io',
    ]);
  });

  it('a manifest_dir of the real files verifies and fills the cache', async () => {
    const dir = join(tmp, 'manifests');
    writeManifestDir(dir, PINS);
    const cacheDir = join(tmp, 'cache');
    const got = await fetchUpstreamManifests(PINS, { cacheDir, dir });
    expect(got.get('metallb-native')).toBe(pinnedBytes(METALLB_MANIFEST).toString('utf8'));
    expect(readdirSync(cacheDir).sort()).toEqual(PINS.map((m) => `${m.sha256}.yaml`).sort());
  });

  it('refuses the real file with one byte changed, naming the URL and both digests', async () => {
    const bytes = Buffer.from(pinnedBytes(METALLB_MANIFEST));
    const at = bytes.indexOf('v0.16.2');
    bytes[at + 6] = '3'.charCodeAt(0); // quay.io/metallb/controller:v0.16.3
    const tampered = createHash('sha256').update(bytes).digest('hex');
    const mirror = await startManifestMirror([METALLB_MANIFEST], {
      'metallb-native': { body: bytes },
    });
    try {
      const err = await fetchUpstreamManifests([METALLB_MANIFEST], {
        cacheDir: join(tmp, 'cache'),
        mirror: mirror.url,
      }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toBe(
        `upstream manifest metallb-native: sha256 mismatch for ${mirror.url}/raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml ` +
          `(for ${METALLB_MANIFEST.url}): expected ${METALLB_MANIFEST.sha256}, got ${tampered}`,
      );
    } finally {
      await mirror.close();
    }
  });
});
