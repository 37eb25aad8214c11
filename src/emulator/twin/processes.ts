/**
 * The twin's processes: each component runs detached in its own process group with its output
 * appended to a log file, and only `PATH` and `HOME` from the environment (no proxy variables, so
 * nothing is sent through a proxy off the machine). A recorded pid is trusted only while its
 * command line still names the recorded binary (pids get recycled).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** A started component. */
export interface Spawned {
  pid: number;
  /** Set once the process has exited (exit code or signal), while this process watches it. */
  exited(): string | undefined;
}

/**
 * Starts `binary args` in a new process group, output appended to `logFile`. With `dieWithParent`
 * the kernel kills it when this process dies (`setpriv --pdeathsig KILL`, where available).
 */
export function spawnDetached(
  binary: string,
  args: string[],
  logFile: string,
  dieWithParent: boolean,
): Spawned {
  const fd = openSync(logFile, 'a', 0o600);
  try {
    const [cmd, argv] =
      dieWithParent && SETPRIV
        ? [SETPRIV, ['--pdeathsig', 'KILL', '--', binary, ...args]]
        : [binary, args];
    const child = spawn(cmd, argv, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    });
    if (child.pid === undefined) throw new Error(`could not start ${binary}`);
    let exited: string | undefined;
    child.on('exit', (code, signal) => (exited = signal ?? `exit code ${code}`));
    child.on('error', (err) => (exited = err.message));
    child.unref();
    return { pid: child.pid, exited: () => exited };
  } finally {
    closeSync(fd);
  }
}

/** True while `pid` exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while `pid` is alive and runs `binary` (not a recycled pid, not a zombie). */
export function isRunning(pid: number, binary: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3, after the parenthesised command name: Z = zombie (exited, not yet reaped).
    if (/\)\s+Z\s/.test(stat)) return false;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(binary);
  } catch {
    // No procfs (not Linux): trust the pid.
    return !existsSync('/proc/self');
  }
}

/** True while `pid` runs `binary` with an argument that contains `text` (e.g. its directory). */
export function commandLineHas(pid: number, binary: string, text: string): boolean {
  if (!isRunning(pid, binary)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
  } catch {
    return false;
  }
}

/** SIGKILL to a process group, now. */
export function killGroupNow(pgid: number): void {
  killGroup(pgid, 'SIGKILL');
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * Stops the process groups of `procs` (only those still running their binary): SIGTERM, then
 * SIGKILL after `graceMs`; resolves once they are gone (or after 5 s more).
 */
export async function stopProcesses(
  procs: Array<{ pid: number; binary: string }>,
  graceMs = 3000,
): Promise<void> {
  const ours = procs.filter((p) => isRunning(p.pid, p.binary));
  for (const p of ours) killGroup(p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (ours.some((p) => isAlive(p.pid)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const p of ours) killGroup(p.pid, 'SIGKILL');
  const hard = Date.now() + 5000;
  while (ours.some((p) => isAlive(p.pid)) && Date.now() < hard) {
    await new Promise((r) => setTimeout(r, 20));
  }
}
