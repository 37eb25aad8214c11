/**
 * The embedded emulator's Kubernetes twin, as the commands see it. Whether it is on comes from
 * the running emulator itself (`MetalConnection.twin`): the twin decides by its own rule where
 * its binaries are (`LOKO_KUBE_BIN_DIR`, else `${XDG_CACHE_HOME:-$HOME/.cache}/loko/k8s/<version>/bin`,
 * src/emulator/twin/binaries.ts), so no command repeats that rule. Its processes outlive each
 * CLI run; `cluster destroy --emulator` stops them here.
 */
import path from 'node:path';

/** The twin's directory for a cluster: the embedded emulator's, `<asset_dir>/emulator`. */
export function twinDir(assetDir: string): string {
  return path.join(assetDir, 'emulator');
}

/** Stops the twin processes recorded under `<asset_dir>/emulator`; resolves how many ran. */
export async function stopEmulatorTwin(assetDir: string): Promise<number> {
  const { stopTwin } = await import('../../emulator/index.js');
  return (await stopTwin(twinDir(assetDir))).stopped;
}
