/**
 * vitest globalSetup of the integration project: one Kubernetes control plane per test run.
 *
 * The start is not awaited here, so test files that do not use Kubernetes are not held up; it
 * runs in this (main) process while they do. Kubernetes test files wait for the state file to
 * say `ready` (see ./index.ts). Once ready, the harness processes' sockets are sampled every
 * 250 ms until teardown; the network-safety test reads the samples, and teardown fails the run
 * (exit code 1) if any sample broke the loopback-only rule, even when that test did not run.
 *
 * Binaries missing: the state says `unavailable` and Kubernetes suites skip (or fail under
 * CI=true). `LOKO_KUBE_CONTROLLERS=0` starts only etcd + kube-apiserver.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { checkBinaries, CONTROLLER_BINARIES, CORE_BINARIES, isCI, kubeBinDir } from './binaries.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { HARNESS_ROOT } from './processes.js';
import { SocketSampler } from './sockets.js';
import { writeState, type KubeHarnessState } from './state.js';

const say = (line: string) => process.stderr.write(`[kube harness] ${line}\n`);

/** Starts the shared control plane in the background and provides its state file. */
export default function setup(project: TestProject): () => Promise<void> {
  // Under HARNESS_ROOT with an owner record, so a crashed run's state dir is swept like its
  // control plane (./processes.ts).
  mkdirSync(HARNESS_ROOT, { recursive: true, mode: 0o700 });
  const stateDir = mkdtempSync(join(HARNESS_ROOT, `state-${Date.now()}-`));
  writeFileSync(
    join(stateDir, 'owner.json'),
    JSON.stringify({ ownerPid: process.pid, components: [] }) + '\n',
    { mode: 0o600 },
  );
  const stateFile = join(stateDir, 'state.json');
  project.provide('lokoKube', { stateFile });

  const binDir = kubeBinDir();
  const wantControllers = process.env.LOKO_KUBE_CONTROLLERS !== '0';
  const core = checkBinaries(CORE_BINARIES, binDir);
  const ctl = checkBinaries(CONTROLLER_BINARIES, binDir);
  const controllers = wantControllers && ctl.missing.length === 0;
  const state: KubeHarnessState = {
    status: 'starting',
    ownerPid: process.pid,
    binDir,
    controllers,
  };

  if (core.missing.length > 0) {
    Object.assign(state, { status: 'unavailable', missing: core.missing });
    writeState(stateFile, state);
    say(
      `binaries missing in ${binDir} (${core.missing.join(', ')}): Kubernetes suites ` +
        `${isCI() ? 'will FAIL (CI=true)' : 'skip'}; run \`npm run kube:build\``,
    );
    return async () => rmSync(stateDir, { recursive: true, force: true });
  }
  if (wantControllers && !controllers) {
    say(`no ${ctl.missing.join(', ')} in ${binDir}: starting etcd + kube-apiserver only`);
  }
  writeState(stateFile, state);

  let cp: ControlPlane | undefined;
  let sampler: SocketSampler | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    if (!sampler) return;
    const fresh = sampler.sample();
    // Rewrite the state when something new turned up, and now and then for the counters.
    if (fresh.length > 0 || sampler.samples % 20 === 1) {
      state.network = {
        samples: sampler.samples,
        sockets: sampler.maxSockets,
        violations: sampler.violations,
      };
      writeState(stateFile, state);
    }
  };

  const started = startControlPlane({ controllers, log: say }).then(
    (running) => {
      cp = running;
      const t = running.timings;
      say(
        `control plane ready in ${(t.totalMs / 1000).toFixed(1)}s (etcd ${t.etcdMs} ms, ` +
          `kube-apiserver ${t.apiserverMs} ms, controllers + fake node ${t.controllersMs} ms) ` +
          `at ${running.server}`,
      );
      Object.assign(state, {
        status: 'ready',
        kubeconfigPath: running.kubeconfigPath,
        server: running.server,
        nodeName: running.nodeName,
        components: running.components,
        timings: running.timings,
        network: { samples: 0, sockets: 0, violations: [] },
      });
      writeState(stateFile, state);
      sampler = new SocketSampler(running.components);
      sample();
      timer = setInterval(sample, 250);
      timer.unref();
    },
    (err: unknown) => {
      Object.assign(state, { status: 'failed', reason: (err as Error).message });
      writeState(stateFile, state);
      say(`control plane failed to start: ${(err as Error).message.split('\n')[0]}`);
    },
  );

  return async () => {
    await started;
    if (timer) clearInterval(timer);
    sample();
    if (cp) await cp.stop();
    rmSync(stateDir, { recursive: true, force: true });
    if (sampler) {
      const { ok, lines } = sampler.report();
      lines.forEach(say);
      // Fails the run even when the network-safety test file was not part of it.
      if (!ok) process.exitCode = 1;
    }
  };
}
