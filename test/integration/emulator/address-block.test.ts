/**
 * Each running emulator holds its loopback 127.X.0.0/16 machine-wide (a sentinel listener on
 * 127.X.255.254), so two emulator processes never hand out the same addresses. Both processes
 * below draw with the same `Math.random` (patched before loko loads), so without the sentinel
 * they would pick the same block.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin', 'loko');
const SAME_DRAW = `data:text/javascript,Math.random=()=>0.5`;

interface Started {
  child: ChildProcess;
  stderr: () => string;
  /** The X of 127.X.0.0/16, once serving; undefined when the process exited first. */
  octet?: number;
  exitCode?: number | null;
}

function startLoko(dir: string, name: string, state: string): Promise<Started> {
  const ready = join(dir, `${name}.ready.json`);
  const child = spawn(
    process.execPath,
    ['--import', SAME_DRAW, BIN, 'emulator', 'start', '--state', state, '--ready-file', ready],
    { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const out: Started = { child, stderr: () => err };
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${err}`)), 30_000);
    const poll = setInterval(() => {
      if (!existsSync(ready)) return;
      const m = /addresses 127\.(\d+)\.0\.0\/16/.exec(err);
      if (!m) return;
      clearInterval(poll);
      clearTimeout(timer);
      out.octet = Number(m[1]);
      done(out);
    }, 20);
    child.on('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      out.exitCode = code;
      done(out);
    });
  });
}

async function stop(s: Started | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.exitCode !== undefined) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

describe('address block across processes', () => {
  let dir: string;
  const running: Started[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'cli.js')))
      throw new Error('dist/ is missing: run `npm run build` first');
    dir = await mkdtemp(join(tmpdir(), 'loko-address-block-'));
  });
  afterAll(async () => {
    await Promise.all(running.map(stop));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('two emulator processes with the same draw get different blocks', async () => {
    const a = await startLoko(dir, 'a', join(dir, 'a.json'));
    running.push(a);
    expect(a.octet, a.stderr()).toBeDefined();
    const b = await startLoko(dir, 'b', join(dir, 'b.json'));
    running.push(b);
    expect(b.octet, b.stderr()).toBeDefined();
    expect(b.octet).not.toBe(a.octet);
    // The state files record the blocks they got.
    const saved = async (f: string) =>
      JSON.parse(await readFile(join(dir, f), 'utf8')).state.addressing.v4Octet as number;
    expect(await saved('a.json')).toBe(a.octet);
    expect(await saved('b.json')).toBe(b.octet);
  });

  it('a saved state whose block is held elsewhere fails, naming the state file; it starts once freed', async () => {
    const a = running[0]!;
    const copy = join(dir, 'copy-of-a.json');
    await copyFile(join(dir, 'a.json'), copy);
    const c = await startLoko(dir, 'c', copy);
    running.push(c);
    expect(c.octet, c.stderr()).toBeUndefined();
    expect(c.exitCode).toBe(1);
    expect(c.stderr()).toContain(`127.${a.octet}.0.0/16 of state file ${copy}`);
    expect(c.stderr()).toContain('in use by another running emulator');

    await stop(a);
    const again = await startLoko(dir, 'c2', copy);
    running.push(again);
    expect(again.octet, again.stderr()).toBe(a.octet);
  });
});
