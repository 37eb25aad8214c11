import { describe, expect, it } from 'vitest';
import { editDistance, sortDiagnostics, suggest } from '../../../src/config/diagnostics.js';
import { formatDiagnostic, type Diagnostic } from '../../../src/config/index.js';

const range = (file: string, line: number, column: number) => ({
  file,
  start: { line, column },
  end: { line, column: column + 3 },
});

describe('formatDiagnostic', () => {
  const d: Diagnostic = {
    severity: 'error',
    summary: 'Unsupported attribute "metr"',
    detail: 'Did you mean "metro"?\nValid names: metro.',
    range: range('/work/cfg/cluster.lokocfg', 3, 5),
  };

  it('renders path:line:col: severity: summary and an indented detail, relative to cwd', () => {
    expect(formatDiagnostic(d, { cwd: '/work' })).toBe(
      'cfg/cluster.lokocfg:3:5: error: Unsupported attribute "metr"\n  Did you mean "metro"?\n  Valid names: metro.',
    );
  });

  it('keeps far-away paths absolute, and leaves out a missing range or detail', () => {
    expect(formatDiagnostic({ ...d, detail: undefined }, { cwd: '/other/place' })).toBe(
      '/work/cfg/cluster.lokocfg:3:5: error: Unsupported attribute "metr"',
    );
    expect(formatDiagnostic({ severity: 'warning', summary: 'No worker pools' })).toBe(
      'warning: No worker pools',
    );
  });

  it('colours only when asked', () => {
    expect(formatDiagnostic(d, { cwd: '/work' })).not.toContain('\u001b[');
    const coloured = formatDiagnostic(d, { cwd: '/work', color: true });
    expect(coloured).toContain('\u001b[31m');
    expect(coloured.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')).toBe(
      formatDiagnostic(d, { cwd: '/work' }),
    );
  });
});

describe('helpers', () => {
  it('sorts by file load order, then position; rangeless first', () => {
    const a: Diagnostic = { severity: 'error', summary: 'a', range: range('/b.lokocfg', 2, 1) };
    const b: Diagnostic = { severity: 'error', summary: 'b', range: range('/a.lokocfg', 9, 1) };
    const c: Diagnostic = { severity: 'error', summary: 'c', range: range('/b.lokocfg', 1, 7) };
    const n: Diagnostic = { severity: 'warning', summary: 'n' };
    expect(
      sortDiagnostics([a, b, n, c], ['/a.lokocfg', '/b.lokocfg']).map((x) => x.summary),
    ).toEqual(['n', 'b', 'c', 'a']);
  });

  it('suggests close names only', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(suggest('controler_type', ['controller_type', 'os'])).toBe('controller_type');
    expect(suggest('zzz', ['controller_type', 'os'])).toBeUndefined();
  });
});
