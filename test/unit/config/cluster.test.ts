import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLUSTER_SPEC, WORKER_POOL_SPEC } from '../../../src/config/index.js';
import {
  FIXTURES,
  KEY,
  PROJECT,
  cluster,
  errors,
  loadFiles,
  onlyError,
  warnings,
  where,
} from './helpers.js';
import { loadConfig } from '../../../src/config/index.js';
import { DEFAULT_KUBERNETES_VERSION } from '../../../src/config/defaults.js';

const R0 = '11111111-1111-1111-1111-111111111110';
const R1 = '11111111-1111-1111-1111-111111111111';
const R2 = '11111111-1111-1111-1111-111111111112';

/** Loads one cluster.lokocfg built by {@link cluster}. */
const load = (extra: string, head?: string, pools?: string) =>
  loadFiles({ 'c.lokocfg': cluster(extra, head, pools) });

/** A config with one pool whose body is `body`. */
const pool = (body: string, name = 'web') =>
  load('', undefined, `  worker_pool "${name}" {\n${body}\n  }`);

describe('platform', () => {
  it('accepts "packet" with a deprecation warning (legacy fixture)', async () => {
    const dir = path.join(FIXTURES, 'legacy');
    const r = await loadConfig({ path: dir, env: {} });
    expect(errors(r)).toEqual([]);
    expect(warnings(r).map((w) => where(w, dir))).toEqual([
      'cluster.lokocfg:1:9 warning: Platform "packet" is deprecated',
      'cluster.lokocfg:4:3 warning: "facility" is deprecated',
      'cluster.lokocfg:9:5 warning: "facility" is deprecated',
      'cluster.lokocfg:9:16 warning: worker_pool "general" is in metro "da", the control plane in "sv"',
    ]);
    expect(r.cluster).toMatchObject({ platform: 'equinixmetal', metro: 'sv', facility: 'sv15' });
    expect(r.cluster!.workerPools[0]).toMatchObject({ metro: 'da', facility: 'da11' });
    expect(r.sources.get('cluster.metro')!.start).toEqual({ line: 4, column: 18 });
  });

  it('rejects other platforms, naming the valid one', async () => {
    const r = await load('', 'cluster "aws"');
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:1:9 error: Unsupported platform "aws"');
    expect(e.detail).toContain('"equinixmetal"');
  });

  it('requires exactly one label', async () => {
    const r = await load('', 'cluster');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:1:1 error: Wrong number of labels on "cluster" block',
    );
  });
});

describe('metro and facility', () => {
  it('lowercases the metro', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace('"sv"', '"DA"') });
    expect(r.cluster!.metro).toBe('da');
  });

  it('rejects a metro that is not two letters', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace('"sv"', '"sv15"') });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:4:18 error: Invalid value for "metro"');
    expect(e.detail).toContain('two-letter metro code');
  });

  it('accepts a facility that agrees with the metro, with a warning', async () => {
    const r = await load('  facility = "sv15"');
    expect(errors(r)).toEqual([]);
    expect(warnings(r).map((w) => w.summary)).toEqual(['"facility" is deprecated']);
    expect(r.cluster).toMatchObject({ metro: 'sv', facility: 'sv15' });
  });

  it('rejects a facility that disagrees with the metro', async () => {
    const r = await load('  facility = "da11"');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:4:18 error: metro "sv" does not match facility "da11" in cluster',
    );
  });

  it('requires metro (or facility)', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace('  metro        = "sv"\n', '') });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:1:1 error: Missing required attribute "metro"');
    expect(e.detail).toContain('facility');
  });

  it('gives pools the cluster metro and os unless they set their own', async () => {
    const r = await load(
      '  os = "ubuntu_22_04"',
      undefined,
      '  worker_pool "a" {\n    count = 1\n  }\n  worker_pool "b" {\n    count = 1\n    metro = "DA"\n    os = "ubuntu_24_04"\n  }',
    );
    expect(r.cluster!.workerPools.map((p) => [p.metro, p.os])).toEqual([
      ['sv', 'ubuntu_22_04'],
      ['da', 'ubuntu_24_04'],
    ]);
    expect(warnings(r).map((w) => where(w, r.dir))).toEqual([
      'c.lokocfg:12:13 warning: worker_pool "b" is in metro "da", the control plane in "sv"',
    ]);
  });

  it('rejects a pool facility that disagrees with the pool metro', async () => {
    const r = await pool('    count = 1\n    metro = "da"\n    facility = "ny5"');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:9:13 error: metro "da" does not match facility "ny5" in worker_pool "web"',
    );
  });
});

describe('cluster attributes', () => {
  it('applies defaults', async () => {
    const r = await load('');
    expect(r.cluster).toMatchObject({
      controllerCount: 1,
      controllerType: 'c3.small.x86',
      os: 'ubuntu_24_04',
      sshPubkeys: [],
      tags: [],
      billingCycle: 'hourly',
      reservationIds: {},
      reservationIdsDefault: '',
      kubernetesVersion: DEFAULT_KUBERNETES_VERSION,
      podCidr: '10.2.0.0/16',
      serviceCidr: '10.3.0.0/16',
    });
    expect(r.cluster!.workerPools[0]).toMatchObject({
      nodeType: 'c3.small.x86',
      labels: {},
      taints: [],
      disableBgp: false,
      tags: [],
    });
  });

  it('treats null as unset', async () => {
    const r = await load('  os = null\n  billing_cycle = null');
    expect(errors(r)).toEqual([]);
    expect(r.cluster).toMatchObject({ os: 'ubuntu_24_04', billingCycle: 'hourly' });
  });

  it('does not accept null for required attributes', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace('"demo"', 'null').replace('"sv"', 'null'),
    });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:2:18 error: Invalid value for "cluster_name"',
      'c.lokocfg:4:18 error: Invalid value for "metro"',
    ]);
  });

  it('reports each missing required attribute at the block header', async () => {
    const r = await loadFiles({ 'c.lokocfg': 'cluster "equinixmetal" {\n  metro = "sv"\n}\n' });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:1:1 error: Missing required attribute "cluster_name"',
      'c.lokocfg:1:1 error: Missing required attribute "project_id"',
      'c.lokocfg:1:1 error: Missing required attribute "asset_dir"',
    ]);
    expect(errors(r)[0]!.range!.end).toEqual({ line: 1, column: 23 });
  });

  it('requires cluster_name to be a DNS label of at most 40 characters', async () => {
    for (const bad of ['Demo', 'demo_1', '-demo', 'demo-', 'a'.repeat(41)]) {
      const r = await loadFiles({ 'c.lokocfg': cluster().replace('"demo"', `"${bad}"`) });
      expect(where(onlyError(r), r.dir)).toBe(
        'c.lokocfg:2:18 error: Invalid value for "cluster_name"',
      );
    }
    const ok = await loadFiles({ 'c.lokocfg': cluster().replace('"demo"', `"${'a'.repeat(40)}"`) });
    expect(errors(ok)).toEqual([]);
  });

  it('requires project_id to be a UUID', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace(PROJECT, 'my-project') });
    expect(onlyError(r).detail).toContain('is not a project UUID');
  });

  it('resolves asset_dir against the declaring file and refuses an unexpanded ~', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace('"assets"', '"../state/x"') });
    expect(r.cluster!.assetDir).toBe(path.resolve(r.dir, '../state/x'));
    const abs = await loadFiles({ 'c.lokocfg': cluster().replace('"assets"', '"/var/lib/loko"') });
    expect(abs.cluster!.assetDir).toBe('/var/lib/loko');
    const tilde = await loadFiles({ 'c.lokocfg': cluster().replace('"assets"', '"~/loko"') });
    expect(onlyError(tilde).detail).toContain('pathexpand("~/loko")');
  });

  it('allows controller_count 1, 3 and 5 only', async () => {
    for (const n of [1, 3, 5])
      expect((await load(`  controller_count = ${n}`)).cluster!.controllerCount).toBe(n);
    for (const n of ['2', '4', '0', '1.5']) {
      const r = await load(`  controller_count = ${n}`);
      expect(where(onlyError(r), r.dir)).toBe(
        'c.lokocfg:6:22 error: Invalid value for "controller_count"',
      );
    }
  });

  it('checks each ssh_pubkeys entry and trims them', async () => {
    const r = await load(`  ssh_pubkeys = ["${KEY}\\n", "not a key", "ssh-rsa"]`);
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:6:97 error: Invalid value for "ssh_pubkeys[1]"',
      'c.lokocfg:6:110 error: Invalid value for "ssh_pubkeys[2]"',
    ]);
    const ok = await load(`  ssh_pubkeys = ["${KEY}\\n"]`);
    expect(ok.cluster!.sshPubkeys).toEqual([KEY]);
  });

  it('turns tags into sorted key:value strings and reserves loko tags', async () => {
    const r = await load('  tags = { zone = "b", app = "x:y" }');
    expect(r.cluster!.tags).toEqual(['app:x:y', 'zone:b']);
    const bad = await load('  tags = {\n    "loko:cluster" = "other"\n    loko = "x"\n  }');
    expect(errors(bad).map((e) => where(e, bad.dir))).toEqual([
      'c.lokocfg:7:5 error: Invalid tag key "loko:cluster" in cluster "equinixmetal"',
      'c.lokocfg:8:5 error: Invalid tag key "loko" in cluster "equinixmetal"',
    ]);
  });

  it('checks billing_cycle with a suggestion', async () => {
    const r = await load('  billing_cycle = "monthy"');
    const e = onlyError(r);
    expect(e.detail).toContain('Did you mean "monthly"?');
    expect((await load('  billing_cycle = "yearly"')).cluster!.billingCycle).toBe('yearly');
  });

  it('reports wrong types', async () => {
    const r = await load(
      '  controller_count = "three"\n  ssh_pubkeys = "ssh-ed25519 AAAA"\n  tags = ["a"]\n  controller_type = ["x"]',
      undefined,
      '  worker_pool "w" {\n    count = 1\n    disable_bgp = "maybe"\n  }',
    );
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:6:22 error: Invalid value for "controller_count": expected number, got string',
      'c.lokocfg:7:17 error: Invalid value for "ssh_pubkeys": expected list of string, got string',
      'c.lokocfg:8:10 error: Invalid value for "tags": expected map of string, got list',
      'c.lokocfg:9:21 error: Invalid value for "controller_type": expected string, got list',
      'c.lokocfg:12:19 error: Invalid value for "disable_bgp": expected bool, got string',
    ]);
  });
});

describe('kubernetes_version, pod_cidr and service_cidr', () => {
  it('takes a version of the form v<major>.<minor>.<patch>, v1.31 or later', async () => {
    expect((await load('  kubernetes_version = "v1.35.2"')).cluster!.kubernetesVersion).toBe(
      'v1.35.2',
    );
    for (const bad of ['1.36.3', 'v1.36', 'v1.36.3-rc.1', 'latest']) {
      const r = await load(`  kubernetes_version = "${bad}"`);
      expect(where(onlyError(r), r.dir)).toBe(
        'c.lokocfg:6:24 error: Invalid value for "kubernetes_version"',
      );
    }
    const old = await load('  kubernetes_version = "v1.30.4"');
    expect(where(onlyError(old), old.dir)).toBe(
      'c.lokocfg:6:24 error: Kubernetes v1.30.4 is too old for loko',
    );
    expect(onlyError(old).detail).toContain('v1beta4');
  });

  it('warns about a minor newer than the tested one', async () => {
    const r = await load('  kubernetes_version = "v1.99.0"');
    expect(errors(r)).toEqual([]);
    expect(warnings(r).map((w) => where(w, r.dir))).toEqual([
      `c.lokocfg:6:24 warning: Kubernetes v1.99.0 is newer than loko was tested with (${DEFAULT_KUBERNETES_VERSION})`,
    ]);
  });

  it('takes IPv4 network CIDRs', async () => {
    const r = await load('  pod_cidr = "172.16.0.0/12"\n  service_cidr = "192.168.0.0/24"');
    expect(errors(r)).toEqual([]);
    expect(r.cluster).toMatchObject({ podCidr: '172.16.0.0/12', serviceCidr: '192.168.0.0/24' });
    for (const bad of ['10.2.0.0', '10.2.0.0/33', '10.256.0.0/16', 'fd00::/64', '10.2/16']) {
      const e = onlyError(await load(`  pod_cidr = "${bad}"`));
      expect(e.summary).toBe('Invalid value for "pod_cidr"');
      expect(e.detail).toContain('an IPv4 CIDR');
    }
  });

  it('refuses host bits, overlap and sizes Kubernetes does not take', async () => {
    const host = await load('  pod_cidr = "10.2.3.0/16"');
    expect(where(onlyError(host), host.dir)).toBe(
      'c.lokocfg:6:14 error: pod_cidr "10.2.3.0/16" has host bits set',
    );
    expect(onlyError(host).detail).toContain('"10.2.0.0/16"');
    const overlap = await load('  pod_cidr = "10.0.0.0/8"');
    expect(where(onlyError(overlap), overlap.dir)).toBe(
      'c.lokocfg:6:14 error: pod_cidr "10.0.0.0/8" overlaps service_cidr "10.3.0.0/16"',
    );
    const big = await load('  service_cidr = "10.32.0.0/11"');
    expect(onlyError(big).summary).toBe('service_cidr "10.32.0.0/11" must be a /12 to a /28');
    const tiny = await load('  service_cidr = "10.3.0.0/29"');
    expect(onlyError(tiny).detail).toContain('tenth address');
  });

  it('needs a /24 of the pod network per node', async () => {
    // 1 controller + 1 worker: a /23 holds two /24s.
    expect(errors(await load('  pod_cidr = "10.2.0.0/23"'))).toEqual([]);
    const r = await load('  pod_cidr = "10.2.0.0/24"\n  controller_count = 3');
    expect(onlyError(r).summary).toBe('pod_cidr "10.2.0.0/24" is too small for 4 nodes');
  });
});

describe('unsupported and unknown names', () => {
  it('explains every lokoctl cluster attribute loko does not support', async () => {
    for (const [name, why] of Object.entries(CLUSTER_SPEC.unsupported!)) {
      const line =
        name === 'dns' || name === 'oidc' ? `  ${name} {\n    x = 1\n  }` : `  ${name} = "x"`;
      const r = await load(line);
      const e = onlyError(r);
      expect(where(e, r.dir)).toBe(`c.lokocfg:6:3 error: "${name}" is not supported by loko`);
      expect(e.detail).toBe(why);
    }
  });

  it('explains every lokoctl worker pool attribute loko does not support', async () => {
    for (const name of Object.keys(WORKER_POOL_SPEC.unsupported!)) {
      const r = await pool(`    count = 1\n    ${name} = true`);
      expect(where(onlyError(r), r.dir)).toBe(
        `c.lokocfg:9:5 error: "${name}" is not supported by loko`,
      );
    }
  });

  it('points auth_token users at METAL_AUTH_TOKEN and dns users at the Elastic IP', async () => {
    expect(onlyError(await load('  auth_token = "x"')).detail).toContain('METAL_AUTH_TOKEN');
    expect(onlyError(await load('  dns {\n  }')).detail).toContain('Elastic IP');
    expect(onlyError(await load('  os_channel = "stable"')).detail).toContain('"os"');
  });

  it('reports unknown attributes with a suggestion and the valid names', async () => {
    const r = await load('  contoller_count = 3');
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:6:3 error: Unsupported attribute "contoller_count"');
    expect(e.detail).toMatch(
      /^Did you mean "controller_count"\? Valid names in cluster "equinixmetal": cluster_name, /,
    );
    const p = await pool('    count = 1\n    node_typ = "x"');
    expect(onlyError(p).detail).toContain('Did you mean "node_type"?');
  });

  it('reports unknown blocks, and attributes and blocks mixed up', async () => {
    const r = await load('  worker_pol "a" {\n  }\n  worker_pool = {}\n  tags {\n  }');
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:6:3 error: Unsupported block type "worker_pol"',
      'c.lokocfg:8:3 error: "worker_pool" is a block, not an attribute',
      'c.lokocfg:9:3 error: "tags" is an attribute, not a block',
    ]);
    expect(errors(r)[0]!.detail).toContain('Did you mean "worker_pool"?');
  });
});

describe('worker pools', () => {
  it('requires count, a whole number of at least 0', async () => {
    let r = await pool('    node_type = "x"');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:7:3 error: Missing required attribute "count"',
    );
    r = await pool('    count = -1');
    expect(where(onlyError(r), r.dir)).toBe('c.lokocfg:8:13 error: Invalid value for "count"');
    r = await pool('    count = 1.5');
    expect(onlyError(r).detail).toBe('1.5 is not a whole number.');
    r = await pool('    count = 0');
    expect(errors(r)).toEqual([]);
  });

  it('requires DNS-label pool names', async () => {
    const r = await pool('    count = 1', 'Web_Pool');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:7:15 error: Invalid worker_pool name "Web_Pool"',
    );
  });

  it('reports a duplicate pool at the second, naming the first', async () => {
    const r = await load(
      '',
      undefined,
      '  worker_pool "a" {\n    count = 1\n  }\n  worker_pool "a" {\n    count = 2\n  }',
    );
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:10:15 error: Duplicate worker pool "a"');
    expect(e.detail).toContain('c.lokocfg:7:15');
  });

  it('reserves the pool name "controller"', async () => {
    const r = await pool('    count = 1', 'controller');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:7:15 error: Worker pool name "controller" is reserved',
    );
  });

  it('requires a pool label', async () => {
    const r = await load('', undefined, '  worker_pool {\n    count = 1\n  }');
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:7:3 error: Wrong number of labels on "worker_pool" block',
    );
  });

  it('allows zero pools with a warning', async () => {
    const r = await load('', undefined, '');
    expect(errors(r)).toEqual([]);
    expect(warnings(r).map((w) => where(w, r.dir))).toEqual([
      'c.lokocfg:1:1 warning: No worker pools',
    ]);
    expect(r.cluster!.workerPools).toEqual([]);
  });

  it('keeps hostnames within 63 characters', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster(
        '',
        undefined,
        `  worker_pool "${'p'.repeat(31)}" {\n    count = 10\n  }`,
      ).replace('"demo"', `"${'c'.repeat(30)}"`),
    });
    expect(onlyError(r).summary).toBe(`Worker pool name "${'p'.repeat(31)}" is too long`);
  });

  it('validates labels: key syntax, kubelet-forbidden namespaces, loko.dev, values', async () => {
    const r = await pool(
      [
        '    count = 1',
        '    labels = {',
        '      "example.com/ok" = "v"',
        '      "node-role.kubernetes.io/worker" = ""',
        '      "loko.dev/bgp-enabled" = "true"',
        '      "bad key!" = "x"',
        '      tier = "not valid!"',
        '      "node.kubernetes.io/role" = "fine"',
        '    }',
      ].join('\n'),
    );
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:13:7 error: Invalid key "bad key!" in "labels"',
    ]);
    const r2 = await pool(
      [
        '    count = 1',
        '    labels = {',
        '      "node-role.kubernetes.io/worker" = ""',
        '      "loko.dev/bgp-enabled" = "true"',
        '      tier = "not valid!"',
        `      long = "${'x'.repeat(64)}"`,
        '    }',
      ].join('\n'),
    );
    expect(errors(r2).map((e) => where(e, r2.dir))).toEqual([
      'c.lokocfg:10:7 error: Invalid label key "node-role.kubernetes.io/worker" in worker_pool "web"',
      'c.lokocfg:11:7 error: Invalid label key "loko.dev/bgp-enabled" in worker_pool "web"',
      'c.lokocfg:12:14 error: Invalid label value for "tier" in worker_pool "web"',
      'c.lokocfg:13:14 error: Invalid label value for "long" in worker_pool "web"',
    ]);
    expect(errors(r2)[0]!.detail).toContain('NodeRestriction');
  });

  it('parses taints and checks effect and key', async () => {
    const ok = await pool(
      '    count = 1\n    taints = {\n      "example.com/gpu" = ":NoExecute"\n      a = "b:PreferNoSchedule"\n    }',
    );
    expect(ok.cluster!.workerPools[0]!.taints).toEqual([
      { key: 'example.com/gpu', value: '', effect: 'NoExecute' },
      { key: 'a', value: 'b', effect: 'PreferNoSchedule' },
    ]);
    const r = await pool(
      '    count = 1\n    taints = {\n      a = "b:NoRun"\n      b = "NoSchedule"\n      "c/d/e" = "x:NoSchedule"\n    }',
    );
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:10:11 error: Invalid value for "taints.a"',
      'c.lokocfg:11:11 error: Invalid value for "taints.b"',
      'c.lokocfg:12:7 error: Invalid key "c/d/e" in "taints"',
    ]);
    const long = await pool(
      `    count = 1\n    taints = {\n      a = "${'v'.repeat(64)}:NoSchedule"\n    }`,
    );
    expect(where(onlyError(long), long.dir)).toBe(
      'c.lokocfg:10:11 error: Invalid taint value for "a" in worker_pool "web"',
    );
  });

  it('decodes pool tags and disable_bgp', async () => {
    const r = await pool('    count = 1\n    disable_bgp = true\n    tags = { b = "2", a = "1" }');
    expect(r.cluster!.workerPools[0]).toMatchObject({ disableBgp: true, tags: ['a:1', 'b:2'] });
  });
});

describe('reservations', () => {
  it('maps controller-<i> keys to indexes', async () => {
    const r = await load(
      `  controller_count = 3\n  reservation_ids = {\n    controller-2 = "${R2}"\n    controller-0 = "${R0}"\n    controller-1 = "${R1.toUpperCase()}"\n  }`,
    );
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.reservationIds).toEqual({ 0: R0, 1: R1, 2: R2 });
  });

  it('refuses both reservation_ids and reservation_ids_default', async () => {
    const r = await load(
      `  reservation_ids = { controller-0 = "${R0}" }\n  reservation_ids_default = "next-available"`,
    );
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:7:29 error: Cannot set both reservation_ids and reservation_ids_default in cluster "equinixmetal"',
    );
  });

  it('refuses empty, next-available and non-UUID values', async () => {
    const r = await load(
      '  controller_count = 3\n  reservation_ids = {\n    controller-0 = ""\n    controller-1 = "next-available"\n    controller-2 = "abc"\n  }',
    );
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:8:20 error: Invalid value for "reservation_ids.controller-0"',
      'c.lokocfg:9:20 error: Invalid value for "reservation_ids.controller-1"',
      'c.lokocfg:10:20 error: Invalid value for "reservation_ids.controller-2"',
    ]);
    expect(errors(r)[1]!.detail).toContain('reservation_ids_default');
  });

  it('checks key format, range and coverage against the count', async () => {
    let r = await load(`  reservation_ids = { worker-0 = "${R0}" }`);
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:6:23 error: Invalid key "worker-0" in "reservation_ids"',
    );
    r = await load(`  reservation_ids = { controller-01 = "${R0}" }`);
    expect(onlyError(r).summary).toBe('Invalid key "controller-01" in "reservation_ids"');
    r = await load(`  reservation_ids = { controller-1 = "${R0}" }`);
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:6:23 error: Reservation key "controller-1" is out of range in cluster "equinixmetal"',
    );
    r = await load(
      `  controller_count = 3\n  reservation_ids = { controller-0 = "${R0}", controller-2 = "${R2}" }`,
    );
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe(
      'c.lokocfg:7:21 error: reservation_ids does not match controller_count in cluster "equinixmetal"',
    );
    expect(e.detail).toContain('missing controller-1');
  });

  it('applies the same rules to worker pools with worker-<i> keys', async () => {
    const ok = await pool(
      `    count = 2\n    reservation_ids = { worker-0 = "${R0}", worker-1 = "${R1}" }`,
    );
    expect(ok.cluster!.workerPools[0]!.reservationIds).toEqual({ 0: R0, 1: R1 });
    const r = await pool(`    count = 2\n    reservation_ids = { worker-0 = "${R0}" }`);
    expect(onlyError(r).summary).toBe('reservation_ids does not match count in worker_pool "web"');
    const d = await pool('    count = 2\n    reservation_ids_default = "next-available"');
    expect(d.cluster!.workerPools[0]!.reservationIdsDefault).toBe('next-available');
    const bad = await pool('    count = 2\n    reservation_ids_default = "any"');
    expect(onlyError(bad).summary).toBe('Invalid value for "reservation_ids_default"');
  });

  it('refuses one reservation for two nodes', async () => {
    const r = await load(
      `  reservation_ids = { controller-0 = "${R0}" }`,
      undefined,
      `  worker_pool "a" {\n    count = 1\n    reservation_ids = { worker-0 = "${R0}" }\n  }`,
    );
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe(`c.lokocfg:9:36 error: Reservation ${R0} is used twice`);
    expect(e.detail).toContain('controller controller-0');
  });
});

describe('os', () => {
  it('rejects custom_ipxe: loko boots Ubuntu with cloud-init, not iPXE', async () => {
    const r = await load('  os = "custom_ipxe"');
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe(
      'c.lokocfg:6:8 error: Unsupported operating system "custom_ipxe" in cluster "equinixmetal"',
    );
    expect(e.detail).toContain('iPXE');
    expect(e.detail).toContain('"ubuntu_22_04" or "ubuntu_24_04"');
    expect(r.cluster).toBeUndefined();
  });

  it('rejects a Flatcar slug in a pool, naming the supported ones', async () => {
    const r = await load(
      '',
      undefined,
      '  worker_pool "a" {\n    count = 1\n    os = "flatcar_stable"\n  }',
    );
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe(
      'c.lokocfg:9:10 error: Unsupported operating system "flatcar_stable" in worker_pool "a"',
    );
    expect(e.detail).toContain('"ubuntu_22_04" or "ubuntu_24_04"');
  });

  it('reports an unsupported cluster os once, not again for pools that inherit it', async () => {
    const r = await load('  os = "debian_12"');
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:6:8 error: Unsupported operating system "debian_12" in cluster "equinixmetal"',
    ]);
  });

  it('accepts ubuntu_22_04 and ubuntu_24_04', async () => {
    const r = await load(
      '  os = "ubuntu_22_04"',
      undefined,
      '  worker_pool "a" {\n    count = 1\n    os = "ubuntu_24_04"\n  }',
    );
    expect(errors(r)).toEqual([]);
  });
});
