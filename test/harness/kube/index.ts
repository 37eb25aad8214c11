/**
 * Test-file side of the Kubernetes harness (integration project only).
 *
 *   describeKube('server-side apply', () => {
 *     const kube = useKube();                 // waits for the shared control plane
 *     const ns = useNamespace(kube, 'apply'); // a fresh namespace per test
 *     it('creates', async () => {
 *       await kube().client.apply({ apiVersion: 'v1', kind: 'ConfigMap',
 *         metadata: { name: 'x', namespace: ns() } });
 *     });
 *   });
 *
 *   describeKube('rollouts', () => { ... }, { controllers: true });  // needs KCM/scheduler/kwok
 *
 * Missing binaries: the suite is skipped with a notice, or fails under CI=true.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, beforeEach, describe, inject, it } from 'vitest';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/kubeconfig.js';
import {
  checkBinaries,
  CONTROLLER_BINARIES,
  CORE_BINARIES,
  isCI,
  missingNotice,
} from './binaries.js';
import { readState, type KubeHarnessState } from './state.js';

export { FAKE_NODE, POD_CIDR, SERVICE_CIDR } from './control-plane.js';
export type { KubeHarnessState } from './state.js';

/** What a Kubernetes test gets. */
export interface KubeTestEnv {
  /** Admin kubeconfig of the shared control plane (verifies its CA). */
  kubeconfigPath: string;
  server: string;
  kc: KubeConfig;
  /** A client of the layer under test, for the admin user. */
  client: KubeClient;
  /** The Ready kwok node, when controllers run. */
  nodeName: string | undefined;
  controllers: boolean;
  /** The state file's content when the control plane became ready. */
  state: KubeHarnessState;
}

/** Options of `describeKube`. */
export interface KubeSuiteOptions {
  /** The suite needs kube-controller-manager, kube-scheduler and kwok (rollouts, pods). */
  controllers?: boolean;
}

/** Path of the state file the globalSetup provides. */
export function harnessStateFile(): string {
  const provided = inject('lokoKube');
  if (!provided) {
    throw new Error(
      'no Kubernetes harness: run this file in the integration project ' +
        '(globalSetup test/harness/kube/global-setup.ts)',
    );
  }
  return provided.stateFile;
}

/**
 * `describe` for a Kubernetes suite. Binaries missing: skipped with a notice on stderr, or, under
 * CI=true, one failing test naming what is missing. `LOKO_KUBE_CONTROLLERS=0` skips suites that
 * need controllers (an explicit opt-out, so not a failure in CI either).
 */
export function describeKube(name: string, fn: () => void, opts: KubeSuiteOptions = {}): void {
  const need = opts.controllers ? [...CORE_BINARIES, ...CONTROLLER_BINARIES] : CORE_BINARIES;
  const { binDir, missing } = checkBinaries(need);
  if (opts.controllers && process.env.LOKO_KUBE_CONTROLLERS === '0') {
    console.warn(`[kube] skipping "${name}": LOKO_KUBE_CONTROLLERS=0 (it needs controllers)`);
    describe.skip(name, fn);
    return;
  }
  if (missing.length === 0) {
    describe(name, fn);
    return;
  }
  const notice = missingNotice(binDir, missing);
  if (isCI()) {
    describe(name, () => {
      it('has the Kubernetes control-plane binaries (required when CI=true)', () => {
        throw new Error(notice);
      });
    });
    return;
  }
  console.warn(`[kube] skipping "${name}": ${notice}`);
  describe.skip(name, fn);
}

/** Waits until the shared control plane is ready (or failed), polling the state file. */
export async function waitForHarness(timeoutMs = 150_000): Promise<KubeHarnessState> {
  const file = harnessStateFile();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readState(file);
    if (state.status === 'ready') return state;
    if (state.status === 'failed') {
      throw new Error(`the test control plane failed to start: ${state.reason}`);
    }
    if (state.status === 'unavailable') {
      throw new Error(missingNotice(state.binDir, state.missing ?? []));
    }
    if (Date.now() > deadline) {
      throw new Error(`the test control plane was not ready after ${timeoutMs / 1000}s`);
    }
    try {
      process.kill(state.ownerPid, 0);
    } catch {
      throw new Error(
        `the test runner that starts the control plane (pid ${state.ownerPid}) is gone`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits for the shared control plane in `beforeAll`; the returned function gives it to tests. */
export function useKube(): () => KubeTestEnv {
  let env: KubeTestEnv | undefined;
  beforeAll(async () => {
    const state = await waitForHarness();
    const kc = loadKubeconfig(state.kubeconfigPath!);
    env = {
      kubeconfigPath: state.kubeconfigPath!,
      server: state.server!,
      kc,
      client: new KubeClient(kc),
      nodeName: state.nodeName,
      controllers: state.controllers,
      state,
    };
  }, 180_000);
  return () => {
    if (!env) throw new Error('useKube(): the control plane is not ready (use it inside tests)');
    return env;
  };
}

let nsCounter = 0;

/**
 * A fresh namespace for every test (`<prefix>-<n>-<random>`), created in `beforeEach` and deleted
 * (in the background) in `afterEach`.
 */
export function useNamespace(kube: () => KubeTestEnv, prefix = 't'): () => string {
  let current: string | undefined;
  beforeEach(async () => {
    const name = `${prefix}-${++nsCounter}-${randomBytes(3).toString('hex')}`.slice(0, 63);
    await kube().client.apply(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { 'loko.dev/test-namespace': 'true' } },
      },
      { fieldManager: 'loko-test-harness' },
    );
    current = name;
  });
  afterEach(async () => {
    if (current) await kube().client.delete({ apiVersion: 'v1', kind: 'Namespace', name: current });
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('useNamespace(): no namespace outside a test');
    return current;
  };
}
