import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
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

const env = { HOME: '/home/tester' };
const QUICKSTART = path.resolve(FIXTURES, '../../../examples/quickstart');

describe('loadConfig: happy paths', () => {
  it('decodes every attribute of the full fixture', async () => {
    const dir = path.join(FIXTURES, 'full');
    const r = await loadConfig({ path: dir, env });
    expect(r.diagnostics).toEqual([]);
    expect(r.files).toEqual([path.join(dir, 'cluster.lokocfg'), path.join(dir, 'lokocfg.vars')]);
    expect(r.cluster).toEqual({
      platform: 'equinixmetal',
      clusterName: 'demo',
      projectId: PROJECT,
      metro: 'sv',
      assetDir: path.join(dir, 'assets'),
      controllerCount: 3,
      controllerType: 'm3.small.x86',
      os: 'ubuntu_22_04',
      sshPubkeys: [
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p admin@example.com',
        'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 ops@example.com',
      ],
      tags: ['env:prod', 'team:infra'],
      billingCycle: 'monthly',
      reservationIds: {
        0: '11111111-1111-1111-1111-111111111110',
        1: '11111111-1111-1111-1111-111111111111',
        2: '11111111-1111-1111-1111-111111111112',
      },
      reservationIdsDefault: '',
      kubernetesVersion: 'v1.35.2',
      podCidr: '10.20.0.0/16',
      serviceCidr: '10.30.0.0/20',
      workerPools: [
        {
          name: 'web',
          count: 2,
          nodeType: 'c3.medium.x86',
          metro: 'sv',
          os: 'ubuntu_24_04',
          labels: { 'example.com/role': 'web', tier: 'frontend' },
          taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
          disableBgp: true,
          tags: ['pool:web'],
          reservationIds: {},
          reservationIdsDefault: 'next-available',
        },
        {
          name: 'storage',
          count: 2,
          nodeType: 'c3.small.x86',
          metro: 'sv',
          os: 'ubuntu_22_04',
          labels: {},
          taints: [],
          disableBgp: false,
          tags: [],
          reservationIds: {
            0: '22222222-2222-2222-2222-222222222220',
            1: '22222222-2222-2222-2222-222222222221',
          },
          reservationIdsDefault: '',
        },
      ],
    });
    expect([...r.components.keys()]).toEqual(['metallb']);
    expect(r.components.get('metallb')!.range.start).toEqual({ line: 62, column: 1 });
  });

  it('records where every value comes from, block headers for defaults', async () => {
    const dir = path.join(FIXTURES, 'full');
    const r = await loadConfig({ path: dir, env });
    const at = (key: string): string => {
      const s = r.sources.get(key);
      return s ? `${path.basename(s.file)}:${s.start.line}:${s.start.column}` : 'none';
    };
    expect(at('cluster')).toBe('cluster.lokocfg:12:1');
    expect(at('cluster.metro')).toBe('cluster.lokocfg:15:22');
    expect(at('cluster.controller_type')).toBe('cluster.lokocfg:18:22');
    expect(at('cluster.os')).toBe('cluster.lokocfg:19:22');
    expect(at('cluster.project_id')).toBe('cluster.lokocfg:14:22');
    expect(at('cluster.worker_pool.web')).toBe('cluster.lokocfg:32:3');
    expect(at('cluster.worker_pool.web.node_type')).toBe('cluster.lokocfg:34:17');
    expect(at('cluster.worker_pool.web.metro')).toBe('cluster.lokocfg:35:17');
    expect(at('cluster.worker_pool.web.os')).toBe('cluster.lokocfg:36:17');
    expect(at('cluster.worker_pool.web.count')).toBe('cluster.lokocfg:33:17');
    // Defaults point at the block header; values inherited from the cluster at the cluster's value.
    expect(at('cluster.worker_pool.storage.node_type')).toBe('cluster.lokocfg:49:3');
    expect(at('cluster.worker_pool.storage.metro')).toBe('cluster.lokocfg:15:22');
    expect(at('cluster.worker_pool.storage.os')).toBe('cluster.lokocfg:19:22');
    expect(at('cluster.billing_cycle')).toBe('cluster.lokocfg:25:19');
    expect(at('cluster.kubernetes_version')).toBe('cluster.lokocfg:57:24');
    expect(at('cluster.pod_cidr')).toBe('cluster.lokocfg:58:24');
    expect(at('component.metallb')).toBe('cluster.lokocfg:62:1');
  });

  it('loads the quickstart example: one controller, two pools, three workers', async () => {
    const dir = path.join(FIXTURES, 'quickstart');
    const r = await loadConfig({ path: dir, env });
    expect(r.diagnostics).toEqual([]);
    const c = r.cluster!;
    expect(c.clusterName).toBe('quickstart');
    expect(c.assetDir).toBe('/home/tester/.loko/quickstart');
    expect(c.controllerCount).toBe(1);
    expect(c.sshPubkeys).toHaveLength(1);
    expect(c.workerPools.map((p) => [p.name, p.count])).toEqual([
      ['general', 2],
      ['ingress', 1],
    ]);
    expect(c.workerPools.reduce((n, p) => n + p.count, 0)).toBe(3);
    expect(c.workerPools[1]!.taints).toEqual([
      { key: 'example.com/ingress', value: 'true', effect: 'NoSchedule' },
    ]);
    expect(r.files.map((f) => path.basename(f))).toEqual([
      'cluster.lokocfg',
      'variables.lokocfg',
      'lokocfg.vars',
    ]);
  });

  it('merges a directory of files, one without a trailing newline', async () => {
    const dir = path.join(FIXTURES, 'merge');
    const r = await loadConfig({ path: dir, env });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.files.map((f) => path.basename(f))).toEqual([
      '10-cluster.lokocfg',
      '20-pools.lokocfg',
    ]);
    expect(r.cluster!.clusterName).toBe('merged');
    expect(r.cluster!.workerPools).toMatchObject([{ name: 'general', count: 3, metro: 'da' }]);
    expect(r.components.has('metallb')).toBe(true);
    expect(r.sources.get('cluster.worker_pool.general.count')!.file).toBe(
      path.join(dir, '20-pools.lokocfg'),
    );
  });

  it('loads a single file', async () => {
    const file = path.join(FIXTURES, 'merge', '10-cluster.lokocfg');
    const r = await loadConfig({ path: file, env });
    expect(errors(r)).toEqual([]);
    expect(r.files).toEqual([file]);
    expect(r.cluster!.assetDir).toBe(path.join(FIXTURES, 'merge', 'assets'));
    expect(warnings(r).map((w) => w.summary)).toEqual(['No worker pools']);
  });

  it('ignores non-lokocfg files and subdirectories', async () => {
    const r = await loadFiles({
      'cluster.lokocfg': cluster('worker_pool "a" {\n count = 1\n}'),
      'notes.txt': 'not = config {',
      'sub/other.lokocfg': 'broken {',
    });
    expect(r.diagnostics).toEqual([]);
    expect(r.files).toEqual([path.join(r.dir, 'cluster.lokocfg')]);
  });

  it('returns no cluster and no error when there is no cluster block', async () => {
    const r = await loadFiles({ 'c.lokocfg': 'component "metallb" {}\n' });
    expect(r.diagnostics).toEqual([]);
    expect(r.cluster).toBeUndefined();
    expect([...r.components.keys()]).toEqual(['metallb']);
  });
});

describe('loadConfig: files and merging', () => {
  it('reports a directory without *.lokocfg files, naming the path', async () => {
    const dir = path.join(FIXTURES, 'empty');
    const r = await loadConfig({ path: dir, env });
    const e = onlyError(r);
    expect(e.summary).toBe(`No *.lokocfg files in ${dir}`);
    expect(e.range).toBeUndefined();
    expect(r.cluster).toBeUndefined();
  });

  it('-c one file of a directory: loads only it, and notes unloaded siblings on unset variables', async () => {
    const file = path.join(QUICKSTART, 'cluster.lokocfg');
    const r = await loadConfig({ path: file, env });
    expect(r.files[0]).toBe(file);
    expect(r.files).not.toContain(path.join(QUICKSTART, 'variables.lokocfg'));
    const unset = errors(r).filter((e) =>
      / is not declared$|^No value for variable/.test(e.summary),
    );
    expect(unset.length).toBeGreaterThan(0);
    for (const e of unset) {
      expect(e.detail).toContain('variables.lokocfg');
      expect(e.detail).toContain(`-c ${QUICKSTART} loads them all`);
    }
    const whole = await loadConfig({ path: QUICKSTART, env });
    expect(errors(whole)).toEqual([]);
  });

  it('-c one file without siblings adds no note', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster().replace('"sv"', 'var.metro') });
    const only = await loadConfig({ path: path.join(r.dir, 'c.lokocfg'), env });
    expect(onlyError(only).detail).not.toContain('were not loaded');
  });

  it('refuses -c pointing at a file that does not end in .lokocfg', async () => {
    const r = await loadFiles({ 'cluster.txt': cluster() });
    const file = path.join(r.dir, 'cluster.txt');
    const e = onlyError(await loadConfig({ path: file, env }));
    expect(e.summary).toBe(`Configuration file ${file} does not end in .lokocfg`);
  });

  it('refuses -c pointing at lokocfg.vars, naming the directory to use', async () => {
    const file = path.join(QUICKSTART, 'lokocfg.vars');
    const e = onlyError(await loadConfig({ path: file, env }));
    expect(e.summary).toBe(`${file} is the variables file, not a configuration file`);
    expect(e.detail).toContain(`-c ${QUICKSTART}`);
  });

  it('reports a path that does not exist', async () => {
    const r = await loadConfig({ path: '/nonexistent/loko/config', env });
    expect(onlyError(r).summary).toBe('Configuration path /nonexistent/loko/config does not exist');
  });

  it('reports an attribute set in two files, naming both places', async () => {
    const r = await loadFiles({
      'a.lokocfg': cluster(),
      'b.lokocfg':
        'cluster "equinixmetal" {\n  worker_pool "w" {\n    count = 1\n  }\n  metro = "da"\n}\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('b.lokocfg:5:3 error: Duplicate attribute "metro"');
    expect(e.detail).toContain('a.lokocfg:4:3');
  });

  it('reports a duplicate attribute in one block', async () => {
    const r = await loadFiles({ 'a.lokocfg': cluster('  metro = "da"') });
    expect(where(onlyError(r), r.dir)).toBe('a.lokocfg:6:3 error: Duplicate attribute "metro"');
  });

  it('explains the lokoctl backend block and rejects unknown top-level blocks and attributes', async () => {
    const r = await loadFiles({
      'a.lokocfg': `backend "s3" {\n  bucket = "b"\n}\nclustr "equinixmetal" {}\nmetro = "sv"\n`,
    });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'a.lokocfg:1:1 error: "backend" blocks are not supported by loko',
      'a.lokocfg:4:1 error: Unsupported block type "clustr"',
      'a.lokocfg:5:1 error: Unexpected attribute "metro" at the top level',
    ]);
    expect(errors(r)[0]!.detail).toContain('discovers the resources it owns by their tags');
    expect(errors(r)[1]!.detail).toContain('Did you mean "cluster"?');
  });

  it('reports duplicate components and variables', async () => {
    const r = await loadFiles({
      'a.lokocfg': 'component "metallb" {}\nvariable "x" {}\n',
      'b.lokocfg': 'component "metallb" {}\nvariable "x" {}\n',
    });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'b.lokocfg:1:11 error: Duplicate component "metallb"',
      'b.lokocfg:2:10 error: Duplicate variable "x"',
    ]);
  });

  it('uses the environment of the process by default', async () => {
    process.env.LOKO_TEST_CONFIG_METRO = 'ny';
    try {
      const r = await loadFiles(
        { 'a.lokocfg': cluster().replace('"sv"', 'env("LOKO_TEST_CONFIG_METRO")') },
        { env: undefined },
      );
      expect(r.cluster?.metro).toBe('ny');
    } finally {
      delete process.env.LOKO_TEST_CONFIG_METRO;
    }
  });

  it('accepts keys written as identifiers with dashes', async () => {
    const r = await loadFiles({
      'a.lokocfg': cluster(`  reservation_ids = { controller-0 = "${PROJECT}" }`),
    });
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.reservationIds).toEqual({ 0: PROJECT });
  });

  it('handles a key file read with file() including its trailing newline', async () => {
    const r = await loadFiles({
      'a.lokocfg': cluster('  ssh_pubkeys = [file("id.pub")]'),
      'id.pub': `${KEY}\n`,
    });
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.sshPubkeys).toEqual([KEY]);
  });
});
