/**
 * The Equinix Metal API v1 emulator: a loopback-only HTTP server faithful to the published API
 * (`/metal/v1`), with a control API for tests (`/_emulator`). It depends on nothing else in
 * loko, so it can run as a separate server. See docs/emulator.md.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { drawAddressBlock, leaseAddressBlock } from './addressing.js';
import { Clock } from './clock.js';
import type { EmulatorContext, EmulatorLogger } from './context.js';
import { StateProjectMismatchError } from './errors.js';
import { FaultInjector } from './faults.js';
import { API_PREFIX, isUuid } from './ids.js';
import {
  Persister,
  readStateFile,
  STATE_FORMAT,
  writeFileAtomic,
  type StateFile,
} from './persist.js';
import { RateLimiter } from './ratelimit.js';
import { RequestLog } from './requestlog.js';
import { buildServer, CONTROL_PREFIX } from './server.js';
import { createInitialState, ownProject, upgradeState, type EmulatorState } from './state.js';
import { twinSource } from './twin-source.js';
import { KubernetesTwin, type TwinOptions } from './twin/index.js';

export { EmulatorControlClient } from './control-client.js';
export type {
  ActiveFault,
  ClockResponse,
  ProvisionFailureResponse,
  RequestLogEntry,
  RequestSummary,
  RequestsResponse,
  ResponseSample,
  ResponsesResponse,
} from './control.js';
export type { FaultRule, FaultStatus } from './faults.js';
export type { EmulatorLogger } from './context.js';
export { FOREIGN_PROJECT_ID } from './state.js';
export { StateProjectMismatchError } from './errors.js';
export { isLoopbackV4 } from './addressing.js';
export {
  findBinaries as findKubeBinaries,
  stopTwin,
  twinStatus,
  type TwinClusterStatus,
  type TwinComponentStatus,
  type TwinOptions,
  type TwinStatus,
} from './twin/index.js';

/** Options of `startEmulator`. */
export interface EmulatorOptions {
  /** Listen address; loopback only (127.0.0.0/8). Default 127.0.0.1. */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** State file to restore from and persist to (created if absent). Without it, nothing is saved. */
  statePath?: string;
  /** Id of the seeded project (a UUID), so a config's `project_id` works against the emulator. */
  projectId?: string;
  /** API token; default: the one in the state file, else a new random one. */
  token?: string;
  /** Speed of the virtual clock (default 1; 10 = ten times faster). */
  timeScale?: number;
  /** Request cap per second over all API requests (429 beyond it). Default: none. */
  rateLimitPerSecond?: number;
  /** Where the emulator reports what it does. Default: silent. */
  logger?: EmulatorLogger;
  /**
   * The Kubernetes twin (docs/emulator.md): `auto` (default) runs it when the binaries are found,
   * `off` never.
   */
  twin?: 'auto' | 'off';
  /**
   * Where the twin keeps its process records, data and logs (`<twinDir>/twin/`). Default: the
   * state file's directory (`<asset_dir>/emulator/` for the embedded emulator); without a state
   * file a temporary directory, removed on close.
   */
  twinDir?: string;
  /** The twin's gates and what `close()` does with its processes (default: stop them). */
  twinOptions?: TwinOptions;
}

/** Whether the twin runs, and where. */
export interface TwinInfo {
  enabled: boolean;
  /** Its directory, when enabled. */
  dir?: string;
  /** Why it is off. */
  reason?: string;
}

/** A running emulator. */
export interface RunningEmulator {
  /** API base URL, `http://127.0.0.1:<port>/metal/v1`. */
  url: string;
  /** Control API base URL, `http://127.0.0.1:<port>/_emulator`. */
  controlUrl: string;
  /** Value for the `X-Auth-Token` header. */
  token: string;
  /** Id of the seeded project. */
  projectId: string;
  /** The Kubernetes twin. */
  twin: TwinInfo;
  /**
   * Stops the server and writes the state file; the twin's processes are stopped unless
   * `twinOptions.onClose` is `keep`.
   */
  close(): Promise<void>;
}

const silent: EmulatorLogger = { info: () => undefined };

/** Starts an emulator; resolves once it is listening. */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = opts.host ?? '127.0.0.1';
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) {
    throw new Error(`the emulator listens on loopback only (127.0.0.0/8), not on "${host}"`);
  }
  if (opts.projectId !== undefined && !isUuid(opts.projectId)) {
    throw new Error(`projectId must be a UUID (as Metal project ids are), got "${opts.projectId}"`);
  }
  const logger = opts.logger ?? silent;
  const projectId = opts.projectId?.toLowerCase();

  const loaded = opts.statePath ? await readStateFile(opts.statePath) : undefined;
  let state: EmulatorState;
  if (loaded) {
    state = loaded.state;
    upgradeState(state, Date.now());
    const own = ownProject(state);
    if (projectId !== undefined && own.id !== projectId) {
      throw new StateProjectMismatchError(opts.statePath!, own.id, projectId);
    }
    if (opts.token !== undefined) state.token = opts.token;
  } else {
    state = createInitialState({
      now: Date.now(),
      addressing: drawAddressBlock(),
      ...(projectId !== undefined ? { projectId } : {}),
      ...(opts.token !== undefined ? { token: opts.token } : {}),
    });
  }
  // Machine-wide: a fresh state moves to a free block, a saved one fails if its block is taken.
  const lease = await leaseAddressBlock(state.addressing, {
    redraw: !loaded,
    statePath: opts.statePath,
  });
  state.addressing = lease.block;

  const clock = new Clock({ offsetMs: loaded?.clockOffsetMs ?? 0, timeScale: opts.timeScale ?? 1 });
  const snapshot = (): StateFile => ({
    format: STATE_FORMAT,
    version: 1,
    savedAt: new Date().toISOString(),
    clockOffsetMs: clock.offsetMs(),
    state,
  });
  const persister = new Persister(opts.statePath, snapshot, (err) =>
    logger.info(
      `emulator: could not write state file ${opts.statePath}: ${(err as Error).message}`,
    ),
  );
  const ctx: EmulatorContext = {
    state,
    clock,
    logger,
    requestLog: new RequestLog(),
    faults: new FaultInjector(),
    limiter: new RateLimiter(opts.rateLimitPerSecond ?? null),
    changed: () => persister.schedule(),
  };

  let base = '';
  const app = buildServer(ctx, { apiUrl: () => `${base}${API_PREFIX}` });
  try {
    await app.listen({ host, port: opts.port ?? 0 });
    // Written right away so the token and address block are on disk from the start.
    await persister.flush();
  } catch (err) {
    await lease.release();
    await app.close();
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  base = `http://${host}:${port}`;
  logger.info(
    `Metal API emulator listening on ${base}${API_PREFIX} (project ${ownProject(state).id}, addresses 127.${state.addressing.v4Octet}.0.0/16)`,
  );

  let twin: KubernetesTwin | undefined;
  let twinInfo: TwinInfo = { enabled: false, reason: 'off (twin: "off")' };
  let tempTwinDir: string | undefined;
  if ((opts.twin ?? 'auto') === 'auto') {
    const twinDir =
      opts.twinDir ??
      (opts.statePath
        ? dirname(opts.statePath)
        : // Created only when a control plane starts; removed on close.
          (tempTwinDir = join(
            tmpdir(),
            `loko-twin-${process.pid}-${randomBytes(4).toString('hex')}`,
          )));
    const created = KubernetesTwin.create(twinSource(ctx), twinDir, opts.twinOptions ?? {}, logger);
    if ('twin' in created) {
      twin = created.twin;
      twin.start();
      twinInfo = { enabled: true, dir: twin.twinDir };
    } else {
      logger.info(created.off);
      twinInfo = { enabled: false, reason: created.off };
      if (tempTwinDir) rmSync(tempTwinDir, { recursive: true, force: true });
      tempTwinDir = undefined;
    }
  }

  let closing: Promise<void> | undefined;
  return {
    url: `${base}${API_PREFIX}`,
    controlUrl: `${base}${CONTROL_PREFIX}`,
    token: state.token,
    projectId: ownProject(state).id,
    twin: twinInfo,
    close: () =>
      (closing ??= (async () => {
        try {
          await app.close();
        } finally {
          await lease.release();
          await persister.flush();
          await twin?.close();
          if (tempTwinDir) rmSync(tempTwinDir, { recursive: true, force: true });
        }
      })()),
  };
}

/**
 * Writes the ready file of `loko emulator start --ready-file`: `{"url","token","projectId"}`,
 * atomically and mode 0600 (it holds the token).
 */
export async function writeReadyFile(path: string, running: RunningEmulator): Promise<void> {
  const doc = { url: running.url, token: running.token, projectId: running.projectId };
  await writeFileAtomic(path, `${JSON.stringify(doc, null, 2)}\n`, 0o600);
}
