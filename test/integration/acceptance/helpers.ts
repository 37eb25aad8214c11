/**
 * Helpers for the acceptance tests of issue 2: a temporary cluster config of any size, `node
 * bin/loko` spawned against an emulator over real HTTP (METAL_API_URL / METAL_AUTH_TOKEN), and
 * readers of the emulator's request log scoped to one run.
 *
 * The tests spawn the built CLI: run `npm run build` first (`npm test` does).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { RequestLogEntry } from '../../../src/emulator/index.js';
import type { TestEmulator } from '../../harness/emulator.js';
import { baseEnv, loko, type RunResult } from '../../e2e/helpers.js';

export { baseEnv, loko, requireBuild, start } from '../../e2e/helpers.js';

/** Project of every test cluster (the emulators are seeded with it). */
export const PROJECT = '0b5c1d2e-3f40-4a51-8b62-7c73d84e95f6';

export const DEVICE_LIST = '/metal/v1/projects/:id/devices';
export const DEVICE_ONE = '/metal/v1/devices/:id';

/** A temporary directory holding one `cluster.lokocfg` (asset dir `./assets` beside it). */
export interface ClusterDir {
  dir: string;
  name: string;
  /** Every desired hostname: the controllers, then the workers. */
  hostnames: string[];
  cleanup(): Promise<void>;
}

/**
 * Writes a config for `controllers` controllers and `workers` workers in one pool named
 * `workers`, in metro sv, on the seeded project.
 */
export async function clusterDir(
  name: string,
  opts: { controllers?: number; workers: number },
): Promise<ClusterDir> {
  const controllers = opts.controllers ?? 1;
  const dir = await mkdtemp(path.join(os.tmpdir(), `loko-acceptance-${name}-`));
  await writeFile(
    path.join(dir, 'cluster.lokocfg'),
    `cluster "equinixmetal" {
  cluster_name     = "${name}"
  project_id       = "${PROJECT}"
  metro            = "sv"
  asset_dir        = "./assets"
  controller_count = ${controllers}

  worker_pool "workers" {
    count = ${opts.workers}
  }
}
`,
  );
  const hostnames = [
    ...Array.from({ length: controllers }, (_, i) => `${name}-controller-${i}`),
    ...Array.from({ length: opts.workers }, (_, i) => `${name}-workers-${i}`),
  ];
  return { dir, name, hostnames, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Environment for a spawned run against `url` with `token` (plus extra variables). */
export function remoteEnv(
  emu: { url: string; token: string },
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return baseEnv({ METAL_API_URL: emu.url, METAL_AUTH_TOKEN: emu.token, ...extra });
}

/** A finished run and the API requests the emulator logged while it ran. */
export interface LoggedRun extends RunResult {
  requests: RequestLogEntry[];
}

/**
 * Runs `node bin/loko cluster <command> -c <dir> --yes ...extra` against the test emulator and
 * returns the requests logged during the run (nothing else talks to the emulator meanwhile).
 */
export async function runLogged(
  emu: TestEmulator,
  cluster: ClusterDir,
  command: 'apply' | 'destroy' | 'plan',
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<LoggedRun> {
  const since = await emu.control.lastSeq();
  const args = [
    'cluster',
    command,
    '-c',
    cluster.dir,
    ...(command === 'plan' ? [] : ['--yes']),
    // These tests are about the Metal API: the emulators run without their Kubernetes twin.
    ...(command === 'apply' ? ['--machines-only'] : []),
  ];
  const r = await loko([...args, ...extra], { env: remoteEnv(emu, env) });
  const requests = await emu.control.requests(since);
  return { ...r, requests };
}

/** Asserts a run ended with `code`, showing its stderr when it did not. */
export function expectExit(r: RunResult, code: number): void {
  if (r.code !== code) {
    throw new Error(`loko exited ${r.code ?? r.signal}, expected ${code}; stderr:\n${r.stderr}`);
  }
}

/** Count of logged requests matching method and route (route as the log spells it). */
export function count(requests: RequestLogEntry[], method: string, route: string): number {
  return requests.filter((e) => e.method === method && e.route === route).length;
}

/**
 * Requests with a mutating method: POST, PUT, PATCH, DELETE. The capacity check is a POST too; a
 * converged apply has nothing to check capacity for, so it makes none.
 */
export function mutations(requests: RequestLogEntry[]): RequestLogEntry[] {
  return requests.filter((e) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(e.method));
}

/** One line per (method route status), for failure messages and the test output. */
export function tally(requests: RequestLogEntry[]): string {
  const m = new Map<string, number>();
  for (const e of requests) {
    const k = `${e.method} ${e.route} ${e.status}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${String(n).padStart(4)}  ${k}`)
    .join('\n');
}

/** A device as the test reads it from the list. */
export interface ListedDevice {
  id: string;
  hostname: string;
  state: string;
  tags: string[];
}

/**
 * The cluster's devices as the API lists them (one paginated call through the harness; call it
 * outside the window of a logged run).
 */
export async function listDevices(
  api: (method: string, path: string) => Promise<{ status: number; body: unknown }>,
  clusterName: string,
): Promise<ListedDevice[]> {
  const tag = `loko:cluster=${clusterName}`;
  const res = await api(
    'GET',
    `/projects/${PROJECT}/devices?tag=${encodeURIComponent(tag)}&per_page=1000`,
  );
  expect(res.status).toBe(200);
  return ((res.body as { devices: ListedDevice[] }).devices ?? []).filter((d) =>
    d.tags.includes(tag),
  );
}

/** Devices that still count (not on their way out). */
export function live(devices: ListedDevice[]): ListedDevice[] {
  return devices.filter((d) => d.state !== 'deprovisioning' && d.state !== 'deleted');
}

/** Hostnames that more than one live device carries. */
export function duplicates(devices: ListedDevice[]): string[] {
  const seen = new Map<string, number>();
  for (const d of live(devices)) seen.set(d.hostname, (seen.get(d.hostname) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([h]) => h);
}

/** Milliseconds since the epoch of a log entry's arrival. */
export function atMs(e: RequestLogEntry): number {
  return Date.parse(e.at);
}

/** What followed one 429: the next request that could have known about it, and how much later. */
export interface RetryAfterGap {
  refused: RequestLogEntry;
  /** Seconds the 429 asked to wait (its Retry-After). */
  retryAfterMs: number;
  next: RequestLogEntry | undefined;
  /** `next.at - refused.at` in ms (Infinity when nothing followed). */
  gapMs: number;
}

/**
 * For every 429 carrying Retry-After, the next request (on the same method and route, or on any
 * route with `anyRoute`) that arrived after the 429 was answered plus `inFlightMs`: requests that
 * arrive sooner were already on the wire when the client got the 429, so they cannot honour it.
 * The gap is measured from the 429's own arrival, as the log's `at` gives it (ms precision).
 */
export function retryAfterGaps(
  requests: RequestLogEntry[],
  opts: { anyRoute?: boolean; inFlightMs?: number } = {},
): RetryAfterGap[] {
  const inFlightMs = opts.inFlightMs ?? 50;
  const byArrival = [...requests].sort((a, b) => atMs(a) - atMs(b) || a.seq - b.seq);
  return byArrival
    .filter((e) => e.status === 429 && e.retryAfter !== undefined)
    .map((refused) => {
      const answered = atMs(refused) + refused.durationMs;
      const next = byArrival.find(
        (e) =>
          e !== refused &&
          atMs(e) > answered + inFlightMs &&
          (opts.anyRoute || (e.method === refused.method && e.route === refused.route)),
      );
      return {
        refused,
        retryAfterMs: refused.retryAfter! * 1000,
        next,
        gapMs: next ? atMs(next) - atMs(refused) : Infinity,
      };
    });
}

/** One line per gap, for the test output. */
export function describeGaps(gaps: RetryAfterGap[]): string {
  return gaps
    .map(
      (g) =>
        `429 ${g.refused.method} ${g.refused.route} Retry-After ${g.retryAfterMs} ms -> next ${
          g.next ? `${g.next.method} ${g.next.route} after ${g.gapMs} ms` : 'none'
        }`,
    )
    .join('\n');
}
