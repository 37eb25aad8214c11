import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PROJECT,
  cluster,
  errors,
  loadFiles,
  onlyError,
  warnings,
  where,
  writeTree,
} from './helpers.js';

/** A config whose metro comes from var.metro, declared with a default. */
const files = (extra: Record<string, string> = {}): Record<string, string> => ({
  'vars.lokocfg': 'variable "metro" {\n  default = "aa"\n}\n',
  'cluster.lokocfg': cluster().replace('"sv"', 'var.metro'),
  ...extra,
});

describe('variables: sources and precedence', () => {
  it('uses the variable default when nothing else sets it', async () => {
    const r = await loadFiles(files());
    expect(r.cluster!.metro).toBe('aa');
  });

  it('lokocfg.vars beats the default', async () => {
    const r = await loadFiles(files({ 'lokocfg.vars': 'metro = "bb"\n' }));
    expect(r.cluster!.metro).toBe('bb');
    expect(r.files.map((f) => path.basename(f))).toContain('lokocfg.vars');
  });

  it('--var-file beats lokocfg.vars, and later var files win', async () => {
    const other = writeTree({ 'one.vars': 'metro = "cc"\n', 'two.vars': 'metro = "dd"\n' });
    const one = path.join(other, 'one.vars');
    const two = path.join(other, 'two.vars');
    let r = await loadFiles(files({ 'lokocfg.vars': 'metro = "bb"\n' }), { varFiles: [one] });
    expect(r.cluster!.metro).toBe('cc');
    r = await loadFiles(files({ 'lokocfg.vars': 'metro = "bb"\n' }), { varFiles: [one, two] });
    expect(r.cluster!.metro).toBe('dd');
    r = await loadFiles(files(), { varFiles: [two, one] });
    expect(r.cluster!.metro).toBe('cc');
  });

  it('LOKO_VAR_<name> beats var files', async () => {
    const other = writeTree({ 'one.vars': 'metro = "cc"\n' });
    const r = await loadFiles(files({ 'lokocfg.vars': 'metro = "bb"\n' }), {
      varFiles: [path.join(other, 'one.vars')],
      env: { LOKO_VAR_metro: 'ee' },
    });
    expect(r.cluster!.metro).toBe('ee');
  });

  it('--var beats everything', async () => {
    const other = writeTree({ 'one.vars': 'metro = "cc"\n' });
    const r = await loadFiles(files({ 'lokocfg.vars': 'metro = "bb"\n' }), {
      varFiles: [path.join(other, 'one.vars')],
      env: { LOKO_VAR_metro: 'ee' },
      vars: { metro: 'ff' },
    });
    expect(r.cluster!.metro).toBe('ff');
  });

  it('coerces string values from --var and the environment to numbers and bools', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': cluster(
          '  controller_count = var.cc\n  worker_pool "w" {\n    count = var.n\n    disable_bgp = var.nobgp\n  }',
        ),
        'v.lokocfg': 'variable "cc" {}\nvariable "n" {}\nvariable "nobgp" {}\n',
      },
      { vars: { cc: '3', n: '4' }, env: { LOKO_VAR_nobgp: 'true' } },
    );
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.controllerCount).toBe(3);
    expect(r.cluster!.workerPools[0]).toMatchObject({ count: 4, disableBgp: true });
  });

  it('reports a string that is not a number where a number is expected', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': cluster('  controller_count = var.cc'), 'v.lokocfg': 'variable "cc" {}\n' },
      { vars: { cc: 'three' } },
    );
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe(
      'c.lokocfg:6:22 error: Invalid value for "controller_count": expected number, got string',
    );
  });

  it('parses --var values of collection-typed variables as HCL', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': cluster('  ssh_pubkeys = var.keys\n  tags = var.tags'),
        'v.lokocfg':
          'variable "keys" {\n  type = list(string)\n}\nvariable "tags" {\n  type = map(string)\n}\n',
      },
      {
        vars: { keys: '["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p a@b"]' },
        env: { LOKO_VAR_tags: '{ team = "x" }' },
      },
    );
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.sshPubkeys).toHaveLength(1);
    expect(r.cluster!.tags).toEqual(['team:x']);
  });

  it('reports an unparsable collection value from --var', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': cluster('  ssh_pubkeys = var.keys'),
        'v.lokocfg': 'variable "keys" {\n  type = list(string)\n}\n',
      },
      { vars: { keys: '[oops' } },
    );
    expect(onlyError(r).summary).toBe('Invalid value from --var keys=... (variable "keys")');
  });

  it('supports attribute and index access on variable values', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster(
        '  worker_pool "w" {\n    count = var.pools.web.counts[1]\n    node_type = var["plan"]\n  }',
      ),
      'v.lokocfg':
        'variable "pools" {\n  default = { web = { counts = [1, 5] } }\n}\nvariable "plan" {\n  default = "m3.large.x86"\n}\n',
    });
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.workerPools[0]).toMatchObject({ count: 5, nodeType: 'm3.large.x86' });
  });
});

describe('variables: errors', () => {
  it('reports a variable without a value at the reference, with the four ways to set it', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace('"sv"', 'var.metro'),
      'v.lokocfg': 'variable "metro" {\n  description = "where"\n}\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:4:18 error: No value for variable "metro"');
    for (const way of ['--var metro=', 'LOKO_VAR_metro', '--var-file', 'lokocfg.vars', 'default']) {
      expect(e.detail).toContain(way);
    }
    expect(r.cluster).toBeUndefined();
  });

  it('reports each reference of an unset variable once, and suggests declared names', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster('  os = var.mtero\n  controller_type = var.mtero'),
      'v.lokocfg': 'variable "metro" {\n  default = "sv"\n}\n',
    });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'c.lokocfg:6:8 error: variable "mtero" is not declared',
      'c.lokocfg:7:21 error: variable "mtero" is not declared',
    ]);
    expect(errors(r)[0]!.detail).toContain('Did you mean var.metro?');
  });

  it('says an undeclared variable without a value is not declared, with the did-you-mean', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace('"sv"', 'var.metr'),
      'v.lokocfg': 'variable "metro" {\n  default = "sv"\n}\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('c.lokocfg:4:18 error: variable "metr" is not declared');
    expect(e.detail).toContain('Did you mean var.metro?');
    expect(e.summary).not.toContain('No value');
  });

  it('accepts values for variables that are used but not declared', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': cluster().replace('"sv"', 'var.metro') },
      { vars: { metro: 'ny' } },
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.cluster!.metro).toBe('ny');
  });

  it('warns about values for variables nothing declares or uses', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': cluster().replace('"sv"', 'var.metro'),
        'lokocfg.vars': 'metro = "sv"\nmetor = "x"\n',
      },
      { vars: { metr: 'da' } },
    );
    expect(errors(r)).toEqual([]);
    expect(warnings(r).map((w) => where(w, r.dir))).toEqual([
      'warning: Value for undeclared variable "metr"',
      'lokocfg.vars:2:1 warning: Value for undeclared variable "metor"',
    ]);
    expect(warnings(r)[1]!.detail).toContain('Did you mean "metro"?');
  });

  it('counts references inside component bodies as uses', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': `${cluster()}component "metallb" {\n  pool = var.pool\n}\n` },
      { vars: { pool: '10.0.0.0/30' } },
    );
    expect(warnings(r)).toEqual([]);
  });

  it('allows only literals in variable files', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg': cluster().replace('"sv"', 'var.metro'),
        'lokocfg.vars': 'metro = env("X")\nother = var.metro\n',
      },
      { env: { X: 'sv' } },
    );
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'lokocfg.vars:1:9 error: Functions not allowed here',
      'lokocfg.vars:2:9 error: Variables not allowed here',
    ]);
  });

  it('reports blocks and duplicates in variable files', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace('"sv"', 'var.metro'),
      'lokocfg.vars': 'metro = "sv"\nmetro = "da"\nvariable "x" {}\n',
    });
    expect(errors(r).map((e) => where(e, r.dir))).toEqual([
      'lokocfg.vars:2:1 error: Duplicate variable "metro"',
      'lokocfg.vars:3:1 error: Unexpected "variable" block in a variable file',
    ]);
  });

  it('reports a missing --var-file', async () => {
    const r = await loadFiles(files(), { varFiles: ['/nonexistent/x.vars'] });
    expect(onlyError(r).summary).toBe('Cannot read variable file /nonexistent/x.vars');
  });

  it('reports syntax errors in variable files with their position', async () => {
    const r = await loadFiles(files({ 'lokocfg.vars': 'metro = ["a"\n' }));
    expect(where(onlyError(r), r.dir)).toBe("lokocfg.vars:2:1 error: Missing ']'");
  });

  it('does not allow a default to refer to another variable', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace('"sv"', 'var.metro'),
      'v.lokocfg':
        'variable "metro" {\n  default = var.other\n}\nvariable "other" {\n  default = "sv"\n}\n',
    });
    expect(where(onlyError(r), r.dir)).toBe('v.lokocfg:2:13 error: Variables not allowed here');
  });

  it('rejects unknown attributes in variable blocks but accepts type and description', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster(),
      'v.lokocfg':
        'variable "x" {\n  type = map(string)\n  description = "d"\n  sensitive = true\n}\n',
    });
    expect(where(onlyError(r), r.dir)).toBe(
      'v.lokocfg:4:3 error: Unsupported attribute "sensitive"',
    );
  });

  it('project_id from lokocfg.vars is used', async () => {
    const r = await loadFiles({
      'c.lokocfg': cluster().replace(`"${PROJECT}"`, 'var.project'),
      'lokocfg.vars': `project = "${PROJECT.toUpperCase()}"\n`,
    });
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.projectId).toBe(PROJECT);
  });
});

describe('variables: types', () => {
  const use = cluster('  controller_count = var.cc');

  it('reports an unknown type with a did-you-mean', async () => {
    const r = await loadFiles({
      'c.lokocfg': use,
      'v.lokocfg': 'variable "cc" {\n  type = numbr\n  default = 1\n}\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('v.lokocfg:2:10 error: Unknown type "numbr" for variable "cc"');
    expect(e.detail).toContain('Did you mean "number"?');
  });

  it('reports a default of the wrong type at the default', async () => {
    const r = await loadFiles({
      'c.lokocfg': use,
      'v.lokocfg': 'variable "cc" {\n  type = number\n  default = "abc"\n}\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('v.lokocfg:3:13 error: Invalid default for variable "cc"');
    expect(e.detail).toContain('expected a number');
  });

  it('reports a --var of the wrong type against the flag, not at the use', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': use, 'v.lokocfg': 'variable "cc" {\n  type = number\n}\n' },
      { vars: { cc: 'abc' } },
    );
    const e = onlyError(r);
    expect(e.summary).toBe('--var cc=abc: expected a number');
    expect(e.range).toBeUndefined();
  });

  it('converts a numeric --var for a number variable', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': use, 'v.lokocfg': 'variable "cc" {\n  type = number\n}\n' },
      { vars: { cc: '3' } },
    );
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.controllerCount).toBe(3);
  });

  it('reports a var-file value of the wrong type at the var-file', async () => {
    const r = await loadFiles({
      'c.lokocfg': use,
      'v.lokocfg': 'variable "cc" {\n  type = number\n}\n',
      'lokocfg.vars': '# values\ncc = "abc"\n',
    });
    const e = onlyError(r);
    expect(where(e, r.dir)).toBe('lokocfg.vars:2:6 error: Invalid value for variable "cc"');
    expect(e.detail).toContain('expected a number');
  });
});
