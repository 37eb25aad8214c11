/**
 * The embedded emulator's Kubernetes twin, as the commands see it. Whether it is on comes from
 * the running emulator itself (`MetalConnection.twin`): the twin decides by its own rule where
 * its binaries are (`LOKO_KUBE_BIN_DIR`, else `${XDG_CACHE_HOME:-$HOME/.cache}/loko/k8s/<version>/bin`,
 * src/emulator/twin/binaries.ts), so no command repeats that rule. Its processes outlive each
 * CLI run; `cluster destroy --emulator` stops them here.
 *
 * The twin's gates (docs/emulator.md "The CCM and CNI gates") are on for every emulator the CLI
 * starts, because `cluster apply` installs the CCM and the CNI itself: nodes stay uninitialised
 * until the Equinix Metal CCM runs with a key the emulator accepts, and NotReady until a CNI pod
 * runs on them. `LOKO_TWIN_REQUIRE_CCM=0` / `LOKO_TWIN_REQUIRE_CNI=0` (or `loko emulator start
 * --no-ccm-gate / --no-cni-gate`) turn them off, for runs that install neither.
 */
import path from 'node:path';
import { LokoError } from '../../util/errors.js';

/** Environment variable turning the CCM gate off (`0`) or on (`1`, the default). */
export const TWIN_REQUIRE_CCM_ENV = 'LOKO_TWIN_REQUIRE_CCM';
/** Environment variable turning the CNI gate off (`0`) or on (`1`, the default). */
export const TWIN_REQUIRE_CNI_ENV = 'LOKO_TWIN_REQUIRE_CNI';

/** The twin's gates, as `startEmulator({ twinOptions })` takes them. */
export interface TwinGates {
  requireCcm: boolean;
  requireCni: boolean;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

function envFlag(env: Record<string, string | undefined>, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new LokoError(`${name}=${JSON.stringify(raw)} is not a boolean`, {
    hint: `Set ${name} to 0 (off) or 1 (on, the default), or unset it.`,
  });
}

/**
 * The gates for an emulator the CLI starts: on, unless `flags` turn one off (`false` wins), or the
 * environment does (`LOKO_TWIN_REQUIRE_CCM`, `LOKO_TWIN_REQUIRE_CNI`: 0/1, false/true, no/yes,
 * off/on). Throws a `LokoError` naming the variable for any other value.
 *
 * Wiring for the embedded emulator (src/commands/shared/endpoint.ts):
 * `twinOptions: { onClose: 'keep', ...twinGates(ctx.env) }`.
 */
export function twinGates(
  env: Record<string, string | undefined>,
  flags: { ccmGate?: boolean; cniGate?: boolean } = {},
): TwinGates {
  const ccm = envFlag(env, TWIN_REQUIRE_CCM_ENV);
  const cni = envFlag(env, TWIN_REQUIRE_CNI_ENV);
  return {
    requireCcm: flags.ccmGate === false ? false : (ccm ?? true),
    requireCni: flags.cniGate === false ? false : (cni ?? true),
  };
}

/** The twin's directory for a cluster: the embedded emulator's, `<asset_dir>/emulator`. */
export function twinDir(assetDir: string): string {
  return path.join(assetDir, 'emulator');
}

/** Stops the twin processes recorded under `<asset_dir>/emulator`; resolves how many ran. */
export async function stopEmulatorTwin(assetDir: string): Promise<number> {
  const { stopTwin } = await import('../../emulator/index.js');
  return (await stopTwin(twinDir(assetDir))).stopped;
}
