/**
 * A configuration that validates never makes the userdata renderers throw: every label, taint,
 * version and CIDR rule of the renderers (UserdataError) is caught by `config validate` first,
 * with file:line. Each case below is either refused by the config or renders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src/config/types.js';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import { clusterBootstrapFor } from '../../../src/platforms/equinixmetal/machine-bootstrap.js';
import { cluster, errors, loadFiles } from '../config/helpers.js';
import { ENDPOINT, makeFixture, type Fixture } from './fixtures.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
});
afterAll(async () => {
  await fx.cleanup();
});

const LABELS: Array<[string, string]> = [
  ['example.com/role', 'web'],
  ['tier', ''],
  ['node.kubernetes.io/disk', 'ssd'],
  ['kubelet.kubernetes.io/x', 'y'],
  ['topology.kubernetes.io/zone', 'sv15'],
  ['node-role.kubernetes.io/worker', ''],
  ['kubernetes.io/hostname', 'x'],
  ['k8s.io/thing', 'x'],
  ['sub.k8s.io/thing', 'x'],
  ['loko.dev/bgp-enabled', 'false'],
  ['loko.dev/pool', 'other'],
  ['x.loko.dev/a', 'b'],
  ['Example.com/role', 'x'],
  ['a/b/c', 'x'],
  [`${'p'.repeat(254)}/x`, 'y'],
  ['n'.repeat(64), 'y'],
  ['ok', 'v'.repeat(63)],
  ['ok', 'v'.repeat(64)],
  ['ok', '-bad'],
  ['ok', 'has space'],
  ['ok', 'a,b'],
  ['ok', 'a=b'],
];

const TAINTS: string[] = [
  'v:NoSchedule',
  ':NoExecute',
  `${'v'.repeat(63)}:PreferNoSchedule`,
  `${'v'.repeat(64)}:NoSchedule`,
  '-v:NoSchedule',
  'v:Never',
  'a=b:NoSchedule',
];

const CLUSTER_ATTRS: string[] = [
  'kubernetes_version = "v1.31.0"',
  'kubernetes_version = "v1.30.9"',
  'kubernetes_version = "v2.0.0"',
  'pod_cidr = "10.2.0.0/24"',
  'pod_cidr = "10.2.0.0/30"',
  'service_cidr = "10.2.0.0/16"',
  'service_cidr = "192.168.1.0/28"',
  'pod_cidr = "10.3.0.0/16"',
];

/** Loads one config; when it validates, renders the userdata of every machine. */
async function rendersOrRefused(body: string, pool: string): Promise<'refused' | 'rendered'> {
  const r = await loadFiles({ 'c.lokocfg': cluster(body, undefined, pool) });
  if (errors(r).length > 0 || !r.cluster) return 'refused';
  const c: ClusterConfig = r.cluster;
  const bootstrap = clusterBootstrapFor(c, { endpoint: ENDPOINT, pki: fx.pki, token: fx.token });
  const desired = desiredState(c, bootstrap);
  expect(desired.devices.every((d) => d.userdata?.startsWith('#cloud-config\n'))).toBe(true);
  return 'rendered';
}

const poolWith = (attr: string) => `  worker_pool "web" {\n    count = 1\n    ${attr}\n  }`;
const q = (s: string) => JSON.stringify(s);

describe('a valid configuration always renders', () => {
  it.each(LABELS)('label %s = %s', async (key, value) => {
    const outcome = await rendersOrRefused('', poolWith(`labels = { ${q(key)} = ${q(value)} }`));
    expect(['refused', 'rendered']).toContain(outcome);
  });

  it.each(TAINTS)('taint example.com/t = %s', async (taint) => {
    const outcome = await rendersOrRefused(
      '',
      poolWith(`taints = { "example.com/t" = ${q(taint)} }`),
    );
    expect(['refused', 'rendered']).toContain(outcome);
  });

  it.each(CLUSTER_ATTRS)('%s', async (attr) => {
    const outcome = await rendersOrRefused(`  ${attr}`, poolWith('disable_bgp = true'));
    expect(['refused', 'rendered']).toContain(outcome);
  });

  it('the checks are not vacuous: these are refused, these render', async () => {
    expect(await rendersOrRefused('', poolWith('labels = { "loko.dev/pool" = "x" }'))).toBe(
      'refused',
    );
    expect(
      await rendersOrRefused('', poolWith(`taints = { a = "${'v'.repeat(64)}:NoSchedule" }`)),
    ).toBe('refused');
    expect(await rendersOrRefused('  kubernetes_version = "v1.30.9"', poolWith(''))).toBe(
      'refused',
    );
    expect(await rendersOrRefused('', poolWith('labels = { "node.kubernetes.io/x" = "y" }'))).toBe(
      'rendered',
    );
  });
});
