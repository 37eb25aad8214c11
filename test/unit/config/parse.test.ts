import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHcl } from '../../../src/config/parse.js';
import { FIXTURES, cluster, loadFiles, where } from './helpers.js';

const diags = async (src: string): Promise<string[]> =>
  (await parseHcl(src, '/x/a.lokocfg')).diagnostics.map(
    (d) => `${d.range!.start.line}:${d.range!.start.column} ${d.summary}`,
  );

describe('parseHcl', () => {
  it('parses a file without a trailing newline', async () => {
    const p = await parseHcl('a = 1\nb "x" {\n  c = "d"\n}', '/x/a.lokocfg');
    expect(p.diagnostics).toEqual([]);
    expect(p.body.attributes.map((a) => a.name)).toEqual(['a']);
    expect(p.body.blocks[0]!.labels.map((l) => l.value)).toEqual(['x']);
    expect(p.body.blocks[0]!.body.attributes[0]!.range).toEqual({
      file: '/x/a.lokocfg',
      start: { line: 3, column: 3 },
      end: { line: 3, column: 10 },
    });
  });

  it('parses empty and comment-only files', async () => {
    expect((await parseHcl('', '/x/a.lokocfg')).body).toEqual({ attributes: [], blocks: [] });
    const p = await parseHcl('# c\n// d\n/* e */\n', '/x/a.lokocfg');
    expect(p.diagnostics).toEqual([]);
  });

  it('keeps comments out of expressions', async () => {
    const p = await parseHcl('a = [\n  1, # one\n  2, // two\n]\n', '/x/a.lokocfg');
    expect(p.diagnostics).toEqual([]);
    const e = p.body.attributes[0]!.expr;
    expect(e.kind === 'tuple' && e.items.length).toBe(2);
  });

  it('reports a missing closing brace with the block it closes', async () => {
    const p = await parseHcl('c "x" {\n  a = 1\n  w "y" {\n    b = 2\n  }\n', '/x/a.lokocfg');
    expect(p.syntaxError).toBe(true);
    expect(
      p.diagnostics.map((d) => `${d.range!.start.line}:${d.range!.start.column} ${d.summary}`),
    ).toEqual(["6:1 Missing '}'"]);
    expect(p.diagnostics[0]!.detail).toBe(
      `The block "c" opened at line 1, column 1 is not closed; add '}'.`,
    );
  });

  it('reports missing brackets, quotes and parentheses', async () => {
    expect(await diags('a = [1, 2\n')).toEqual(["2:1 Missing ']'"]);
    expect(await diags('a = "abc\nb = 1\n')).toEqual([
      `1:5 Unterminated string: add '"' before the end of line 1`,
    ]);
    expect(await diags('a = f(1,\n')).toEqual(["2:1 Missing ')'"]);
  });

  it('reports unexpected tokens as syntax errors at their position', async () => {
    expect(await diags('x {\n  a = 1\n}}\n')).toEqual(['3:2 Syntax error']);
    expect(await diags('a = = 1\n')).toEqual(['1:1 Syntax error']);
  });

  it('stops the load after syntax errors, reporting every file', async () => {
    const r = await loadFiles({
      'a.lokocfg': cluster('  controller_count = ['),
      'b.lokocfg': 'component "x" {\n',
    });
    // Recovery sees the pool block as stray tokens inside the unclosed list.
    expect(r.diagnostics.map((d) => where(d, r.dir))).toEqual([
      'a.lokocfg:7:3 error: Syntax error',
      'a.lokocfg:7:15 error: Syntax error',
      "a.lokocfg:10:1 error: Missing ']'",
      "b.lokocfg:2:1 error: Missing '}'",
    ]);
    expect(r.diagnostics[0]!.detail).toBe("Unexpected 'worker_pool' here.");
    expect(r.cluster).toBeUndefined();
  });
});

describe('unterminated strings', () => {
  const quickstart = path.resolve(FIXTURES, '../../../examples/quickstart');
  /** The quickstart example with the closing quote of `line` removed. */
  const broken = (line: number): Record<string, string> => {
    const lines = readFileSync(path.join(quickstart, 'cluster.lokocfg'), 'utf8').split('\n');
    lines[line - 1] = lines[line - 1]!.replace(/"([^"]*)$/, '$1');
    return {
      'cluster.lokocfg': lines.join('\n'),
      'variables.lokocfg': readFileSync(path.join(quickstart, 'variables.lokocfg'), 'utf8'),
    };
  };

  it('reports one error at the opening quote of an attribute value, nothing cascading', async () => {
    const r = await loadFiles(broken(20));
    expect(r.diagnostics.map((d) => where(d, r.dir))).toEqual([
      `cluster.lokocfg:20:22 error: Unterminated string: add '"' before the end of line 20`,
    ]);
    expect(r.diagnostics[0]!.detail).toContain('cannot span lines');
  });

  it('reports one error for a map value missing its quote', async () => {
    const r = await loadFiles(broken(28));
    expect(r.diagnostics.map((d) => where(d, r.dir))).toEqual([
      `cluster.lokocfg:28:19 error: Unterminated string: add '"' before the end of line 28`,
    ]);
  });

  it('keeps syntax errors before the string and other files', async () => {
    const r = await loadFiles({
      'a.lokocfg': 'x {\n  a = 1\n}}\ny {\n  b = "open\n  c = "d"\n}\n',
      'b.lokocfg': 'component "x" {\n',
    });
    expect(r.diagnostics.map((d) => where(d, r.dir))).toEqual([
      'a.lokocfg:3:2 error: Syntax error',
      `a.lokocfg:5:7 error: Unterminated string: add '"' before the end of line 5`,
      "b.lokocfg:2:1 error: Missing '}'",
    ]);
  });

  it('reports a string running over a line even when the rest happens to parse', async () => {
    expect(await diags('a = "x\n  y"\n')).toEqual([
      `1:5 Unterminated string: add '"' before the end of line 1`,
    ]);
  });

  it('allows line breaks inside ${ ... } and in heredocs', async () => {
    expect(await diags('a = "${\n  b}"\nc = <<EOT\nx\nEOT\n')).toEqual([]);
  });
});
