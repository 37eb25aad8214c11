/**
 * Equinix Metal platform: desired state, observation by tag, planning, preflight, apply, destroy
 * and the asset-dir lock. Core code: it never prints or prompts.
 */
export * from './apply.js';
export * from './desired.js';
export * from './destroy.js';
export * from './endpoint.js';
export * from './executor.js';
export * from './health.js';
export * from './kubernetes.js';
export * from './lock.js';
export * from './machine-bootstrap.js';
export * from './observe.js';
export * from './plan.js';
export * from './poll.js';
export * from './preflight.js';
export * from './summary.js';
export * from './tags.js';
export * from './wait.js';
export { deleteDevices, settleAll, type DeleteTarget, type DeleteUntil } from './delete-devices.js';
