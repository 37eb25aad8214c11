import { releaseHardwareReservation } from './hardware.js';
import { releaseDeviceAddresses } from './ipam.js';
import { stateAt } from './lifecycle.js';
import type { EmulatorState } from './state.js';

/**
 * Applies what time has made true: devices whose deprovisioning finished disappear (their
 * management addresses are released, Elastic IP reservations stay, and their hardware
 * reservation becomes provisionable again). Runs before each API request, so the answer is the
 * same whether the process ran all along or was restarted. Returns true when the state changed.
 */
export function sweep(state: EmulatorState, now: number): boolean {
  const gone = state.devices.filter((d) => stateAt(d, now) === 'deleted');
  if (gone.length === 0) return false;
  for (const d of gone) {
    releaseDeviceAddresses(state, d.id);
    releaseHardwareReservation(state, d.id);
  }
  const ids = new Set(gone.map((d) => d.id));
  state.devices = state.devices.filter((d) => !ids.has(d.id));
  return true;
}
