/**
 * The one chokepoint for mutations (aesthetics "absorb" 3): every write to the Metal API that
 * plan/apply/destroy perform goes through {@link Executor.execute} as a typed {@link Mutation}.
 * In dry-run mode it records instead of calling, so a dry run lists exactly what apply would do.
 */
import type { MetalApi } from '../../metal/api.js';
import type {
  Device,
  DeviceCreateInput,
  DeviceUpdateInput,
  IPAssignment,
  IPReservation,
} from '../../metal/types.js';
import type { AuthToken } from '../../metal/api-keys.js';
import {
  describeApiKeyMutation,
  dryRunApiKeyResult,
  performApiKeyMutation,
  type ApiKeyExecutor,
  type ApiKeyMutation,
  type ApiKeyMutationResult,
} from './api-key.js';
import { isUncertain, isUnprocessable } from './api-errors.js';
import { describeTagIPMutation, type TagIPMutation } from './endpoint.js';
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

/**
 * POST /projects/{projectId}/ips: a `public_ipv4` /32 in `metro` carrying `tags` (the control-plane
 * Elastic IP). After an uncertain answer the project's reservations are re-listed and one with
 * all of `tags` is adopted, so the endpoint is never reserved twice.
 */
export interface ReserveIPMutation {
  kind: 'reserve-ip';
  projectId: string;
  metro: string;
  tags: string[];
  /** `details` of the reservation, e.g. `loko: control-plane endpoint of cluster demo`. */
  details: string;
}

/**
 * POST /devices/{deviceId}/ips `{address}`: assigns an Elastic IP. An address the device already
 * has (after an uncertain answer or a 422 "already assigned") counts as done.
 */
export interface AssignIPMutation {
  kind: 'assign-ip';
  deviceId: string;
  hostname: string;
  /** `<ip>/32`. */
  address: string;
}

/** DELETE /ips/{id} of an assignment (un-assigns the address); 404 resolves `'absent'`. */
export interface UnassignIPMutation {
  kind: 'unassign-ip';
  id: string;
  /** The device it is removed from (hostname or id), for messages. */
  from: string;
}

export type Mutation =
  | CreateDeviceMutation
  | UpdateDeviceMutation
  | DeleteDeviceMutation
  | DeleteIPReservationMutation
  | ReserveIPMutation
  | AssignIPMutation
  | UnassignIPMutation
  | TagIPMutation
  | ApiKeyMutation;

/** What {@link Executor.execute} resolves for each mutation kind. */
export type MutationResult<M extends Mutation> = M extends
  CreateDeviceMutation | UpdateDeviceMutation
  ? Device
  : M extends ReserveIPMutation | TagIPMutation
    ? IPReservation
    : M extends AssignIPMutation
      ? IPAssignment
      : M extends { kind: 'create-api-key' }
        ? AuthToken
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

  async function perform(
    m: Mutation,
  ): Promise<Device | IPReservation | IPAssignment | AuthToken | 'deleted' | 'absent'> {
    switch (m.kind) {
      case 'tag-ip':
        // The whole list, so resending after an uncertain answer is harmless (idempotent).
        return api.updateIPTags(m.id, m.tags);
      case 'create-api-key':
      case 'delete-api-key':
        return performApiKeyMutation(api, m, {
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(opts.createRetries !== undefined ? { createRetries: opts.createRetries } : {}),
          debug,
        });
      case 'create-device':
        return createDevice(m);
      case 'update-device':
        return api.updateDevice(m.deviceId, m.input);
      case 'delete-device':
        return api.deleteDevice(m.deviceId);
      case 'delete-ip-reservation':
      case 'unassign-ip':
        return api.deleteIP(m.id);
      case 'reserve-ip':
        return reserveIP(m);
      case 'assign-ip':
        return assignIP(m);
    }
  }

  /** Like a device create: never resent blindly; an uncertain answer is settled by re-listing. */
  async function reserveIP(m: ReserveIPMutation): Promise<IPReservation> {
    const attempts = 1 + (opts.createRetries ?? 1);
    for (let attempt = 1; ; attempt++) {
      try {
        return await api.createIPReservation(m.projectId, {
          type: 'public_ipv4',
          quantity: 1,
          metro: m.metro,
          tags: m.tags,
          details: m.details,
          // A reservation pending approval cannot be assigned: fail instead of waiting on a human.
          fail_on_approval_required: true,
        });
      } catch (err) {
        if (!isUncertain(err)) throw err;
        debug(`reserve IP ${m.tags.join(',')}: uncertain answer (${String(err)}); re-listing`);
        const found = (await api.listIPReservations(m.projectId, { types: ['public_ipv4'] })).find(
          (r) => m.tags.every((t) => r.tags?.includes(t)),
        );
        if (found) {
          debug(`reserve IP: adopted ${found.id} found by re-listing`);
          return found;
        }
        if (attempt >= attempts) throw err;
        throwIfAborted(opts.signal);
      }
    }
  }

  async function assignIP(m: AssignIPMutation): Promise<IPAssignment> {
    const address = m.address.split('/')[0];
    const settled = async (): Promise<IPAssignment | undefined> =>
      (await api.listDeviceIPs(m.deviceId)).find((a) => a.address === address && !a.management);
    try {
      return await api.assignIP(m.deviceId, m.address);
    } catch (err) {
      if (!isUncertain(err) && !isUnprocessable(err)) throw err;
      // After an uncertain answer the assignment may exist; a 422 may say it already does.
      const found = await settled();
      if (found) {
        debug(`assign ${m.address} to ${m.hostname}: already assigned (${found.id})`);
        return found;
      }
      throw err;
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

/**
 * `e` seen as an {@link ApiKeyExecutor} (same calls, same journal): the API-key code is typed
 * against that narrower contract.
 */
export function apiKeyExecutor(e: Executor): ApiKeyExecutor {
  return {
    get dryRun() {
      return e.dryRun;
    },
    execute: (<M extends ApiKeyMutation>(m: M) =>
      e.execute(m) as Promise<unknown> as Promise<
        ApiKeyMutationResult<M>
      >) as ApiKeyExecutor['execute'],
  };
}

/** The address a dry run reports for an Elastic IP it did not reserve (never sent anywhere). */
export const DRY_RUN_ADDRESS = '192.0.2.1';

/** A plausible answer for a recorded mutation, so callers need no dry-run branches. */
function dryRunResult(m: Mutation): Device | IPReservation | IPAssignment | AuthToken | 'deleted' {
  switch (m.kind) {
    case 'create-api-key':
    case 'delete-api-key':
      return dryRunApiKeyResult(m) as AuthToken | 'deleted';
    case 'tag-ip':
      return {
        id: m.id,
        type: 'public_ipv4',
        address_family: 4,
        address: m.label.split('/')[0]!,
        network: m.label.split('/')[0]!,
        cidr: 32,
        public: true,
        management: false,
        tags: m.tags,
      };
    case 'reserve-ip':
      return {
        id: 'dry-run:control-plane-endpoint',
        type: 'public_ipv4',
        address_family: 4,
        address: DRY_RUN_ADDRESS,
        network: DRY_RUN_ADDRESS,
        cidr: 32,
        public: true,
        management: false,
        state: 'created',
        tags: m.tags,
      };
    case 'assign-ip':
      return {
        id: `dry-run:assignment:${m.hostname}`,
        address: m.address.split('/')[0]!,
        address_family: 4,
        network: m.address.split('/')[0]!,
        cidr: 32,
        public: true,
        management: false,
      };
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
    // No address in these two: a plan cannot know the address a new reservation gets, and a
    // plan's descriptions equal those of the apply that follows.
    case 'reserve-ip':
      return `reserve the control-plane Elastic IP (public_ipv4 /32 in ${m.metro})`;
    case 'assign-ip':
      return `assign the control-plane Elastic IP to ${m.hostname}`;
    case 'unassign-ip':
      return `unassign the control-plane Elastic IP from ${m.from}`;
    case 'tag-ip':
      return describeTagIPMutation(m);
    case 'create-api-key':
    case 'delete-api-key':
      return describeApiKeyMutation(m);
  }
}
