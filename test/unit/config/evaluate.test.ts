import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiagnosticSink } from '../../../src/config/diagnostics.js';
import { loadConfig } from '../../../src/config/index.js';
import { evaluate } from '../../../src/config/evaluate.js';
import { parseHcl } from '../../../src/config/parse.js';
import { toPlain, UNKNOWN } from '../../../src/config/values.js';
import { cluster, errors, loadFiles, onlyError, where, writeTree } from './helpers.js';

/** Evaluates the expression of `v = <src>` in a file at `file`; variables come from `vars`. */
async function ev(
  src: string,
  opts: { env?: Record<string, string>; vars?: Record<string, unknown>; file?: string } = {},
): Promise<{ value: unknown; diags: string[] }> {
  const file = opts.file ?? '/cfg/test.lokocfg';
  const parsed = await parseHcl(`v = ${src}\n`, file);
  if (parsed.diagnostics.length) {
    return {
      value: undefined,
      diags: parsed.diagnostics.map(
        (d) => `${d.range?.start.line}:${d.range?.start.column} ${d.summary}`,
      ),
    };
  }
  const sink = new DiagnosticSink();
  const vars = opts.vars ?? {};
  const value = evaluate(parsed.body.attributes[0]!.expr, {
    sink,
    functions: true,
    env: opts.env ?? {},
    lookupVar: (name, range) => {
      if (name in vars) return fromPlain(vars[name]);
      sink.error(`No value for variable "${name}"`, undefined, range);
      return UNKNOWN;
    },
  });
  return {
    value: value === UNKNOWN ? UNKNOWN : toPlain(value),
    diags: sink.items.map((d) => `${d.range?.start.line}:${d.range?.start.column} ${d.summary}`),
  };
}

function fromPlain(v: unknown): import('../../../src/config/values.js').Value {
  if (Array.isArray(v)) return v.map(fromPlain);
  if (v && typeof v === 'object')
    return new Map(Object.entries(v).map(([k, x]) => [k, fromPlain(x)]));
  return v as string | number | boolean | null;
}

describe('literals and collections', () => {
  it('evaluates literals', async () => {
    expect((await ev('42')).value).toBe(42);
    expect((await ev('1.5e2')).value).toBe(150);
    expect((await ev('true')).value).toBe(true);
    expect((await ev('null')).value).toBe(null);
    expect((await ev('"x y"')).value).toBe('x y');
  });

  it('evaluates lists and objects, with identifier, string and expression keys', async () => {
    expect((await ev('[1, "a", [true]]')).value).toEqual([1, 'a', [true]]);
    expect((await ev('{ a = 1, "b-c" = 2, ("d${1}") = 3 }')).value).toEqual({
      a: 1,
      'b-c': 2,
      d1: 3,
    });
    expect((await ev('{\n  a = 1\n  b = { c = [] }\n}')).value).toEqual({ a: 1, b: { c: [] } });
  });

  it('reports duplicate object keys at the second key', async () => {
    expect((await ev('{ a = 1, a = 2 }')).diags).toEqual(['1:14 Duplicate object key "a"']);
  });
});

describe('templates', () => {
  it('interpolates values and keeps the whitespace around interpolations', async () => {
    expect((await ev('"a ${var.x} b ${1 + 1}"', { vars: { x: 'X' } })).value).toBe('a X b 2');
    expect((await ev('"${var.x}"', { vars: { x: 3 } })).value).toBe(3);
    expect((await ev('"n=${var.n}, ok=${true}"', { vars: { n: 1.5 } })).value).toBe(
      'n=1.5, ok=true',
    );
  });

  it('decodes escapes and literal ${ markers', async () => {
    expect((await ev('"tab\\there\\n\\"q\\" \\\\ \\u00e9 $${x} %%{y}"')).value).toBe(
      'tab\there\n"q" \\ é ${x} %{y}',
    );
  });

  it('reports invalid escapes as syntax errors', async () => {
    expect((await ev('"a\\qb"')).diags[0]).toBe('1:6 Syntax error');
  });

  it('evaluates heredocs, with <<- removing common indentation', async () => {
    expect((await ev('<<EOT\nline ${var.x}\n  two\nEOT\n', { vars: { x: 1 } })).value).toBe(
      'line 1\n  two\n',
    );
    expect(
      (await ev('<<-EOT\n    a\n      b ${var.x}\n    c $${x}\n  EOT\n', { vars: { x: 'X' } }))
        .value,
    ).toBe('a\n  b X\nc ${x}\n');
  });

  it('strips whitespace next to ${~ and ~}', async () => {
    expect((await ev('"a   ${~ "b" ~}   c"')).value).toBe('abc');
  });

  it('refuses to interpolate lists and null', async () => {
    expect((await ev('"a ${[1]}"')).diags).toEqual(['1:10 Invalid template interpolation value']);
    expect((await ev('"a ${null}"')).diags).toEqual(['1:10 Invalid template interpolation value']);
  });

  it('reports template directives as not supported, with their position', async () => {
    expect((await ev('"%{ if true }x%{ endif }"')).diags).toEqual([
      '1:6 Template directives (%{ ... }) are not supported',
    ]);
  });
});

describe('operators and conditionals', () => {
  it('evaluates arithmetic, comparison and logic', async () => {
    expect((await ev('1 + 2 * 3 - 4 / 2')).value).toBe(5);
    expect((await ev('7 % 3')).value).toBe(1);
    expect((await ev('-(2 + 1)')).value).toBe(-3);
    expect((await ev('!false && 2 >= 2 || false')).value).toBe(true);
    expect((await ev('"a" == "a" && [1] != [2]')).value).toBe(true);
    expect((await ev('var.n > 2', { vars: { n: '3' } })).value).toBe(true);
  });

  it('evaluates only the chosen branch of a conditional', async () => {
    expect((await ev('var.x == "" ? env("UNSET") : var.x', { vars: { x: 'set' } })).value).toBe(
      'set',
    );
    expect((await ev('true ? 1 : 2')).value).toBe(1);
  });

  it('reports bad operands and division by zero at the operand', async () => {
    expect((await ev('1 + "a"')).diags).toEqual(['1:9 Invalid operand']);
    expect((await ev('1 / 0')).diags).toEqual(['1:9 Division by zero']);
    expect((await ev('"x" ? 1 : 2')).diags).toEqual(['1:5 Invalid condition']);
  });

  it('reports for expressions and splats as not supported', async () => {
    expect((await ev('[for x in [1] : x]')).diags).toEqual([
      '1:5 For expressions are not supported',
    ]);
    expect((await ev('var.x[*].y', { vars: { x: [] } })).diags).toEqual([
      '1:5 Splat expressions ([*] and .*) are not supported',
    ]);
  });
});

describe('references', () => {
  it('indexes lists and objects, including legacy .0 indexes', async () => {
    const vars = { l: ['a', 'b'], o: { k: { n: 1 } } };
    expect((await ev('var.l[1]', { vars })).value).toBe('b');
    expect((await ev('var.l.0', { vars })).value).toBe('a');
    expect((await ev('var.o["k"].n', { vars })).value).toBe(1);
  });

  it('reports bad indexes and attributes', async () => {
    const vars = { l: ['a'], o: { name: 1 } };
    expect((await ev('var.l[3]', { vars })).diags).toEqual(['1:11 Invalid index']);
    expect((await ev('var.o.nmae', { vars })).diags).toEqual(['1:5 Unsupported attribute "nmae"']);
  });

  it('reports bare names, suggesting quotes', async () => {
    const r = await ev('sv');
    expect(r.diags).toEqual(['1:5 Unknown name "sv"']);
  });
});

describe('functions', () => {
  it('file() reads relative to the declaring file', async () => {
    const dir = writeTree({ 'sub/k.pub': 'key\n' });
    expect((await ev('file("sub/k.pub")', { file: path.join(dir, 'a.lokocfg') })).value).toBe(
      'key\n',
    );
    expect((await ev(`file("${path.join(dir, 'sub/k.pub')}")`)).value).toBe('key\n');
  });

  it('file() reports a missing file at its argument', async () => {
    const r = await ev('file("nope.txt")');
    expect(r.diags).toEqual(['1:10 Invalid function argument']);
  });

  it('pathexpand() expands ~ from HOME and leaves other paths alone', async () => {
    const env = { HOME: '/home/me' };
    expect((await ev('pathexpand("~/.ssh/id.pub")', { env })).value).toBe('/home/me/.ssh/id.pub');
    expect((await ev('pathexpand("~")', { env })).value).toBe('/home/me');
    expect((await ev('pathexpand("rel/x")', { env })).value).toBe('rel/x');
    expect((await ev('pathexpand("~bob/x")', { env })).diags).toEqual([
      '1:16 Invalid function argument',
    ]);
  });

  it('env() reads the environment, with an optional default', async () => {
    expect((await ev('env("A")', { env: { A: 'x' } })).value).toBe('x');
    expect((await ev('env("A", "d")')).value).toBe('d');
    expect((await ev('env("A", "d")', { env: { A: '' } })).value).toBe('');
    expect((await ev('env("A")')).diags).toEqual(['1:9 Environment variable "A" is not set']);
  });

  it('reports unknown functions with a suggestion, and wrong arity', async () => {
    const parsed = await parseHcl('v = fille("x")\n', '/cfg/a.lokocfg');
    const sink = new DiagnosticSink();
    evaluate(parsed.body.attributes[0]!.expr, { sink, functions: true, env: {} });
    expect(sink.items[0]!.summary).toBe('Call to unknown function "fille"');
    expect(sink.items[0]!.detail).toContain('Did you mean "file"?');
    expect((await ev('file()')).diags).toEqual(['1:5 Wrong number of arguments']);
    expect((await ev('env("a", "b", "c")')).diags).toEqual(['1:5 Wrong number of arguments']);
    expect((await ev('file(["x"])')).diags).toEqual(['1:10 Invalid function argument']);
  });

  it('works inside a cluster: file(), pathexpand() and env() together', async () => {
    const dir = writeTree({
      'cfg/c.lokocfg': cluster(
        '  ssh_pubkeys = [file("../keys/id.pub")]\n  controller_type = env("PLAN", "c3.small.x86")',
      ).replace('"assets"', 'pathexpand("~/clusters/${env("NAME")}")'),
      'keys/id.pub': 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p k@x\n',
    });
    const r = await loadConfig({
      path: path.join(dir, 'cfg'),
      env: { HOME: '/home/me', NAME: 'demo' },
    });
    expect(errors(r)).toEqual([]);
    expect(r.cluster!.assetDir).toBe('/home/me/clusters/demo');
    expect(r.cluster!.sshPubkeys).toEqual([
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p k@x',
    ]);
    expect(r.cluster!.controllerType).toBe('c3.small.x86');
  });

  it('reports an unset env() inside a cluster at the call', async () => {
    const r = await loadFiles({ 'c.lokocfg': cluster('  os = env("LOKO_OS")') });
    expect(where(onlyError(r), r.dir)).toBe(
      'c.lokocfg:6:12 error: Environment variable "LOKO_OS" is not set',
    );
  });
});
