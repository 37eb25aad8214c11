/**
 * Collecting, ordering and formatting config diagnostics. Nothing here prints: the command layer
 * decides where {@link formatDiagnostic}'s text goes.
 */
import path from 'node:path';
import { Chalk } from 'chalk';
import type { Diagnostic, SourceRange } from './types.js';

/** Accumulates diagnostics while the loader keeps going after errors. */
export class DiagnosticSink {
  readonly items: Diagnostic[] = [];

  error(summary: string, detail: string | undefined, range: SourceRange | undefined): void {
    this.items.push(make('error', summary, detail, range));
  }

  warning(summary: string, detail: string | undefined, range: SourceRange | undefined): void {
    this.items.push(make('warning', summary, detail, range));
  }

  /** Number of errors so far; callers compare before/after to know whether a step failed. */
  get errorCount(): number {
    return this.items.filter((d) => d.severity === 'error').length;
  }
}

function make(
  severity: Diagnostic['severity'],
  summary: string,
  detail: string | undefined,
  range: SourceRange | undefined,
): Diagnostic {
  const d: Diagnostic = { severity, summary };
  if (detail !== undefined) d.detail = detail;
  if (range !== undefined) d.range = range;
  return d;
}

/** `file:line:col` of a range's start, the file relative to `cwd` when it lies below it. */
export function formatPosition(range: SourceRange, cwd = process.cwd()): string {
  return `${displayPath(range.file, cwd)}:${range.start.line}:${range.start.column}`;
}

function displayPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  // Far-away files read better absolute than as a chain of '../'.
  if (rel === '' || rel.startsWith(`..${path.sep}..${path.sep}`) || path.isAbsolute(rel)) {
    return file;
  }
  return rel;
}

/**
 * Renders one diagnostic as `path:line:col: error: summary`, followed by the detail on indented
 * lines. Without a range the position prefix is left out. `cwd` (default: process.cwd()) makes the
 * path relative; `color` adds ANSI colours (the caller decides from TTY / NO_COLOR).
 */
export function formatDiagnostic(
  d: Diagnostic,
  opts: { cwd?: string; color?: boolean } = {},
): string {
  const c = new Chalk({ level: opts.color ? 1 : 0 });
  const sev = d.severity === 'error' ? c.red.bold('error') : c.yellow.bold('warning');
  const where = d.range ? `${c.bold(formatPosition(d.range, opts.cwd))}: ` : '';
  let out = `${where}${sev}: ${d.summary}`;
  if (d.detail) {
    out +=
      '\n' +
      d.detail
        .split('\n')
        .map((line) => (line === '' ? '' : `  ${line}`))
        .join('\n');
  }
  return out;
}

/**
 * Orders diagnostics by file (in load order), then position; diagnostics without a range first,
 * since they are about the load as a whole. Stable for equal positions.
 */
export function sortDiagnostics(diags: Diagnostic[], files: string[]): Diagnostic[] {
  const fileIndex = (f: string): number => {
    const i = files.indexOf(f);
    return i === -1 ? files.length : i;
  };
  return diags
    .map((d, i) => ({ d, i }))
    .sort((a, b) => {
      const ra = a.d.range;
      const rb = b.d.range;
      if (!ra || !rb) return (ra ? 1 : 0) - (rb ? 1 : 0) || a.i - b.i;
      return (
        fileIndex(ra.file) - fileIndex(rb.file) ||
        ra.file.localeCompare(rb.file) ||
        ra.start.line - rb.start.line ||
        ra.start.column - rb.start.column ||
        a.i - b.i
      );
    })
    .map((x) => x.d);
}

/** Levenshtein distance, for did-you-mean suggestions. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a typo-sized distance, if any. */
export function suggest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  const limit = Math.max(2, Math.floor(name.length / 3));
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDist && d <= limit) {
      best = c;
      bestDist = d;
    }
  }
  return best;
}

/** `"a", "b" and "c"`, for messages listing valid names. */
export function quoteList(names: readonly string[]): string {
  const q = names.map((n) => `"${n}"`);
  if (q.length <= 1) return q.join('');
  return `${q.slice(0, -1).join(', ')} and ${q[q.length - 1]}`;
}
