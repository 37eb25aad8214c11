#!/usr/bin/env node
// Builds the real Kubernetes control-plane binaries that loko's tests run against
// (kube-apiserver, kube-controller-manager, kube-scheduler, kubeadm, etcd, kwok) from the Go
// module proxy, using the wrapper modules in tools/k8s/. Binaries go to a cache directory outside
// the clone, keyed by the Kubernetes version; each binary is skipped when its stamp still matches.
// See docs/kube-binaries.md.
//
// Usage:
//   node scripts/kube-build.mjs [--only=name,name] [--force]   build (default)
//   node scripts/kube-build.mjs --check [--only=...]           exit 0 if every binary is up to date
//   node scripts/kube-build.mjs --print-bin-dir                print the bin dir and exit
//   node scripts/kube-build.mjs --update-modules               regenerate tools/k8s/*/go.mod from
//                                                              versions.json (needs the module proxy)
//   node scripts/kube-build.mjs --manifests-only               only fill the manifest cache (below)
//
// Every full build (no --only) also downloads the Go modules holding the pinned upstream
// manifests (flannel, MetalLB; UPSTREAM_MANIFESTS below) and fills the per-user manifest cache
// ${XDG_CACHE_HOME:-$HOME/.cache}/loko/manifests/<sha256>.yaml with their verified bytes, so
// `--emulator` runs and the tests work offline (docs/manifests.md).
//
// Environment: LOKO_KUBE_BIN_DIR overrides the bin dir; XDG_CACHE_HOME / HOME pick the default;
// GOTOOLCHAIN is passed through (default "local").

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setInterval, clearInterval, setTimeout } from 'node:timers';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '..');
export const TOOLS_DIR = join(REPO_ROOT, 'tools', 'k8s');
export const VERSIONS_FILE = join(TOOLS_DIR, 'versions.json');

/** Reads tools/k8s/versions.json: { kubernetes, etcd, kwok } (each a tag such as "v1.36.3"). */
export function readVersions() {
  const v = JSON.parse(readFileSync(VERSIONS_FILE, 'utf8'));
  for (const key of ['kubernetes', 'etcd', 'kwok']) {
    if (typeof v[key] !== 'string' || !/^v\d+\.\d+\.\d+$/.test(v[key])) {
      throw new Error(`${VERSIONS_FILE}: "${key}" must be a version like v1.2.3`);
    }
  }
  return v;
}

/** The directory the binaries are built into (and read from by tests). */
export function kubeBinDir(versions = readVersions(), env = process.env) {
  if (env.LOKO_KUBE_BIN_DIR) return resolve(env.LOKO_KUBE_BIN_DIR);
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'loko', 'k8s', versions.kubernetes, 'bin');
}

/** Go wrapper modules under tools/k8s/ and the binaries each one builds. */
export function buildPlan(versions = readVersions()) {
  const k = versions.kubernetes.replace(/^v/, '').split('.');
  const buildDate = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const kubeVersionFlags = (date) =>
    ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
      `-X ${pkg}.gitVersion=${versions.kubernetes}`,
      `-X ${pkg}.gitMajor=${k[0]}`,
      `-X ${pkg}.gitMinor=${k[1]}`,
      `-X ${pkg}.gitTreeState=clean`,
      // No commit is known from a module zip; empty beats the unexpanded "$Format:%H$".
      `-X ${pkg}.gitCommit=`,
      ...(date ? [`-X ${pkg}.buildDate=${date}`] : []),
    ]);
  const kube = (name) => ({
    name,
    module: 'kubernetes',
    modulePath: 'k8s.io/kubernetes',
    version: versions.kubernetes,
    pkg: `k8s.io/kubernetes/cmd/${name}`,
    // buildDate changes on every build, so it is kept out of the stamp key.
    ldflags: kubeVersionFlags(null),
    ldflagsVolatile: kubeVersionFlags(buildDate).filter((f) => f.includes('.buildDate=')),
  });
  return [
    kube('kube-apiserver'),
    kube('kube-controller-manager'),
    kube('kube-scheduler'),
    kube('kubeadm'),
    {
      name: 'etcd',
      module: 'etcd',
      modulePath: 'go.etcd.io/etcd/server/v3',
      version: versions.etcd,
      // The root package of go.etcd.io/etcd/server/v3 is the etcd main (main.go -> etcdmain.Main).
      pkg: 'go.etcd.io/etcd/server/v3',
      // Version is a var already equal to the module's tag; GitSHA is unknown from a module zip.
      ldflags: [`-X go.etcd.io/etcd/api/v3/version.GitSHA=${versions.etcd}-goproxy`],
      ldflagsVolatile: [],
    },
    {
      name: 'kwok',
      module: 'kwok',
      modulePath: 'sigs.k8s.io/kwok',
      version: versions.kwok,
      pkg: 'sigs.k8s.io/kwok/cmd/kwok',
      ldflags: [
        `-X sigs.k8s.io/kwok/pkg/consts.Version=${versions.kwok}`,
        `-X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${versions.kubernetes.replace(/^v/, '')}`,
      ],
      ldflagsVolatile: [],
    },
  ];
}

export const BINARY_NAMES = buildPlan({
  kubernetes: 'v0.0.0',
  etcd: 'v0.0.0',
  kwok: 'v0.0.0',
}).map((b) => b.name);

// --- pinned upstream manifests ----------------------------------------------------------------

/**
 * The upstream manifests loko's components pin (a copy of each component's UpstreamManifest:
 * src/components/flannel/index.ts, src/components/metallb/index.ts; a unit test keeps them equal).
 */
export const UPSTREAM_MANIFESTS = [
  {
    name: 'kube-flannel',
    url: 'https://raw.githubusercontent.com/flannel-io/flannel/v0.28.10/Documentation/kube-flannel.yml',
    sha256: '944a3c1f925f117727a1b7272a323c80965da642498397ec7e6ea9bef0f9e6c5',
    goModule: {
      module: 'github.com/flannel-io/flannel',
      version: 'v0.28.10',
      path: 'Documentation/kube-flannel.yml',
    },
  },
  {
    name: 'metallb-native',
    url: 'https://raw.githubusercontent.com/metallb/metallb/v0.16.2/config/manifests/metallb-native.yaml',
    sha256: 'e5f7c268f114c446dc60aaad71b7cabf861f637743e033e354d7d48592807c6d',
    goModule: {
      module: 'go.universe.tf/metallb',
      version: 'v0.16.2',
      path: 'config/manifests/metallb-native.yaml',
    },
  },
];

/** The per-user manifest cache (same rule as userManifestCacheDir in src/components/upstream/fetch.ts). */
export function manifestCacheDir(env = process.env) {
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'loko', 'manifests');
}

/**
 * Downloads each pinned manifest's Go module (`go mod download -json`, the module proxy), checks
 * the file's sha256 against the pin and writes it to `<cache>/<sha256>.yaml` (temp file + rename).
 * An entry that already verifies is kept. Returns 0, or 1 after logging what failed.
 */
export function fillManifestCache(cacheDir = manifestCacheDir()) {
  mkdirSync(cacheDir, { recursive: true });
  let failed = 0;
  for (const m of UPSTREAM_MANIFESTS) {
    const target = join(cacheDir, `${m.sha256}.yaml`);
    if (existsSync(target) && sha256(readFileSync(target)) === m.sha256) {
      log(`manifest ${m.name}: cached (${target})`);
      continue;
    }
    const key = `${m.goModule.module}@${m.goModule.version}`;
    const env = { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN || 'local', GOFLAGS: '' };
    const r = spawnSync('go', ['mod', 'download', '-json', key], {
      env,
      encoding: 'utf8',
      cwd: tmpdir(),
    });
    let info = {};
    try {
      info = JSON.parse(r.stdout);
    } catch {
      // reported below
    }
    if (r.error || r.status !== 0 || !info.Dir) {
      log(
        `FAILED: manifest ${m.name}: go mod download ${key}: ${info.Error || r.stderr?.trim() || r.error?.message}`,
      );
      failed++;
      continue;
    }
    const bytes = readFileSync(join(info.Dir, ...m.goModule.path.split('/')));
    const got = sha256(bytes);
    if (got !== m.sha256) {
      log(
        `FAILED: manifest ${m.name}: ${key}/${m.goModule.path} has sha256 ${got}, pinned ${m.sha256}`,
      );
      failed++;
      continue;
    }
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, target);
    log(`manifest ${m.name}: verified and cached (${target})`);
  }
  return failed === 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------

const log = (msg) => process.stderr.write(`kube-build: ${msg}\n`);
const secs = (ms) => `${(ms / 1000).toFixed(1)}s`;

function goEnv() {
  const env = { ...process.env };
  env.CGO_ENABLED = '0';
  env.GOTOOLCHAIN = process.env.GOTOOLCHAIN || 'local';
  env.GOFLAGS = [process.env.GOFLAGS, '-mod=readonly'].filter(Boolean).join(' ');
  return env;
}

function goVersion() {
  const r = spawnSync('go', ['env', 'GOVERSION', 'GOOS', 'GOARCH'], {
    env: goEnv(),
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0) {
    throw new Error(
      `cannot run "go" (${r.error ? r.error.message : r.stderr.trim()}); a Go toolchain >= 1.26 is needed`,
    );
  }
  return r.stdout.trim().split('\n').join(' ');
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

function moduleFiles(mod) {
  const dir = join(TOOLS_DIR, mod);
  return {
    dir,
    gomod: readFileSync(join(dir, 'go.mod'), 'utf8'),
    gosum: existsSync(join(dir, 'go.sum')) ? readFileSync(join(dir, 'go.sum'), 'utf8') : '',
  };
}

/** Fails early when a go.mod does not require the version that versions.json names. */
function checkModuleVersion(bin, gomod) {
  const re = new RegExp(
    `^\\s*(?:require\\s+)?${bin.modulePath.replace(/\./g, '\\.')}\\s+(\\S+)`,
    'm',
  );
  const m = gomod.match(re);
  if (!m || m[1] !== bin.version) {
    throw new Error(
      `tools/k8s/${bin.module}/go.mod requires ${bin.modulePath} ${m ? m[1] : '(nothing)'} but ` +
        `versions.json says ${bin.version}; run: node scripts/kube-build.mjs --update-modules`,
    );
  }
}

function stampKey(bin, files, gover) {
  return sha256(
    JSON.stringify({
      name: bin.name,
      pkg: bin.pkg,
      version: bin.version,
      ldflags: bin.ldflags,
      go: gover,
      gomod: sha256(files.gomod),
      gosum: sha256(files.gosum),
    }),
  );
}

function readStamp(binDir) {
  try {
    return JSON.parse(readFileSync(join(binDir, '.stamp.json'), 'utf8'));
  } catch {
    return { binaries: {} };
  }
}

function writeStamp(binDir, stamp) {
  const tmp = join(binDir, `.stamp.json.${process.pid}`);
  writeFileSync(tmp, JSON.stringify(stamp, null, 2) + '\n');
  renameSync(tmp, join(binDir, '.stamp.json'));
}

function upToDate(binDir, stamp, bin, key) {
  const file = join(binDir, bin.name);
  return existsSync(file) && statSync(file).size > 0 && stamp.binaries[bin.name]?.key === key;
}

/** Runs a command, teeing its combined output to a log file; resolves with { code, tail }. */
function run(cmd, args, { cwd, logFile, label }) {
  return new Promise((resolvePromise) => {
    const fd = openSync(logFile, 'w');
    writeSync(fd, `$ ${cmd} ${args.join(' ')}\n`);
    const lines = [];
    const child = spawn(cmd, args, { cwd, env: goEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk) => {
      writeSync(fd, chunk);
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(l);
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const started = Date.now();
    const beat = setInterval(
      () => log(`${label}: still running (${secs(Date.now() - started)})`),
      120_000,
    );
    const finish = (code) => {
      clearInterval(beat);
      closeSync(fd);
      resolvePromise({ code, tail: lines.slice(-25) });
    };
    child.on('error', (err) => {
      lines.push(String(err));
      finish(127);
    });
    child.on('close', (code, signal) => finish(code ?? (signal ? 128 : 1)));
  });
}

async function acquireLock(binDir) {
  const lock = join(binDir, '.lock');
  for (let waited = 0; ; waited += 2) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let pid = 0;
      try {
        pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        /* lock being created or removed */
      }
      let alive = false;
      if (pid > 0) {
        try {
          process.kill(pid, 0);
          alive = true;
        } catch (e) {
          alive = e.code === 'EPERM';
        }
      }
      if (pid > 0 && !alive) {
        log(`removing stale lock of process ${pid}`);
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (waited % 60 === 0) log(`waiting for another kube-build (pid ${pid || '?'}) to finish`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

function parseArgs(argv) {
  const opts = {
    only: null,
    force: false,
    check: false,
    printBinDir: false,
    update: false,
    manifestsOnly: false,
  };
  for (const a of argv) {
    if (a === '--force') opts.force = true;
    else if (a === '--check') opts.check = true;
    else if (a === '--print-bin-dir') opts.printBinDir = true;
    else if (a === '--update-modules') opts.update = true;
    else if (a === '--manifests-only') opts.manifestsOnly = true;
    else if (a.startsWith('--only=')) opts.only = a.slice(7).split(',').filter(Boolean);
    else if (a === '-h' || a === '--help') opts.help = true;
    else throw new Error(`unknown argument ${a} (see the header of scripts/kube-build.mjs)`);
  }
  for (const n of opts.only ?? []) {
    if (!BINARY_NAMES.includes(n)) {
      throw new Error(`--only: unknown binary ${n}; known: ${BINARY_NAMES.join(', ')}`);
    }
  }
  return opts;
}

async function build(opts) {
  const versions = readVersions();
  const binDir = kubeBinDir(versions);
  const logDir = join(dirname(binDir), 'logs');
  const plan = buildPlan(versions).filter((b) => !opts.only || opts.only.includes(b.name));
  const gover = goVersion();
  const files = {};
  for (const bin of plan) {
    files[bin.module] ??= moduleFiles(bin.module);
    checkModuleVersion(bin, files[bin.module].gomod);
  }

  if (opts.check) {
    const stamp = readStamp(binDir);
    const stale = plan.filter(
      (b) => !upToDate(binDir, stamp, b, stampKey(b, files[b.module], gover)),
    );
    for (const b of stale) log(`${b.name}: missing or out of date`);
    process.stdout.write(binDir + '\n');
    return stale.length === 0 ? 0 : 1;
  }

  mkdirSync(binDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const release = await acquireLock(binDir);
  try {
    const total = Date.now();
    log(
      `Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}, kwok ${versions.kwok} with ${gover}` +
        ` -> ${binDir}`,
    );
    const downloaded = new Set();
    for (const bin of plan) {
      const stamp = readStamp(binDir);
      const key = stampKey(bin, files[bin.module], gover);
      if (!opts.force && upToDate(binDir, stamp, bin, key)) {
        log(`${bin.name}: skipped (${bin.modulePath} ${bin.version} already built)`);
        continue;
      }
      const cwd = join(TOOLS_DIR, bin.module);
      if (!downloaded.has(bin.module)) {
        downloaded.add(bin.module);
        const t = Date.now();
        log(`modules of tools/k8s/${bin.module}: downloading`);
        const r = await run('go', ['mod', 'download'], {
          cwd,
          logFile: join(logDir, `download-${bin.module}.log`),
          label: `modules of tools/k8s/${bin.module}`,
        });
        if (r.code !== 0) {
          log(`FAILED: downloading the modules of tools/k8s/${bin.module} (go exit ${r.code}):`);
          for (const l of r.tail) process.stderr.write(`  ${l}\n`);
          return 1;
        }
        log(`modules of tools/k8s/${bin.module}: done in ${secs(Date.now() - t)}`);
      }
      const t = Date.now();
      log(`${bin.name}: building ${bin.pkg} (${bin.modulePath} ${bin.version})`);
      const tmp = join(binDir, `.${bin.name}.tmp`);
      const ldflags = ['-s', '-w', ...bin.ldflags, ...bin.ldflagsVolatile].join(' ');
      const r = await run('go', ['build', '-trimpath', '-ldflags', ldflags, '-o', tmp, bin.pkg], {
        cwd,
        logFile: join(logDir, `${bin.name}.log`),
        label: bin.name,
      });
      if (r.code !== 0) {
        rmSync(tmp, { force: true });
        log(`FAILED: ${bin.name} (go build exit ${r.code}); last lines of go's output:`);
        for (const l of r.tail) process.stderr.write(`  ${l}\n`);
        log(`full log: ${join(logDir, `${bin.name}.log`)}`);
        return 1;
      }
      chmodSync(tmp, 0o755);
      renameSync(tmp, join(binDir, bin.name));
      const seconds = (Date.now() - t) / 1000;
      const fresh = readStamp(binDir);
      fresh.binaries[bin.name] = {
        key,
        module: bin.modulePath,
        version: bin.version,
        go: gover,
        builtAt: new Date().toISOString(),
        seconds: Math.round(seconds * 10) / 10,
      };
      fresh.versions = versions;
      writeStamp(binDir, fresh);
      log(`${bin.name}: done in ${seconds.toFixed(1)}s`);
    }
    if (!opts.only && fillManifestCache() !== 0) return 1;
    log(`all done in ${secs(Date.now() - total)}`);
    process.stdout.write(binDir + '\n');
    return 0;
  } finally {
    release();
  }
}

// --- go.mod generation (maintainers, on a version bump) -------------------------------------

function goOrThrow(args, cwd, env = goEnv()) {
  const r = spawnSync('go', args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error || r.status !== 0) {
    throw new Error(`go ${args.join(' ')} failed:\n${r.error ?? ''}${r.stderr}`);
  }
  return r.stdout;
}

/** Staging modules that k8s.io/kubernetes maps to ./staging/... in its own go.mod. */
function stagingModules(kubeVersion) {
  const scratch = join(tmpdir(), `kube-build-gomod-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  try {
    const env = { ...goEnv(), GOFLAGS: process.env.GOFLAGS || '' };
    const info = JSON.parse(
      goOrThrow(['mod', 'download', '-json', `k8s.io/kubernetes@${kubeVersion}`], scratch, env),
    );
    const gomod = readFileSync(info.GoMod, 'utf8');
    // Every module k8s.io/kubernetes maps to ./staging/... AND requires at v0.0.0. Replace-only
    // entries (sample-cli-plugin, sample-controller) are not in the module graph; the proxy here
    // refuses k8s.io/sample-cli-plugin v0.36.3 (403), and go mod tidy fails on a replace of it.
    const mapped = new Set(
      [...gomod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm)].map((m) => m[1]),
    );
    const required = [...gomod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+v0\.0\.0\s*$/gm)].map(
      (m) => m[1],
    );
    const names = required.filter((n) => mapped.has(n));
    if (names.length === 0) throw new Error(`no staging modules found in ${info.GoMod}`);
    const skipped = [...mapped].filter((n) => !names.includes(n));
    if (skipped.length)
      log(`staging modules not required by k8s.io/kubernetes: ${skipped.join(', ')}`);
    return [...new Set(names)].sort();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function writeModule(mod, text) {
  const dir = join(TOOLS_DIR, mod);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), text);
  rmSync(join(dir, 'go.sum'), { force: true });
  log(`tools/k8s/${mod}: go mod tidy`);
  goOrThrow(['mod', 'tidy'], dir, { ...goEnv(), GOFLAGS: process.env.GOFLAGS || '' });
}

function updateModules() {
  const v = readVersions();
  const header = (mod) =>
    `// Generated by scripts/kube-build.mjs --update-modules from tools/k8s/versions.json.\n` +
    `// Wrapper module: only go.mod/go.sum are committed; the binaries are built by\n` +
    `// scripts/kube-build.mjs into the user's cache directory.\nmodule loko/tools/k8s/${mod}\n\ngo 1.26.0\n\n`;
  const staging = stagingModules(v.kubernetes);
  const stagingVersion = v.kubernetes.replace(/^v1\./, 'v0.');
  log(`k8s.io/kubernetes ${v.kubernetes}: ${staging.length} staging modules -> ${stagingVersion}`);
  const kubeTools = buildPlan(v).filter((b) => b.module === 'kubernetes');
  writeModule(
    'kubernetes',
    header('kubernetes') +
      `tool (\n${kubeTools.map((b) => `\t${b.pkg}\n`).join('')})\n\n` +
      `require (\n\tk8s.io/kubernetes ${v.kubernetes}\n` +
      staging.map((s) => `\t${s} ${stagingVersion}\n`).join('') +
      `)\n\n` +
      `// k8s.io/kubernetes requires its staging modules at v0.0.0 and maps them to ./staging/...;\n` +
      `// a dependency's replaces are ignored, so map each one to its published tag here.\n` +
      `replace (\n${staging.map((s) => `\t${s} => ${s} ${stagingVersion}\n`).join('')})\n`,
  );
  writeModule(
    'etcd',
    header('etcd') +
      `tool go.etcd.io/etcd/server/v3\n\nrequire go.etcd.io/etcd/server/v3 ${v.etcd}\n`,
  );
  writeModule(
    'kwok',
    header('kwok') + `tool sigs.k8s.io/kwok/cmd/kwok\n\nrequire sigs.k8s.io/kwok ${v.kwok}\n`,
  );
  log('go.mod and go.sum regenerated; commit tools/k8s/');
  return 0;
}

async function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
    if (opts.help) {
      process.stdout.write(
        readFileSync(fileURLToPath(import.meta.url), 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('//'))
          .slice(0, 20)
          .map((l) => l.replace(/^\/\/ ?/, ''))
          .join('\n') + '\n',
      );
      return 0;
    }
    if (opts.printBinDir) {
      process.stdout.write(kubeBinDir() + '\n');
      return 0;
    }
    if (opts.update) return updateModules();
    if (opts.manifestsOnly) return fillManifestCache();
    return await build(opts);
  } catch (err) {
    log(`error: ${err.message}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
