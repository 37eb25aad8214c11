/**
 * The state file through which the integration project's globalSetup (main vitest process) tells
 * test files (worker processes) about the shared control plane. Its path reaches the workers with
 * vitest's `provide`/`inject` under the key `lokoKube`.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ControlPlaneTimings } from './control-plane.js';
import type { Violation } from './sockets.js';

/** What the shared control plane is doing. */
export type KubeHarnessStatus = 'starting' | 'ready' | 'failed' | 'unavailable';

/** Contents of the state file. */
export interface KubeHarnessState {
  status: KubeHarnessStatus;
  /** pid of the vitest main process that owns the control plane. */
  ownerPid: number;
  binDir: string;
  /** Whether controller-manager, scheduler and kwok (with a fake node) run. */
  controllers: boolean;
  /** `unavailable`: which binaries are missing; `failed`: the start-up error. */
  reason?: string;
  missing?: string[];
  kubeconfigPath?: string;
  server?: string;
  nodeName?: string;
  components?: { name: string; pid: number; binary: string; logFile: string }[];
  timings?: ControlPlaneTimings;
  /** Socket sampling of the harness processes during the run (see ./sockets.ts). */
  network?: { samples: number; sockets: number; violations: Violation[] };
}

/** What `provide('lokoKube', ...)` hands to test files. */
export interface KubeHarnessProvided {
  stateFile: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    lokoKube: KubeHarnessProvided;
  }
}

/** Writes the state atomically (readers never see half a file). */
export function writeState(file: string, state: KubeHarnessState): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Reads the state file. */
export function readState(file: string): KubeHarnessState {
  return JSON.parse(readFileSync(file, 'utf8')) as KubeHarnessState;
}
