/**
 * The CLI under awkward conditions people meet: a reader that goes away (`| head`), flags with
 * values that cannot work, and the README's shell snippets pasted as a script.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, baseEnv, loko, quickstartCopy, requireBuild } from './helpers.js';

/** Runs a bash script; resolves its exit code and output. */
function bash(
  script: string,
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: opts.cwd, env: opts.env ?? baseEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('cli robustness', () => {
  let work: Awaited<ReturnType<typeof quickstartCopy>>;
  beforeAll(async () => {
    requireBuild();
    work = await quickstartCopy();
  });
  afterAll(async () => {
    await work?.cleanup();
  });

  it('apply whose reader goes away (| head -3) exits non-zero and leaves no lock', async () => {
    const r = await bash(
      `node ${JSON.stringify(BIN)} cluster apply --emulator --yes 2>&1 | head -3; echo "rc=\${PIPESTATUS[0]}"`,
      { cwd: work.dir },
    );
    const rc = Number(/rc=(\d+)/.exec(r.stdout)?.[1]);
    expect(rc).not.toBe(0);
    expect(rc).toBe(141);
    expect(existsSync(path.join(work.assets, '.loko.lock'))).toBe(false);
    // The next run is not blocked by anything the cancelled one left behind.
    const again = await loko(['cluster', 'apply', '--emulator', '--yes'], { cwd: work.dir });
    expect(again.code).toBe(0);
    const gone = await loko(['cluster', 'destroy', '--emulator', '--yes'], { cwd: work.dir });
    expect(gone.code).toBe(0);
  }, 120_000);

  it('-o json config errors carry the diagnostics; flag problems name the flag', async () => {
    const bad = path.join(work.dir, '..', 'bad');
    await mkdir(bad, { recursive: true });
    await writeFile(path.join(bad, 'cluster.lokocfg'), 'cluster "equinixmetal" {\n  nope = 1\n');
    const r = await loko(['cluster', 'plan', '--emulator', '-o', 'json', '-c', bad]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      error: {
        diagnostics?: { file?: string; line?: number; severity: string; summary: string }[];
      };
    };
    expect(doc.error.diagnostics?.length).toBeGreaterThan(0);
    expect(doc.error.diagnostics?.[0]).toMatchObject({
      severity: 'error',
      summary: expect.any(String),
    });
    expect(doc.error.diagnostics?.[0]?.file).toContain('cluster.lokocfg');
    expect(doc.error.diagnostics?.[0]?.line).toEqual(expect.any(Number));

    const noConfig = await loko([
      'cluster',
      'plan',
      '--emulator',
      '-o',
      'json',
      '-c',
      '/nonexistent/x',
    ]);
    expect(noConfig.code).toBe(1);
    expect(noConfig.stderr).toContain('--config');
    expect(noConfig.stderr).not.toContain('the configuration has');

    const dirVars = await loko(['cluster', 'plan', '--emulator', '--var-file', os.tmpdir()], {
      cwd: work.dir,
    });
    expect(dirVars.code).toBe(1);
    expect(dirVars.stderr).toContain('--var-file');
    expect(dirVars.stderr).toContain('is a directory');
    expect(dirVars.stderr).not.toContain('EISDIR');
    expect(dirVars.stderr).not.toContain('the configuration has');

    const noVars = await loko(['cluster', 'plan', '--emulator', '--var-file', 'nope.vars'], {
      cwd: work.dir,
    });
    expect(noVars.stderr).toContain('--var-file nope.vars: no such file');
  }, 60_000);

  it('emulator start: a busy --port, a bad --port and a bad --project-id name the flag', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const busy = (server.address() as net.AddressInfo).port;
    try {
      const r = await loko(['emulator', 'start', '--port', String(busy)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${busy} on 127.0.0.1 is in use`);
      expect(r.stderr).toContain('--port');
      expect(r.stderr).not.toContain('EADDRINUSE');
      expect(r.stderr).not.toContain('--debug');
    } finally {
      server.close();
    }
    for (const bad of ['70000', '1.5']) {
      const r = await loko(['emulator', 'start', '--port', bad]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--port must be a whole number');
    }
    const id = await loko(['emulator', 'start', '--project-id', 'xyz']);
    expect(id.code).toBe(1);
    expect(id.stderr).toContain('--project-id must be a UUID');
  }, 60_000);

  it('emulator start: no token on a non-terminal stderr or in -o json; the ready file goes away', async () => {
    const ready = path.join(work.dir, '..', 'ready.json');
    const script = `node ${JSON.stringify(BIN)} emulator start -o json --ready-file ${JSON.stringify(ready)} > out.json 2> err.txt & pid=$!
until [ -s ${JSON.stringify(ready)} ]; do sleep 0.2; done
token=$(node -p 'JSON.parse(require("fs").readFileSync(${JSON.stringify(ready)}, "utf8")).token')
kill -INT $pid; wait $pid; echo "rc=$?"
echo "token=$token"
test -e ${JSON.stringify(ready)} && echo "ready-left" || echo "ready-gone"
cat err.txt out.json`;
    const r = await bash(script, { cwd: path.join(work.dir, '..') });
    const token = /token=(\S+)/.exec(r.stdout)?.[1] ?? '';
    expect(token.length).toBeGreaterThan(8);
    expect(r.stdout).toContain('rc=0');
    expect(r.stdout).toContain('ready-gone');
    const after = r.stdout.slice(r.stdout.indexOf('ready-gone') + 'ready-gone'.length);
    expect(after).not.toContain(token);
    expect(after).toContain('METAL_AUTH_TOKEN=$(node -p');
  }, 60_000);
});
