import path from 'node:path';
import { expect, it } from 'vitest';
import { formatDiagnostic, loadConfig } from '../../../src/config/index.js';
import { FIXTURES } from './helpers.js';

it('reports every mistake of a config with its exact file:line:col in one load', async () => {
  const dir = path.join(FIXTURES, 'mistakes');
  const r = await loadConfig({ path: dir, env: {} });
  expect(r.cluster).toBeUndefined();
  const lines = r.diagnostics.map((d) => formatDiagnostic(d, { cwd: dir }).split('\n')[0]);
  expect(lines).toEqual([
    'cluster.lokocfg:6:22: error: Invalid value for "controller_count": expected number, got string',
    'cluster.lokocfg:7:3: error: Unsupported attribute "controler_type"',
    'cluster.lokocfg:8:22: error: variable "os_image" is not declared',
    'cluster.lokocfg:14:15: error: Duplicate worker pool "web"',
    'cluster.lokocfg:18:15: error: Worker pool name "controller" is reserved',
  ]);
  const details = r.diagnostics.map((d) => d.detail ?? '');
  expect(details[1]).toContain('Did you mean "controller_type"?');
  expect(details[2]).toContain('--var os_image=<value>');
  expect(details[3]).toContain('cluster.lokocfg:10:15');
});
