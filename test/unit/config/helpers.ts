import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config/index.js';
import type { Diagnostic, LoadOptions, LoadResult } from '../../../src/config/index.js';

export const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../fixtures/config',
);

export const PROJECT = '8e1c7f0a-4b2d-4c3e-9f10-123456789abc';
export const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p me@example.com';

/** Writes files (relative path -> content) into a fresh temp directory and returns it. */
export function writeTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'loko-config-'));
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(dir, rel);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

/** Loads `files` from a temp dir; env defaults to an empty environment with HOME=/home/tester. */
export async function loadFiles(
  files: Record<string, string>,
  opts: Partial<LoadOptions> = {},
): Promise<LoadResult & { dir: string }> {
  const dir = writeTree(files);
  const result = await loadConfig({ env: { HOME: '/home/tester' }, ...opts, path: dir });
  return { ...result, dir };
}

const DEFAULT_POOL = '  worker_pool "general" {\n    count = 1\n  }';

/**
 * A minimal valid cluster block: `extra` lines go inside it from line 6 on, followed by `pools`
 * (one pool by default, so no "No worker pools" warning).
 */
export function cluster(extra = '', head = 'cluster "equinixmetal"', pools = DEFAULT_POOL): string {
  return `${head} {
  cluster_name = "demo"
  project_id   = "${PROJECT}"
  metro        = "sv"
  asset_dir    = "assets"
${extra}
${pools}
}
`;
}

/** `file:line:col severity: summary` with the file relative to `dir`. */
export function where(d: Diagnostic, dir: string): string {
  const pos = d.range
    ? `${path.relative(dir, d.range.file)}:${d.range.start.line}:${d.range.start.column} `
    : '';
  return `${pos}${d.severity}: ${d.summary}`;
}

export function errors(r: LoadResult): Diagnostic[] {
  return r.diagnostics.filter((d) => d.severity === 'error');
}

export function warnings(r: LoadResult): Diagnostic[] {
  return r.diagnostics.filter((d) => d.severity === 'warning');
}

/** The only error, failing loudly when there are none or several. */
export function onlyError(r: LoadResult): Diagnostic {
  const errs = errors(r);
  if (errs.length !== 1) {
    throw new Error(
      `expected exactly one error, got:\n${errs.map((e) => `${e.summary} ${e.detail ?? ''}`).join('\n')}`,
    );
  }
  return errs[0]!;
}
