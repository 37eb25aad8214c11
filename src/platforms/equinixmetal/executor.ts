/**
 * The one chokepoint for mutations (aesthetics "absorb" 3): every write to the Metal API that
 * plan/apply/destroy perform goes through {@link Executor.execute} as a typed {@link Mutation}.
 * In dry-run mode it records instead of calling, so a dry run lists exactly what apply would do.
 */
import type { MetalApi } from '../../metal/api.js';
import type { Device, DeviceCreateInput, DeviceUpdateInput } from '../../metal/types.js';
import { isUncertain } from './api-errors.js';
import { throwIfAborted } from './poll.js';

/** POST /projects/{projectId}/devices. `tag` is the cluster tag used to re-list after an uncertain answer. */
export interface CreateDeviceMutation {
  kind: 'create-device';
  projectId: string;
  tag: string;
  input: DeviceCreateInput;
}

/** PUT /devices/{id}. */
export interface UpdateDeviceMutation {
  kind: 'update-device';
  deviceId: string;
  hostname: string;
  input: DeviceUpdateInput;
}

/** DELETE /devices/{id}; 404 resolves `'absent'`. */
export interface DeleteDeviceMutation {
  kind: 'delete-device';
  deviceId: string;
  hostname: string;
}

/** DELETE /ips/{id} for an IP reservation; 404 resolves `'absent'`. */
export interface DeleteIPReservationMutation {
  kind: 'delete-ip-reservation';
  id: string;
  /** e.g. `147.75.1.0/29`, for messages. */
  label: string;
}

export type Mutation =
  CreateDeviceMutation | UpdateDeviceMutation | DeleteDeviceMutation | DeleteIPReservationMutation;

/** What {@link Executor.execute} resolves for each mutation kind. */
export type MutationResult<M extends Mutation> = M extends
  CreateDeviceMutation | UpdateDeviceMutation
  ? Device
  : 'deleted' | 'absent';

/** Performs (or records) mutations. */
export interface Executor {
  readonly dryRun: boolean;
  /** Every mutation passed to `execute`, in call order (also in live mode: a journal for tests and logs). */
  readonly recorded: readonly Mutation[];
  /**
   * Runs one mutation. Throws InterruptedError without calling the API when `signal` has aborted
   * (a safe point); an API call already started is always allowed to finish.
   */
  execute<M extends Mutation>(m: M): Promise<MutationResult<M>>;
}

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  api: MetalApi;
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Extra create attempts after an uncertain failure proved (by re-listing) to have created nothing. */
  createRetries?: number;
  debug?: (msg: string) => void;
}

/** Creates the executor. */
export function createExecutor(opts: ExecutorOptions): Executor {
  const recorded: Mutation[] = [];
  const dryRun = opts.dryRun ?? false;
  const debug = opts.debug ?? (() => {});
  const api = opts.api;

  async function perform(m: Mutation): Promise<Device | 'deleted' | 'absent'> {
    switch (m.kind) {
      case 'create-device':
        return createDevice(m);
      case 'update-device':
        return api.updateDevice(m.deviceId, m.input);
      case 'delete-device':
        return api.deleteDevice(m.deviceId);
      case 'delete-ip-reservation':
        return api.deleteIP(m.id);
    }
  }

  /**
   * A create is never retried blindly: after an answer that leaves it uncertain whether the device
   * exists (transport error, 5xx, 429), the cluster's devices are re-listed by tag and a device
   * with the hostname is adopted; only when none exists is the create attempted again.
   */
  async function createDevice(m: CreateDeviceMutation): Promise<Device> {
    const attempts = 1 + (opts.createRetries ?? 1);
    for (let attempt = 1; ; attempt++) {
      try {
        return await api.createDevice(m.projectId, m.input);
      } catch (err) {
        if (!isUncertain(err)) throw err;
        debug(`create ${m.input.hostname}: uncertain answer (${String(err)}); re-listing by tag`);
        const found = (
          await api.listDevices(m.projectId, { tag: m.tag, hostname: m.input.hostname })
        ).find(
          (d) =>
            d.hostname === m.input.hostname &&
            d.tags?.includes(m.tag) &&
            !['deprovisioning', 'deleted', 'failed'].includes(d.state),
        );
        if (found) {
          debug(`create ${m.input.hostname}: adopted ${found.id} found by re-listing`);
          return found;
        }
        if (attempt >= attempts) throw err;
        throwIfAborted(opts.signal);
      }
    }
  }

  return {
    dryRun,
    recorded,
    async execute<M extends Mutation>(m: M): Promise<MutationResult<M>> {
      throwIfAborted(opts.signal);
      recorded.push(m);
      if (dryRun) return dryRunResult(m) as MutationResult<M>;
      return (await perform(m)) as MutationResult<M>;
    },
  };
}

/** A plausible answer for a recorded mutation, so callers need no dry-run branches. */
function dryRunResult(m: Mutation): Device | 'deleted' {
  switch (m.kind) {
    case 'create-device':
      return {
        id: `dry-run:${m.input.hostname}`,
        hostname: m.input.hostname,
        state: 'queued',
        tags: m.input.tags ?? [],
        plan: { slug: m.input.plan },
        operating_system: { slug: m.input.operating_system },
        ip_addresses: [],
      };
    case 'update-device':
      return {
        id: m.deviceId,
        hostname: m.hostname,
        state: 'active',
        tags: m.input.tags ?? [],
        plan: { slug: '' },
        operating_system: { slug: '' },
        ip_addresses: [],
      };
    default:
      return 'deleted';
  }
}

/** One line describing a mutation, e.g. `create device demo-controller-0 (c3.small.x86, sv)`. */
export function describeMutation(m: Mutation): string {
  switch (m.kind) {
    case 'create-device':
      return `create device ${m.input.hostname} (${m.input.plan}, ${m.input.metro}, ${m.input.operating_system})`;
    case 'update-device':
      return `update device ${m.hostname} (tags)`;
    case 'delete-device':
      return `delete device ${m.hostname} (${m.deviceId})`;
    case 'delete-ip-reservation':
      return `delete IP reservation ${m.label} (${m.id})`;
  }
}
