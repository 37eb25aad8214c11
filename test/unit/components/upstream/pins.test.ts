/**
 * The pins `npm run kube:build` caches (scripts/kube-build.mjs, plain JavaScript) are exactly the
 * components' pins, and the parser turns the pinned files into objects.
 */
import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLANNEL_MANIFEST } from '../../../../src/components/flannel/index.js';
import { METALLB_MANIFEST } from '../../../../src/components/metallb/index.js';
import type { UpstreamManifest } from '../../../../src/components/types.js';
import { userManifestCacheDir } from '../../../../src/components/upstream/fetch.js';
import { parseManifest } from '../../../../src/components/upstream/parse.js';

const script = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../scripts/kube-build.mjs',
);

interface KubeBuild {
  UPSTREAM_MANIFESTS: UpstreamManifest[];
  manifestCacheDir(env: NodeJS.ProcessEnv): string;
}

describe('pins', () => {
  it("kube-build caches exactly the components' pinned manifests, in the same directory fetch reads", async () => {
    const kb = (await import(pathToFileURL(script).href)) as KubeBuild;
    expect(kb.UPSTREAM_MANIFESTS).toEqual([FLANNEL_MANIFEST, METALLB_MANIFEST]);
    for (const env of [{ XDG_CACHE_HOME: '/c' }, { HOME: '/h' }]) {
      expect(kb.manifestCacheDir(env)).toBe(userManifestCacheDir(env));
    }
  });

  it('pins tag URLs (never a branch) and lowercase sha256 digests', () => {
    for (const m of [FLANNEL_MANIFEST, METALLB_MANIFEST]) {
      expect(m.url).toMatch(
        /^https:\/\/raw\.githubusercontent\.com\/[^/]+\/[^/]+\/v\d+\.\d+\.\d+\//,
      );
      expect(m.url).toContain(`/${m.goModule.version}/${m.goModule.path}`);
      expect(m.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});

describe('parseManifest', () => {
  it('skips empty documents, flattens Lists, keeps file order', () => {
    const text = `---
# comment only
---
apiVersion: v1
kind: ConfigMap
metadata: { name: a }
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata: { name: b }
---
`;
    expect(parseManifest(text, 'x.yaml').map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/a',
      'Secret/b',
    ]);
  });

  it('names the source and document of bad input', () => {
    expect(() => parseManifest('a: [\n', 'm.yaml')).toThrow(/^m\.yaml: YAML document 1: /);
    expect(() => parseManifest('---\nkind: X\n', 'm.yaml')).toThrow(
      'm.yaml: YAML document 1 is not a Kubernetes object (apiVersion, kind, metadata.name)',
    );
  });
});
