import { describe, expect, it } from 'vitest';
import { parseHcl } from '../../../src/config/parse.js';
import { cluster, loadFiles, where } from './helpers.js';

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
    expect(await diags('a = "abc\nb = 1\n')).toEqual(["3:1 Missing '\"'"]);
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
