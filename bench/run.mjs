#!/usr/bin/env node
// Benchmarks, side by side in one run (see bench/README.md):
//   (a) loading the config of examples/quickstart: a cold process vs warm in-process loads;
//   (b) a 1 controller + 30 worker `loko cluster apply` against the Metal API emulator at a high
//       time scale, at client rates (--api-rate) of 5, 10 and 20 requests/s: API calls and time.
// Prints a table and writes bench/results/<date>.json. Needs `npm run build` (`npm run bench` does).
//
// Knobs: BENCH_N (config loads per mode, default 15), BENCH_APPLY_RUNS (applies per rate,
// default 3), BENCH_RATES (default "5,10,20"), BENCH_TIME_SCALE (emulator clock, default 50).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'loko');
const quickstart = path.join(root, 'examples', 'quickstart');
const PROJECT = '6a1f0c2d-4e5b-4c7d-8e9f-0a1b2c3d4e5f';

const loadBefore = os.loadavg();
const N = intEnv('BENCH_N', 15);
const APPLY_RUNS = intEnv('BENCH_APPLY_RUNS', 3);
const RATES = (process.env.BENCH_RATES ?? '5,10,20').split(',').map(Number);
const TIME_SCALE = Number(process.env.BENCH_TIME_SCALE ?? 50);

let config;
let emulator;
try {
  config = await import(pathToFileURL(path.join(root, 'dist', 'config', 'index.js')).href);
  emulator = await import(pathToFileURL(path.join(root, 'dist', 'emulator', 'index.js')).href);
} catch (err) {
  console.error(`Cannot load dist/ (${err.message}); run \`npm run build\` first.`);
  process.exit(1);
}

/** Environment of spawned runs: no endpoint, no colour, no LOKO_* from the caller. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith('LOKO_') && !k.startsWith('METAL_') && k !== 'FORCE_COLOR',
  ),
);
cleanEnv.NO_COLOR = '1';

const loadOptions = { path: quickstart, vars: {}, varFiles: [], env: cleanEnv };

// (a) Config load ---------------------------------------------------------------------------
console.error(`config load of examples/quickstart, ${N} runs per mode ...`);

// A fresh node process that imports the loader and loads once; it reports its own timings.
const childScript = `
const t0 = performance.now();
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist', 'config', 'index.js')).href)});
const t1 = performance.now();
const r = await loadConfig(${JSON.stringify(loadOptions)});
const t2 = performance.now();
if (!r.cluster) { console.error(JSON.stringify(r.diagnostics)); process.exit(1); }
process.stdout.write(JSON.stringify({ importMs: t1 - t0, loadMs: t2 - t1 }));
`;
const cold = { processMs: [], importMs: [], loadMs: [], importPlusLoadMs: [], cliValidateMs: [] };
for (let i = 0; i < N; i++) {
  const t = performance.now();
  const r = await run(process.execPath, ['--input-type=module', '-e', childScript]);
  cold.processMs.push(performance.now() - t);
  if (r.code !== 0) fail('cold config load', r);
  const { importMs, loadMs } = JSON.parse(r.stdout);
  cold.importMs.push(importMs);
  cold.loadMs.push(loadMs);
  cold.importPlusLoadMs.push(importMs + loadMs);
  const v0 = performance.now();
  const v = await run(process.execPath, [bin, 'config', 'validate', '-c', quickstart]);
  cold.cliValidateMs.push(performance.now() - v0);
  if (v.code !== 0) fail('loko config validate', v);
}

// The same loader in this process: the first load pays the parser's start-up, later ones do not.
const warm = { firstLoadMs: 0, loadMs: [] };
{
  const t = performance.now();
  const r = await config.loadConfig(loadOptions);
  warm.firstLoadMs = performance.now() - t;
  if (!r.cluster) throw new Error('examples/quickstart did not load');
  for (let i = 0; i < N; i++) {
    const t1 = performance.now();
    await config.loadConfig(loadOptions);
    warm.loadMs.push(performance.now() - t1);
  }
}

// (b) 1+30 apply at client rates -------------------------------------------------------------
const applies = [];
for (const rate of RATES) {
  for (let i = 0; i < APPLY_RUNS; i++) {
    console.error(`1+30 apply at --api-rate ${rate} (run ${i + 1}/${APPLY_RUNS}) ...`);
    applies.push({ rate, ...(await benchApply(rate)) });
  }
}

// Report ----------------------------------------------------------------------------------
const result = {
  date: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpu: `${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}`,
  // 1-minute load average before and after: timings on a busy machine are not comparable.
  loadAverage1m: { before: round(loadBefore[0]), after: round(os.loadavg()[0]) },
  configLoad: {
    config: 'examples/quickstart',
    runs: N,
    cold: {
      processWallMs: stats(cold.processMs),
      importMs: stats(cold.importMs),
      loadMs: stats(cold.loadMs),
      importPlusLoadMs: stats(cold.importPlusLoadMs),
      cliConfigValidateWallMs: stats(cold.cliValidateMs),
    },
    warm: { firstLoadMs: round(warm.firstLoadMs), loadMs: stats(warm.loadMs) },
  },
  apply: {
    cluster: '1 controller + 30 workers',
    emulatorTimeScale: TIME_SCALE,
    runsPerRate: APPLY_RUNS,
    byRate: RATES.map((rate) =>
      summarizeRate(
        rate,
        applies.filter((a) => a.rate === rate),
      ),
    ),
    runs: applies,
  },
};

const cl = result.configLoad;
console.log(
  `\n${result.platform}, node ${result.node}, ${result.cpu}; load average ${result.loadAverage1m.before} -> ${result.loadAverage1m.after}`,
);
console.log('\nConfig load, examples/quickstart (median of %d, ms)', N);
table(
  ['mode', 'median', 'min', 'max'],
  [
    ['cold: node process, import + load (wall)', ...mmm(cl.cold.processWallMs)],
    ['cold: import of the loader (in the process)', ...mmm(cl.cold.importMs)],
    ['cold: first load (in the process)', ...mmm(cl.cold.loadMs)],
    ['cold: `loko config validate` (wall)', ...mmm(cl.cold.cliConfigValidateWallMs)],
    ['warm: first load in this process', fmt(cl.warm.firstLoadMs), '', ''],
    ['warm: later loads in this process', ...mmm(cl.warm.loadMs)],
  ],
);
console.log(
  '\n1+30 apply against the emulator (time scale %d), median of %d runs per rate',
  TIME_SCALE,
  APPLY_RUNS,
);
table(
  [
    '--api-rate',
    'API calls',
    'creates',
    'device lists',
    'device GETs',
    '429s',
    'API span ms',
    'wall ms',
  ],
  result.apply.byRate.map((r) => [
    String(r.rate),
    String(r.calls),
    String(r.creates),
    String(r.deviceLists),
    String(r.deviceGets),
    String(r.status429),
    fmt(r.apiSpanMs),
    fmt(r.wallMs),
  ]),
);

const day = result.date.slice(0, 10);
const out = path.join(root, 'bench', 'results', `${day}.json`);
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`\nwrote ${path.relative(process.cwd(), out)}`);

// Helpers ----------------------------------------------------------------------------------

/** One 1+30 apply by the CLI against a fresh emulator; counts come from its request log. */
async function benchApply(rate) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loko-bench-'));
  // Metal API economy only: no Kubernetes twin, and apply stops after the machines.
  const emu = await emulator.startEmulator({
    port: 0,
    projectId: PROJECT,
    timeScale: TIME_SCALE,
    twin: 'off',
  });
  try {
    await writeFile(
      path.join(dir, 'cluster.lokocfg'),
      `cluster "equinixmetal" {
  cluster_name     = "bench"
  project_id       = "${PROJECT}"
  metro            = "sv"
  asset_dir        = "./assets"
  controller_count = 1

  worker_pool "workers" {
    count = 30
  }
}
`,
    );
    const control = new emulator.EmulatorControlClient(emu.controlUrl, emu.token);
    const t = performance.now();
    const r = await run(
      process.execPath,
      [bin, 'cluster', 'apply', '-c', dir, '--yes', '--machines-only', '--api-rate', String(rate)],
      { ...cleanEnv, METAL_API_URL: emu.url, METAL_AUTH_TOKEN: emu.token },
    );
    const wallMs = performance.now() - t;
    if (r.code !== 0) fail(`apply at --api-rate ${rate}`, r);
    const log = await control.requests(0);
    const at = log.map((e) => Date.parse(e.at));
    const n = (method, suffix) =>
      log.filter((e) => e.method === method && e.route.endsWith(suffix)).length;
    return {
      calls: log.length,
      creates: n('POST', '/projects/:id/devices'),
      deviceLists: n('GET', '/projects/:id/devices'),
      deviceGets: n('GET', '/devices/:id'),
      status429: log.filter((e) => e.status === 429).length,
      apiSpanMs: round(Math.max(...at) - Math.min(...at)),
      wallMs: round(wallMs),
    };
  } finally {
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function summarizeRate(rate, runs) {
  const med = (k) => median(runs.map((r) => r[k]));
  return {
    rate,
    calls: med('calls'),
    creates: med('creates'),
    deviceLists: med('deviceLists'),
    deviceGets: med('deviceGets'),
    status429: med('status429'),
    apiSpanMs: round(med('apiSpanMs')),
    wallMs: round(med('wallMs')),
  };
}

function run(cmd, args, env = cleanEnv) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function fail(what, r) {
  console.error(`${what} failed (exit ${r.code}):\n${r.stderr}`);
  process.exit(1);
}

function intEnv(name, dflt) {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`${name} must be a positive integer`);
    process.exit(1);
  }
  return v;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function stats(xs) {
  return {
    median: round(median(xs)),
    min: round(Math.min(...xs)),
    max: round(Math.max(...xs)),
  };
}

function round(x) {
  return Math.round(x * 10) / 10;
}

function fmt(x) {
  return x.toFixed(1);
}

function mmm(s) {
  return [fmt(s.median), fmt(s.min), fmt(s.max)];
}

function table(head, rows) {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  console.log(line(head));
  console.log(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows) console.log(line(r));
}
