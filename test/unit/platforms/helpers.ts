/** Shared setup for apply/destroy unit tests on FakeMetal. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createApplyContext,
  type ApplyContext,
  type KubernetesMode,
} from '../../../src/platforms/equinixmetal/apply.js';
import type { ConnectClusterApi } from '../../../src/platforms/equinixmetal/kubernetes.js';
import { createExecutor } from '../../../src/platforms/equinixmetal/executor.js';
import type { ClusterConfig } from '../../../src/config/types.js';
import type { ItemState, ProgressReporter } from '../../../src/tasks/phase.js';
import type { FakeMetal } from './fake-metal.js';
import { sources } from './fixtures.js';

export const fastPoll = {
  intervalMs: 1_000,
  maxIntervalMs: 2_000,
  factor: 1.5,
  timeoutMs: 120_000,
};

/** Machines only, as with the emulator without its Kubernetes twin: no API is expected. */
export const MACHINES_ONLY: KubernetesMode = {
  mode: 'skip',
  reason: 'machines only (unit test)',
  apiExpected: false,
};

/** One asset dir per FakeMetal, so reruns on the same fake share their PKI and token. */
const assetDirs = new WeakMap<FakeMetal, string>();

/** The asset dir of the cluster applied to `api` (a fresh temporary directory per fake). */
export function assetDirOf(api: FakeMetal): string {
  let dir = assetDirs.get(api);
  if (!dir) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'loko-unit-apply-'));
    assetDirs.set(api, dir);
  }
  return dir;
}

export function applyCtx(
  api: FakeMetal,
  c: ClusterConfig,
  opts: {
    dryRun?: boolean;
    allowReplace?: boolean;
    signal?: AbortSignal;
    kubernetes?: KubernetesMode;
    connect?: ConnectClusterApi;
  } = {},
): ApplyContext {
  return createApplyContext({
    api,
    cluster: { ...c, assetDir: assetDirOf(api) },
    sources: sources({ 'cluster.metro': 3 }),
    executor: createExecutor({ api, dryRun: opts.dryRun, signal: opts.signal }),
    options: {
      poll: fastPoll,
      kubePoll: fastPoll,
      clock: api.clock,
      writeSummary: false,
      allowReplace: opts.allowReplace ?? false,
      kubernetes: opts.kubernetes ?? MACHINES_ONLY,
      ...(opts.connect ? { connect: opts.connect } : {}),
    },
  });
}

/** A reporter that keeps the last state of each item. */
export function recordingReporter(): ProgressReporter & {
  items: Map<string, { state: ItemState; detail?: string }>;
} {
  const items = new Map<string, { state: ItemState; detail?: string }>();
  return {
    items,
    item: (key, state, detail) => items.set(key, { state, detail }),
    status: () => {},
    warn: () => {},
    debug: () => {},
  };
}
