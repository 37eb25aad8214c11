import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/config/index.js';
import { COMPONENTS, componentSpecs } from '../../../src/components/registry.js';
import { resolveComponents } from '../../../src/components/resolve.js';
import { FAKE_SPEC } from '../components/framework/fake.js';
import { cluster, errors, loadFiles, onlyError, where } from './helpers.js';

const specs = new Map([
  ['fake', FAKE_SPEC],
  ['other', FAKE_SPEC],
]);

describe('component blocks with componentSpecs', () => {
  it('decodes the body with variables, functions and nested blocks', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': `variable "n" {
  default = 3
}
component "fake" {
  replicas = var.n + 1
  greeting = "hello \${env("WHO")}"
  pool "a" {
    addresses = ["10.0.0.0/24"]
  }
  pool "b" {
    addresses = []
  }
}
`,
      },
      { componentSpecs: specs, env: { HOME: '/home/tester', WHO: 'world' } },
    );
    expect(r.diagnostics).toEqual([]);
    const body = r.components.get('fake')!.body!;
    expect(body.attrs.get('replicas')!.value).toBe(4);
    expect(body.attrs.get('greeting')!.value).toBe('hello world');
    const pools = body.nested!.get('pool')!;
    expect(pools.map((p) => [p.labels, p.body.attrs.get('addresses')!.value])).toEqual([
      [['a'], ['10.0.0.0/24']],
      [['b'], []],
    ]);
    expect(r.components.get('fake')!.headerRange.start).toEqual({ line: 4, column: 1 });
    const at = r.sources.get('component.fake.replicas')!;
    expect([at.start.line, at.start.column]).toEqual([5, 14]);
  });

  it('reports a bad attribute at file:line:col with did-you-mean, like the cluster block', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': 'component "fake" {\n  replica = 2\n}\n' },
      { componentSpecs: specs },
    );
    const d = onlyError(r);
    expect(where(d, r.dir)).toBe('c.lokocfg:2:3 error: Unsupported attribute "replica"');
    expect(d.detail).toContain('Did you mean "replicas"?');
    expect(d.detail).toContain('Valid names in component "fake": replicas, greeting, pool');
    expect(formatDiagnostic(d, { cwd: r.dir })).toMatch(/^c\.lokocfg:2:3: error: /);
    expect(r.components.get('fake')!.body).toBeUndefined();
  });

  it('reports wrong types, missing required attributes and duplicate labels in nested blocks', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg':
          'component "fake" {\n  replicas = "many"\n  pool "a" {\n  }\n  pool "a" {\n    addresses = []\n  }\n}\n',
      },
      { componentSpecs: specs },
    );
    expect(errors(r).map((d) => where(d, r.dir))).toEqual([
      'c.lokocfg:2:14 error: Invalid value for "replicas": expected number, got string',
      'c.lokocfg:3:3 error: Missing required attribute "addresses"',
      'c.lokocfg:5:3 error: Duplicate pool "a"',
    ]);
  });

  it('an unknown component name is an error at its label listing the valid names', async () => {
    const r = await loadFiles({ 'c.lokocfg': 'component "fakee" {}\n' }, { componentSpecs: specs });
    const d = onlyError(r);
    expect(where(d, r.dir)).toBe('c.lokocfg:1:11 error: Unknown component "fakee"');
    expect(d.detail).toContain('Did you mean "fake"? Valid components: fake, other');
  });

  it('without componentSpecs bodies are only recorded, any name accepted', async () => {
    const r = await loadFiles({ 'c.lokocfg': 'component "whatever" {\n  x = 1\n}\n' });
    expect(r.diagnostics).toEqual([]);
    expect(r.components.get('whatever')!.body).toBeUndefined();
  });

  it('an error in a component block withholds the cluster, like any other error', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': `${cluster()}component "fake" {\n  replicas = -1\n}\n` },
      { componentSpecs: specs },
    );
    expect(errors(r)).toHaveLength(1);
    expect(r.cluster).toBeUndefined();
  });

  it('every bootstrap component accepts an empty block (it is decoded from one when unconfigured)', async () => {
    const real = componentSpecs();
    const boot = COMPONENTS.filter((c) => c.bootstrap).map((c) => c.name);
    expect(boot.length).toBeGreaterThan(0);
    const text = boot.map((n) => `component "${n}" {}\n`).join('');
    const r = await loadFiles({ 'c.lokocfg': `${cluster()}${text}` }, { componentSpecs: real });
    expect(errors(r)).toEqual([]);
    for (const n of boot) expect(r.components.get(n)!.body).toBeDefined();
    const unconfigured = resolveComponents({ components: new Map() }, { includeBootstrap: true });
    expect(unconfigured.map((c) => c.def.name)).toEqual(boot);
  });
});

describe('manifest_mirror and manifest_dir', () => {
  it('are optional and absent by default', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster() });
    expect(r.cluster!.manifestMirror).toBeUndefined();
    expect(r.cluster!.manifestDir).toBeUndefined();
  });

  it('mirror drops trailing slashes; dir resolves against the declaring file', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster(
        '  manifest_mirror = "http://127.0.0.1:8080/m/"\n  manifest_dir = "offline/manifests"',
      ),
    });
    expect(r.diagnostics).toEqual([]);
    expect(r.cluster!.manifestMirror).toBe('http://127.0.0.1:8080/m');
    expect(r.cluster!.manifestDir).toBe(path.join(r.dir, 'offline/manifests'));
  });

  it('reject a mirror that is not an http(s) URL and a "~" dir, at file:line:col', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster('  manifest_mirror = "ftp://x/y"\n  manifest_dir = "~/m"'),
    });
    expect(errors(r).map((d) => where(d, r.dir))).toEqual([
      'c.lokocfg:6:21 error: Invalid value for "manifest_mirror"',
      'c.lokocfg:7:18 error: Invalid value for "manifest_dir"',
    ]);
    expect(errors(r)[1]!.detail).toContain('pathexpand("~/m")');
  });
});
