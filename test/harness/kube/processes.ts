/**
 * Process hygiene for the test control plane.
 *
 * Every component runs in its own process group (`detached`), so a stop kills the group
 * (SIGTERM, then SIGKILL). Three layers make sure nothing outlives the test run:
 *  1. `stop()` from the vitest globalTeardown (the normal path);
 *  2. a synchronous SIGKILL of every group from `process.on('exit')` of the process that started
 *     them, and, where `setpriv` exists, a kernel parent-death signal (`setpriv --pdeathsig KILL`)
 *     so that even a SIGKILLed test runner takes the control plane with it;
 *  3. a sweep of stale harness directories at the next start: every harness directory records its
 *     owner pid and the groups it started; when the owner is gone, the groups are killed and the
 *     directory is removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Parent directory of every harness run directory (one per control plane). */
export const HARNESS_ROOT = join(tmpdir(), 'loko-kube-harness');

/** A component process of the control plane. */
export interface Component {
  name: string;
  pid: number;
  /** Absolute path of the binary (used to tell a recycled pid from ours). */
  binary: string;
  logFile: string;
  child: ChildProcess;
  /** Set once the process has exited: exit code or signal name. */
  exited?: string;
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/**
 * Starts `binary args` in a new process group with stdout and stderr appended to `logFile`.
 * The process gets SIGKILL when the starting process dies (when `setpriv` is available).
 */
export function spawnComponent(
  name: string,
  binary: string,
  args: string[],
  logFile: string,
): Component {
  const fd = openSync(logFile, 'a', 0o600);
  try {
    const [cmd, argv] = SETPRIV
      ? [SETPRIV, ['--pdeathsig', 'KILL', '--', binary, ...args]]
      : [binary, args];
    const child = spawn(cmd, argv, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    });
    if (child.pid === undefined) throw new Error(`could not start ${name} (${binary})`);
    child.unref();
    const comp: Component = { name, pid: child.pid, binary, logFile, child };
    child.on('exit', (code, signal) => {
      comp.exited = signal ?? `exit code ${code}`;
    });
    child.on('error', (err) => {
      comp.exited = String(err);
    });
    return comp;
  } finally {
    closeSync(fd);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

/** SIGTERM to each group, then SIGKILL to whatever is left after `graceMs`. */
export async function stopGroups(pgids: number[], graceMs = 5000): Promise<void> {
  for (const pgid of pgids) killGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pgids.some(alive) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const pgid of pgids) killGroup(pgid, 'SIGKILL');
  const hard = Date.now() + 2000;
  while (pgids.some(alive) && Date.now() < hard) await new Promise((r) => setTimeout(r, 20));
}

/** SIGKILL to each group, synchronously (for `process.on('exit')`). */
export function killGroupsNow(pgids: number[]): void {
  for (const pgid of pgids) killGroup(pgid, 'SIGKILL');
}

/** What a harness directory records about itself (`owner.json`). */
export interface OwnerRecord {
  ownerPid: number;
  components: { name: string; pid: number; binary: string }[];
}

/** Records the owner and the component groups of a harness directory. */
export async function writeOwner(dir: string, rec: OwnerRecord): Promise<void> {
  await writeFile(join(dir, 'owner.json'), JSON.stringify(rec, null, 2) + '\n', { mode: 0o600 });
}

function cmdlineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
}

/**
 * Kills the component groups of harness directories whose owner process is gone and removes the
 * directories. Returns the directories swept. A pid is only killed when its command line still
 * names the recorded binary (pids get recycled).
 */
export function sweepStale(root = HARNESS_ROOT): string[] {
  if (!existsSync(root)) return [];
  const swept: string[] = [];
  for (const entry of readdirSync(root)) {
    const dir = join(root, entry);
    let rec: OwnerRecord | undefined;
    try {
      rec = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as OwnerRecord;
    } catch {
      rec = undefined;
    }
    if (rec && alive(rec.ownerPid)) continue;
    if (!rec) {
      // A directory without an owner record is either being set up right now or left from a
      // crash during setup; only reclaim it when it is old.
      try {
        const age = Date.now() - Number(entry.split('-')[1] ?? Date.now());
        if (!(age > 10 * 60_000)) continue;
      } catch {
        continue;
      }
    }
    for (const c of rec?.components ?? []) {
      if (cmdlineOf(c.pid)?.includes(c.binary)) killGroup(c.pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
    swept.push(dir);
  }
  return swept;
}
