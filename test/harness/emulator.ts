/**
 * Test harness for the Metal API emulator: start an instance on a free port with a temporary
 * state file, call its API with the token, drive it through the typed control client.
 *
 *   const emu = await startTestEmulator();            // ... await emu.stop();
 *   await withEmulator(async (emu) => { ... });       // stops afterwards
 *   const emu = useEmulator();                        // beforeAll/afterAll in a describe block
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import {
  EmulatorControlClient,
  startEmulator,
  type EmulatorOptions,
  type RunningEmulator,
} from '../../src/emulator/index.js';
import type { SavedEmulatorLog } from './contract/validate.js';

/**
 * A JSON body as tests read it: assertions check the shape, so a loose type keeps them terse.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** One API answer, body parsed (undefined when empty). */
export interface ApiResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

/** Options of one `api()` call. */
export interface ApiCallOptions {
  /** Token to send; null sends none. Default: the emulator's token. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** A running test emulator. */
export interface TestEmulator extends RunningEmulator {
  /** Temporary directory holding the state file (removed by `stop`). */
  dir: string;
  statePath: string;
  /** Typed control API client. */
  control: EmulatorControlClient;
  /**
   * Calls the Metal API. `path` is relative to `/metal/v1` (a leading `/metal/v1` is accepted).
   */
  api<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    opts?: ApiCallOptions,
  ): Promise<ApiResponse<T>>;
  /**
   * Saves the instance's response samples and request summary for the run's contract check
   * (test/harness/contract), then closes it. Idempotent.
   */
  close(): Promise<void>;
  /** Closes the emulator (see `close`) and removes its temporary directory. */
  stop(): Promise<void>;
}

/** Starts an emulator on port 0 with a temp state path (options override the defaults). */
export async function startTestEmulator(opts: EmulatorOptions = {}): Promise<TestEmulator> {
  const dir = await mkdtemp(join(tmpdir(), 'loko-emulator-'));
  const statePath = opts.statePath ?? join(dir, 'state.json');
  const running = await startEmulator({ port: 0, ...opts, statePath });
  return wrap(running, dir, statePath);
}

/** Wraps an already running emulator (e.g. one restarted from a state file) with the helpers. */
export function wrap(running: RunningEmulator, dir: string, statePath: string): TestEmulator {
  const api = async <T>(
    method: string,
    path: string,
    body?: unknown,
    opts: ApiCallOptions = {},
  ): Promise<ApiResponse<T>> => {
    const rel = path.startsWith('/metal/v1') ? path.slice('/metal/v1'.length) : path;
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    const token = opts.token === undefined ? running.token : opts.token;
    if (token !== null) headers['x-auth-token'] = token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${running.url}${rel}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
  const control = new EmulatorControlClient(running.controlUrl, running.token);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await saveForContract(control);
      } finally {
        await running.close();
      }
    })());
  return {
    ...running,
    dir,
    statePath,
    control,
    api,
    close,
    stop: async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Writes what the instance answered to the run directory of the contract check, when the run
 * has one (the integration project's globalSetup provides it; elsewhere nothing is saved).
 */
async function saveForContract(control: EmulatorControlClient): Promise<void> {
  let dir: string | undefined;
  try {
    dir = inject('lokoContract')?.dir;
  } catch {
    return; // not inside a vitest worker
  }
  if (!dir) return;
  const [responses, summary] = await Promise.all([control.responses(), control.summary()]);
  if (summary.total === 0) return;
  const testPath = expect.getState().testPath;
  const log: SavedEmulatorLog = {
    ...(testPath ? { testFile: relative(repoRoot, testPath) } : {}),
    responses,
    summary,
  };
  const file = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  await writeFile(file, JSON.stringify(log));
}

/** Runs `fn` against a fresh emulator and stops it afterwards, whatever happens. */
export async function withEmulator<T>(
  fn: (emu: TestEmulator) => Promise<T>,
  opts: EmulatorOptions = {},
): Promise<T> {
  const emu = await startTestEmulator(opts);
  try {
    return await fn(emu);
  } finally {
    await emu.stop();
  }
}

/**
 * Starts one emulator for the enclosing describe block (beforeAll/afterAll). The returned
 * function gives the instance inside tests.
 */
export function useEmulator(opts: EmulatorOptions = {}): () => TestEmulator {
  let emu: TestEmulator | undefined;
  beforeAll(async () => {
    emu = await startTestEmulator(opts);
  });
  afterAll(async () => {
    await emu?.stop();
  });
  return () => {
    if (!emu)
      throw new Error('useEmulator(): the emulator is not started yet (use it inside tests)');
    return emu;
  };
}

/** Body of a typical device create request; override any field. */
export function deviceInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metro: 'sv',
    plan: 'c3.small.x86',
    operating_system: 'flatcar_stable',
    hostname: 'test-worker-0',
    tags: ['loko:cluster=test'],
    ...overrides,
  };
}
