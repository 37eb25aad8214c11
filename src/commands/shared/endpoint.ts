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
  /** Closes the embedded emulator (persisting its state); no-op for remote endpoints. */
  close(): Promise<void>;
}

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

  if (ctx.globals.emulator) {
    if (ctx.globals.apiUrl) {
      throw new LokoError('--emulator and --api-url are mutually exclusive', {
        hint: 'Use --emulator for the embedded emulator, or --api-url for a running API.',
      });
    }
    const timeScale = parseTimeScale(ctx.env[TIME_SCALE_ENV]);
    const { startEmulator } = await import('../../emulator/index.js');
    const statePath = embeddedStatePath(cluster.assetDir);
    await mkdir(path.dirname(statePath), { recursive: true });
    const running = await startEmulator({
      statePath,
      projectId: cluster.projectId,
      port: 0,
      timeScale,
      logger: { info: (msg: string) => ctx.host.debug(msg) },
    });
    ctx.host.debug(
      `embedded emulator at ${running.url} (state ${statePath}, time scale ${timeScale})`,
    );
    return {
      api: createMetalClient({ baseUrl: running.url, token: running.token, logger }),
      kind: 'emulator',
      baseUrl: running.url,
      timeScale,
      close: () => running.close(),
    };
  }

  const endpoint = resolveMetalEndpoint({ apiUrlFlag: ctx.globals.apiUrl, env: ctx.env });
  if (!endpoint) throw missingEndpointError();
  return {
    api: createMetalClient({ baseUrl: endpoint.baseUrl, token: endpoint.token, logger }),
    kind: 'remote',
    baseUrl: endpoint.baseUrl,
    timeScale: 1,
    close: async () => {},
  };
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
