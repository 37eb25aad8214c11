import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, reportError } from '../../../src/cli.js';
import { createOutputHost } from '../../../src/tasks/output.js';
import { InterruptedError, LokoError } from '../../../src/util/errors.js';
import { memoryStreams } from '../tasks/streams.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function run(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT) {
  const streams = memoryStreams({ env });
  const code = await main(['node', 'loko', ...args], { streams, cwd, exit: () => {} });
  return { code, stdout: streams.out(), stderr: streams.err() };
}

describe('main', () => {
  it('version prints to stdout, -o json as one document', async () => {
    const text = await run(['version']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^loko \d+\.\d+\.\d+ \(node v/);
    const json = await run(['-o', 'json', 'version']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      version: expect.any(String),
      node: process.version,
    });
  });

  it('--help lists the commands and the global flags, exit 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const s of [
      'cluster',
      'config',
      'emulator',
      '--config',
      '--var',
      '--var-file',
      '--api-url',
      '--emulator',
      '--output',
      '--no-color',
      '--debug',
      '--yes',
    ]) {
      expect(r.stdout).toContain(s);
    }
  });

  it('unknown options are commander errors on stderr, exit 1', async () => {
    const r = await run(['cluster', 'plan', '--bogus']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unknown option '--bogus'");
  });

  it('with -o json a usage error is also one JSON document on stdout', async () => {
    const r = await run(['component', 'delete', '-o', 'json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("missing required argument 'names'");
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        message: "missing required argument 'names'",
        hint: 'Run the command with --help for its arguments and flags.',
        exitCode: 1,
      },
    });
    const text = await run(['component', 'delete']);
    expect(text.stdout).toBe('');
  });

  it('bad --output values are rejected', async () => {
    const r = await run(['-o', 'yaml', 'version']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('yaml');
  });

  it('without an endpoint names --emulator, --api-url and METAL_API_URL', async () => {
    const r = await run(['cluster', 'plan', '-c', 'examples/quickstart']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: .*--api-url.*METAL_API_URL.*--emulator/);
  });

  it('METAL_API_URL without a token fails naming METAL_AUTH_TOKEN', async () => {
    const r = await run(['cluster', 'plan', '-c', 'examples/quickstart'], {
      METAL_API_URL: 'http://127.0.0.1:9/metal/v1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('METAL_AUTH_TOKEN');
  });

  it('a bad --var is an error naming the flag', async () => {
    const r = await run(['config', 'validate', '-c', 'examples/quickstart', '--var', 'novalue']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--var "novalue"');
  });

  describe('config diagnostics', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'loko-cli-'));
      await writeFile(
        path.join(dir, 'cluster.lokocfg'),
        'cluster "equinixmetal" {\n  cluster_name = "x"\n  project_id = "8e1c7f0a-4b2d-4c3e-9f10-123456789abc"\n  metro = "sv"\n  asset_dir = "a"\n  controller_count = "one"\n  bogus = 1\n  worker_pool "w" {\n    count = 1\n  }\n}\n',
      );
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('are all printed with file:line:col, exit 1', async () => {
      const r = await run(['cluster', 'apply', '-c', dir, '--emulator', '--yes'], {}, dir);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/cluster\.lokocfg:6:\d+: error/);
      expect(r.stderr).toMatch(/cluster\.lokocfg:7:\d+: error/);
      expect(r.stderr).toContain('error: the configuration has 2 errors');
      expect(r.stdout).toBe('');
    });

    it('config validate -o json keeps stdout one JSON document', async () => {
      const r = await run(['config', 'validate', '-c', dir, '-o', 'json'], {}, dir);
      expect(r.code).toBe(1);
      const doc = JSON.parse(r.stdout) as { valid: boolean; errors: number };
      expect(doc).toMatchObject({ valid: false, errors: 2 });
    });
  });
});

describe('reportError', () => {
  function host(debug = false, format: 'text' | 'json' = 'text') {
    const s = memoryStreams();
    return { s, h: createOutputHost(s, { format, noColor: true, debug }) };
  }

  it('LokoError: message and hint, its exit code, no stack', async () => {
    const { s, h } = host();
    const code = await reportError(
      new LokoError('it broke', { hint: 'do this', exitCode: 3 }),
      h,
      ROOT,
    );
    expect(code).toBe(3);
    expect(s.err()).toBe('error: it broke\nhint: do this\n');
  });

  it('InterruptedError exits 130 and says how to continue', async () => {
    const { s, h } = host();
    expect(await reportError(new InterruptedError(), h, ROOT)).toBe(130);
    expect(s.err()).toContain('interrupted');
    expect(s.err()).toContain('Run the same command again');
  });

  it('MetalApiError names the API call and the API messages', async () => {
    const { s, h } = host();
    const err = Object.assign(
      new Error('POST /projects/p/devices: 422 Unprocessable Entity: plan not available'),
      {
        name: 'MetalApiError',
        status: 422,
        requestId: 'req-1',
      },
    );
    expect(await reportError(err, h, ROOT)).toBe(1);
    expect(s.err()).toContain(
      'POST /projects/p/devices: 422 Unprocessable Entity: plan not available',
    );
    expect(s.err()).toContain('request id req-1');
  });

  it('anything else: the message, a --debug hint, and a stack only with --debug', async () => {
    const a = host();
    await reportError(new TypeError('x is undefined'), a.h, ROOT);
    expect(a.s.err()).toContain('error: x is undefined');
    expect(a.s.err()).toContain('rerun with --debug for details');
    expect(a.s.err()).not.toContain('    at ');
    const b = host(true);
    await reportError(new TypeError('x is undefined'), b.h, ROOT);
    expect(b.s.err()).toContain('    at ');
  });

  it('with -o json also prints {"error": …} on stdout when no result was printed', async () => {
    const { s, h } = host(false, 'json');
    await reportError(new LokoError('nope', { hint: 'fix' }), h, ROOT);
    expect(JSON.parse(s.out())).toEqual({ error: { message: 'nope', hint: 'fix', exitCode: 1 } });
  });
});

describe('help and interrupts', () => {
  it('a subcommand help shows the global options too', async () => {
    const r = await run(['cluster', 'apply', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Global Options');
    for (const s of ['--config', '--var-file', '--emulator', '--yes', '--api-rate'])
      expect(r.stdout).toContain(s);
  });

  it('Ctrl-C at the prompt says nothing was started, with no "creates nothing twice" hint', async () => {
    const s = memoryStreams();
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    const code = await reportError(
      new InterruptedError('interrupted at the prompt: nothing was started or changed'),
      host,
      ROOT,
    );
    expect(code).toBe(130);
    expect(s.err()).toContain('nothing was started');
    expect(s.err()).not.toContain('creates nothing twice');
  });

  it("destroy's interrupt hint does not say it creates nothing twice", async () => {
    const s = memoryStreams();
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    await reportError(new InterruptedError(), host, ROOT, {
      interruptHint: 'deletes what is left',
    });
    expect(s.err()).toContain('deletes what is left');
    expect(s.err()).not.toContain('creates nothing twice');
  });
});

describe('system errors', () => {
  it('name the path and what to check instead of "rerun with --debug"', async () => {
    const s = memoryStreams();
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    const err = Object.assign(new Error("EACCES: permission denied, mkdir '/x/assets'"), {
      code: 'EACCES',
      syscall: 'mkdir',
      path: '/x/assets',
    });
    expect(await reportError(err, host, ROOT)).toBe(1);
    expect(s.err()).toContain('/x/assets: permission denied');
    expect(s.err()).toContain('Check the permissions');
    expect(s.err()).not.toContain('--debug');
  });
});
