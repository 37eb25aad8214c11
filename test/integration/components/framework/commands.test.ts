/**
 * `loko component apply` in-process against the harness's kube-apiserver with `--kubeconfig`:
 * a server-side dry run of every component (real renders from the pinned upstream bytes, served
 * by a loopback mirror through LOKO_MANIFEST_MIRROR), and the refusal to apply a render holding
 * placeholders. Nothing here stores objects, so suites that install the real components are not
 * disturbed (and their objects are no evidence here).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../../../src/cli.js';
import { COMPONENTS } from '../../../../src/components/registry.js';
import { describeKube, useKube } from '../../../harness/kube/index.js';
import {
  startManifestMirror,
  upstreamUnavailable,
  type ManifestMirror,
} from '../../../harness/upstream/index.js';
import { memoryStreams } from '../../../unit/tasks/streams.js';

const upstream = COMPONENTS.flatMap((c) => c.upstream);
const missing = upstreamUnavailable(upstream);

describeKube('loko component apply --kubeconfig (in-process CLI)', () => {
  const kube = useKube();
  let mirror: ManifestMirror;
  let tmp: string;
  beforeAll(async () => {
    if (missing) return;
    mirror = await startManifestMirror(upstream);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'loko-component-cli-'));
    await writeFile(
      path.join(tmp, 'components.lokocfg'),
      'component "metallb" {\n  address_pools = {\n    default = ["203.0.113.16/28"]\n  }\n}\n',
    );
  });
  afterAll(async () => {
    await mirror?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const run = async (args: string[]) => {
    const streams = memoryStreams({
      env: {
        HOME: path.join(tmp, 'home'),
        XDG_CACHE_HOME: path.join(tmp, 'cache'),
        LOKO_MANIFEST_MIRROR: mirror.url,
        NO_COLOR: '1',
      },
    });
    const code = await main(['node', 'loko', ...args], { streams, cwd: tmp, exit: () => {} });
    return { code, stdout: streams.out(), stderr: streams.err() };
  };

  it.skipIf(missing !== undefined)(
    'a dry run of every configured + bootstrap component is accepted by the API server',
    async () => {
      const { kubeconfigPath } = kube();
      const r = await run([
        'component',
        'apply',
        '--dry-run',
        '--kubeconfig',
        kubeconfigPath,
        '-o',
        'json',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as {
        dryRun: boolean;
        components: {
          name: string;
          objects: number;
          created: number;
          configured: number;
          unchanged: number;
          skipped?: number;
        }[];
      };
      expect(doc.dryRun).toBe(true);
      expect(doc.components.map((c) => c.name)).toEqual([
        'cloud-provider-equinix-metal',
        'flannel',
        'metallb',
      ]);
      for (const c of doc.components) {
        // Every rendered object was either sent (and accepted) or skipped for a missing namespace/CRD.
        expect(c.created + c.configured + c.unchanged + (c.skipped ?? 0)).toBe(c.objects);
        expect(c.objects).toBeGreaterThan(0);
      }
      expect(mirror.requests.length).toBeGreaterThan(0);
      // Progress went to stderr, one phase per component.
      for (const c of doc.components) expect(r.stderr).toContain(`Dry-run ${c.name}`);
      // That the dry run stored nothing is shown in apply.test.ts: the metallb suite installs the
      // same objects in parallel, so the cluster's state is no evidence here.
    },
  );

  it.skipIf(missing !== undefined)(
    'refuses to apply the CCM without the cluster API key (placeholders), naming the Secret and the fix',
    async () => {
      // The CPEM suite applies the same Secret in parallel, so its resourceVersion is no
      // evidence here; apply.test.ts shows a refused render sends nothing.
      const { kubeconfigPath } = kube();
      const r = await run([
        'component',
        'apply',
        'cloud-provider-equinix-metal',
        '--kubeconfig',
        kubeconfigPath,
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'component "cloud-provider-equinix-metal": Secret kube-system/metal-cloud-config holds placeholders',
      );
      expect(r.stderr).toContain('--emulator, --api-url or METAL_API_URL');
    },
  );
});
