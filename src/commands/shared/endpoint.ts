/**
 * Which Metal API a command talks to: `--emulator` starts an embedded emulator whose state lives
 * in `<asset_dir>/emulator/state.json` and whose project is the config's `project_id` (so one
 * config works against the emulator and a real endpoint); otherwise `--api-url` / `METAL_API_URL`
 * with `METAL_AUTH_TOKEN`. Neither is an error naming all three ways: never a silent fake.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ClusterConfig } from '../../config/types.js';
import type { MetalApi } from '../../metal/api.js';
import { LokoError } from '../../util/errors.js';
import type { CommandContext } from './context.js';

/** An open connection to a Metal API. */
export interface MetalConnection {
  api: MetalApi;
  kind: 'emulator' | 'remote';
  /** API base URL (no token). */
  baseUrl: string;
  /**
   * How much faster than real time the endpoint's clock runs (the embedded emulator's
   * LOKO_EMULATOR_TIME_SCALE; 1 for real endpoints). Poll intervals are divided by it.
   */
  timeScale: number;
  /**
   * The embedded emulator's Kubernetes twin (`--emulator` only): on when it found its binaries,
   * else off with the reason. Its processes outlive the run (`cluster destroy` stops them).
   */
  twin?: { enabled: true } | { enabled: false; reason: string };
  /** Closes the embedded emulator (persisting its state); no-op for remote endpoints. */
  close(): Promise<void>;
}

/** Env variable for the client-side rate limit when `--api-rate` is not given. */
export const API_RATE_ENV = 'LOKO_API_RATE';

/** Client-side requests per second when neither `--api-rate` nor LOKO_API_RATE is set. */
export const DEFAULT_API_RATE = 10;

/** Env variable read by the embedded emulator: its clock speed (default 1). */
export const TIME_SCALE_ENV = 'LOKO_EMULATOR_TIME_SCALE';

/** The embedded emulator's state file for a cluster. */
export function embeddedStatePath(assetDir: string): string {
  return path.join(assetDir, 'emulator', 'state.json');
}

/**
 * Opens the endpoint for `cluster`. Throws a LokoError when none is configured, when both
 * `--emulator` and `--api-url` are given, or for a bad URL / missing token.
 */
export async function openMetal(
  ctx: CommandContext,
  cluster: ClusterConfig,
): Promise<MetalConnection> {
  const { createMetalClient, resolveMetalEndpoint, missingEndpointError } =
    await import('../../metal/index.js');
  const logger = { debug: (msg: string) => ctx.host.debug(msg) };
  const requestsPerSecond = apiRate(ctx);
  ctx.host.debug(`Metal API client rate limit: ${requestsPerSecond} requests/s`);

  if (ctx.globals.emulator) {
    if (ctx.globals.apiUrl) {
      throw new LokoError('--emulator and --api-url are mutually exclusive', {
        hint: 'Use --emulator for the embedded emulator, or --api-url for a running API.',
      });
    }
    const timeScale = parseTimeScale(ctx.env[TIME_SCALE_ENV]);
    const { startEmulator, StateProjectMismatchError } = await import('../../emulator/index.js');
    // Like real machines, nodes wait for the CCM and the CNI that cluster apply installs
    // (LOKO_TWIN_REQUIRE_CCM=0 / LOKO_TWIN_REQUIRE_CNI=0 turn a gate off).
    const { twinGates } = await import('./twin.js');
    const gates = twinGates(ctx.env);
    const statePath = embeddedStatePath(cluster.assetDir);
    await mkdir(path.dirname(statePath), { recursive: true });
    const running = await startEmulator({
      statePath,
      projectId: cluster.projectId,
      port: 0,
      timeScale,
      logger: { info: (msg: string) => ctx.host.debug(msg) },
      // The twin's control plane and nodes stay up between CLI runs, like real machines do;
      // `cluster destroy` stops them.
      twin: 'auto',
      twinOptions: { onClose: 'keep', ...gates },
    }).catch((err: unknown) => {
      if (!(err instanceof StateProjectMismatchError)) throw err;
      throw new LokoError(
        `project_id ${cluster.projectId} of the configuration is not the project of the embedded emulator's state (${err.stateProjectId}): ${statePath}`,
        {
          hint: `Delete ${statePath} to start the emulator afresh for ${cluster.projectId} (its emulated machines are lost), or set project_id back to ${err.stateProjectId}.`,
          cause: err,
        },
      );
    });
    ctx.host.debug(
      `embedded emulator at ${running.url} (state ${statePath}, time scale ${timeScale})`,
    );
    return {
      api: createMetalClient({
        baseUrl: running.url,
        token: running.token,
        requestsPerSecond,
        logger,
      }),
      kind: 'emulator',
      baseUrl: running.url,
      timeScale,
      twin: running.twin.enabled
        ? { enabled: true }
        : { enabled: false, reason: running.twin.reason ?? 'Kubernetes twin off' },
      close: () => running.close(),
    };
  }

  const endpoint = resolveMetalEndpoint({ apiUrlFlag: ctx.globals.apiUrl, env: ctx.env });
  if (!endpoint) throw missingEndpointError();
  return {
    api: createMetalClient({
      baseUrl: endpoint.baseUrl,
      token: endpoint.token,
      requestsPerSecond,
      logger,
    }),
    kind: 'remote',
    baseUrl: endpoint.baseUrl,
    timeScale: 1,
    close: async () => {},
  };
}

/** Requests per second of the Metal client: `--api-rate`, else LOKO_API_RATE, else 10. */
export function apiRate(ctx: Pick<CommandContext, 'globals' | 'env'>): number {
  if (ctx.globals.apiRate !== undefined) return ctx.globals.apiRate;
  const raw = ctx.env[API_RATE_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_API_RATE;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new LokoError(`${API_RATE_ENV}="${raw}" is not a positive number`, {
      hint: `Set ${API_RATE_ENV} (or --api-rate) to the Metal API requests per second loko may send, for example ${API_RATE_ENV}=5.`,
    });
  }
  return n;
}

function parseTimeScale(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new LokoError(`${TIME_SCALE_ENV}="${raw}" is not a positive number`, {
      hint: `For example ${TIME_SCALE_ENV}=10 runs the embedded emulator's clock ten times faster.`,
    });
  }
  return n;
}
