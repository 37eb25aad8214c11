/**
 * A cluster session: config loaded, asset-dir lock held (when the command mutates or runs the
 * embedded emulator, whose state lives in the asset dir), endpoint open. Closed in reverse order.
 */
import type { ClusterConfig, LoadResult } from '../../config/types.js';
import type { ClusterLock } from '../../platforms/equinixmetal/lock.js';
import type { CommandContext } from './context.js';
import { openMetal, type MetalConnection } from './endpoint.js';
import { loadClusterConfig } from './load-config.js';

/** What a cluster command works with. */
export interface ClusterSession {
  cluster: ClusterConfig;
  result: LoadResult;
  metal: MetalConnection;
}

/**
 * Runs `body` inside a session. `lock: 'always'` for apply/destroy; `'emulator'` takes it only
 * with `--emulator` (read-only commands must not share the embedded emulator's state file).
 */
export async function withClusterSession<T>(
  ctx: CommandContext,
  command: string,
  lock: 'always' | 'emulator',
  body: (s: ClusterSession) => Promise<T>,
): Promise<T> {
  // Start loading the Metal client and the emulator (hundreds of ms) while the config parses.
  const preload = Promise.all([
    import('../../metal/index.js'),
    ctx.globals.emulator ? import('../../emulator/index.js') : undefined,
  ]);
  preload.catch(() => {}); // a failing import surfaces again where the module is used
  const { cluster, result } = await loadClusterConfig(ctx);
  const { acquireClusterLock } = await import('../../platforms/equinixmetal/lock.js');
  let held: ClusterLock | undefined;
  if (lock === 'always' || ctx.globals.emulator)
    held = await acquireClusterLock(cluster.assetDir, command);
  try {
    const metal = await openMetal(ctx, cluster);
    try {
      return await body({ cluster, result, metal });
    } finally {
      await metal.close();
    }
  } finally {
    await held?.release();
  }
}
