/** Errors people meet first: no endpoint, a config full of mistakes, JSON errors, help. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loko, quickstartCopy, requireBuild } from './helpers.js';

describe('cli errors', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
  });
  afterAll(async () => {
    await work?.cleanup();
  });

  it('without an endpoint, names --emulator, --api-url and METAL_API_URL', async () => {
    const r = await loko(['cluster', 'plan', '-c', work.dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--emulator');
    expect(r.stderr).toContain('--api-url');
    expect(r.stderr).toContain('METAL_API_URL');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace without --debug
    expect(r.stdout).toBe('');
  });

  it('with -o json, an error is also one JSON document on stdout', async () => {
    const r = await loko(['cluster', 'plan', '-c', work.dir, '-o', 'json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { error: { message: string; exitCode: number } };
    expect(doc.error.message).toContain('--emulator');
    expect(doc.error.exitCode).toBe(1);
  });

  describe('a config with several mistakes', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'loko-e2e-bad-'));
      await writeFile(
        path.join(dir, 'cluster.lokocfg'),
        [
          'cluster "equinixmetal" {',
          '  cluster_name     = "broken"',
          '  project_id       = "8e1c7f0a-4b2d-4c3e-9f10-123456789abc"',
          '  metro            = "sv"',
          '  asset_dir        = "./assets"',
          '  controller_count = "three"',
          '  controler_type   = "c3.small.x86"',
          '  os               = var.os_image',
          '',
          '  worker_pool "web" {',
          '    count = 2',
          '  }',
          '',
          '  worker_pool "web" {',
          '    count = 1',
          '  }',
          '',
          '  worker_pool "controller" {',
          '    count = 1',
          '  }',
          '}',
          '',
        ].join('\n'),
      );
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('config validate lists every problem with file:line:col and exits 1', async () => {
      const r = await loko(['config', 'validate', '-c', dir], { cwd: dir });
      expect(r.code).toBe(1);
      for (const line of [6, 7, 8, 14, 18])
        expect(r.stderr).toMatch(new RegExp(`cluster\\.lokocfg:${line}:\\d+: error`));
    });

    it('cluster apply reports the same diagnostics before touching any API', async () => {
      const r = await loko(['cluster', 'apply', '-c', dir, '--emulator', '--yes'], { cwd: dir });
      expect(r.code).toBe(1);
      for (const line of [6, 7, 8, 14, 18])
        expect(r.stderr).toMatch(new RegExp(`cluster\\.lokocfg:${line}:\\d+: error`));
      expect(r.stderr).toContain('the configuration has 5 errors');
    });

    it('config validate -o json gives each diagnostic with its position', async () => {
      const r = await loko(['config', 'validate', '-c', dir, '-o', 'json']);
      expect(r.code).toBe(1);
      const doc = JSON.parse(r.stdout) as {
        valid: boolean;
        diagnostics: Array<{ line: number; column: number; file: string }>;
      };
      expect(doc.valid).toBe(false);
      expect(doc.diagnostics.map((d) => d.line)).toEqual(expect.arrayContaining([6, 7, 8, 14, 18]));
    });
  });

  it('--emulator after project_id changed names both ids, the state file and the fix', async () => {
    const first = await loko(['cluster', 'plan', '-c', work.dir, '--emulator']);
    expect([0, 2], first.stderr).toContain(first.code);
    const other = '0b5e7c1d-3f2a-4e8b-9c6d-1a2b3c4d5e6f';
    const r = await loko([
      'cluster',
      'plan',
      '-c',
      work.dir,
      '--emulator',
      '--var',
      `project_id=${other}`,
    ]);
    expect(r.code, r.stderr).toBe(1);
    const state = path.join(work.assets, 'emulator', 'state.json');
    expect(r.stderr).toContain(`project_id ${other} of the configuration`);
    expect(r.stderr).toContain('5f1c3a0e-2d4b-4e6f-9a8b-7c6d5e4f3a21');
    expect(r.stderr).toContain(`Delete ${state}`);
    expect(r.stderr).toContain('set project_id back to 5f1c3a0e-2d4b-4e6f-9a8b-7c6d5e4f3a21');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--help is served without loading the heavy modules and exits 0', async () => {
    const r = await loko(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cluster');
    expect(r.stdout).toContain('--emulator');
  });

  it("an unknown command exits 1 with commander's message on stderr", async () => {
    const r = await loko(['cluster', 'aply']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('apply');
  });
});
