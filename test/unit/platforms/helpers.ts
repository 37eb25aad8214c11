/** Shared setup for apply/destroy unit tests on FakeMetal. */
import {
  createApplyContext,
  type ApplyContext,
} from '../../../src/platforms/equinixmetal/apply.js';
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

export function applyCtx(
  api: FakeMetal,
  c: ClusterConfig,
  opts: { dryRun?: boolean; allowReplace?: boolean; signal?: AbortSignal } = {},
): ApplyContext {
  return createApplyContext({
    api,
    cluster: c,
    sources: sources({ 'cluster.metro': 3 }),
    executor: createExecutor({ api, dryRun: opts.dryRun, signal: opts.signal }),
    options: {
      poll: fastPoll,
      clock: api.clock,
      writeSummary: false,
      allowReplace: opts.allowReplace ?? false,
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
