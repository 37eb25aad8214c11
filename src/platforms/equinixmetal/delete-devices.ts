/**
 * Deleting devices so that it converges: 404 is done, a device still provisioning (Metal answers
 * 422) is deleted once it is active or failed, and progress is read by listing by tag per round.
 */
import pLimit from 'p-limit';
import type { Device } from '../../metal/types.js';
import { InterruptedError } from '../../util/errors.js';
import { isUnprocessable } from './api-errors.js';
import type { Executor } from './executor.js';
import { observe } from './observe.js';
import { pollUntil } from './poll.js';
import type { WaitTarget } from './wait.js';

/** A device to delete, with the state last seen. */
export interface DeleteTarget {
  deviceId: string;
  hostname: string;
  state: string;
  /** Metal's `locked` flag: a locked device cannot be deleted until it is unlocked. */
  locked?: boolean;
  /** Why the delete was given up (set on a returned leftover), e.g. the API's message. */
  error?: string;
}

/** How to unlock a device, for messages. */
export function unlockFix(deviceId: string): string {
  return `unlock it (\`PUT /metal/v1/devices/${deviceId}\` with {"locked": false}, or "Unlock" in the Equinix Metal console) and run the command again`;
}

/** True when a 422 (or the device) says the device is locked. */
function lockedRefusal(x: DeleteTarget, err: unknown): boolean {
  return x.locked === true || /\block(ed)?\b/i.test(String((err as Error)?.message ?? ''));
}

/**
 * When a delete counts as finished: the API accepted it (`requested`), the device is at least
 * `deprovisioning`, or it is no longer listed (`gone`).
 */
export type DeleteUntil = 'requested' | 'deprovisioning' | 'gone';

/** States in which Metal refuses DELETE with 422 until the device settles. */
const BUSY = new Set(['queued', 'provisioning', 'reinstalling']);

/**
 * Deletes `targets` through `executor` with at most `parallelism` calls in flight. Resolves the
 * targets still not finished when the poll budget ran out, plus those refused for good (a 422 for
 * a locked or not-busy device: `error` says why, the item is marked failed); empty when all are
 * done. With `keepOpen` a finished delete leaves its item running (the caller continues it). A 422 is retried only while the device is queued/provisioning/reinstalling. In dry-run
 * it records one delete per target and does not wait. Rejects with InterruptedError on cancel
 * (after in-flight calls finish) or with the first unexpected API error.
 */
export async function deleteDevices(
  t: WaitTarget & { executor: Executor; parallelism: number },
  targets: DeleteTarget[],
  until: DeleteUntil,
  opts: { keepOpen?: boolean } = {},
): Promise<DeleteTarget[]> {
  if (targets.length === 0) return [];
  const limit = pLimit(Math.max(1, t.parallelism));
  const requested = new Set<string>();
  const finished = new Set<string>();
  let current = new Map<string, DeleteTarget>(targets.map((x) => [x.deviceId, { ...x }]));

  if (t.executor.dryRun) {
    await settleAll(
      targets.map((x) =>
        limit(() =>
          t.executor.execute({ kind: 'delete-device', deviceId: x.deviceId, hostname: x.hostname }),
        ),
      ),
    );
    return [];
  }

  const refused = new Map<string, DeleteTarget>();
  const finish = (x: DeleteTarget, detail: string): void => {
    finished.add(x.deviceId);
    // keepOpen: more work follows on this item (a replacement's create), so it stays running.
    if (opts.keepOpen) t.progress.item(x.hostname, 'running', `old device ${detail}`);
    else t.progress.item(x.hostname, 'done', detail);
  };

  const round = async (n: number): Promise<DeleteTarget[] | undefined> => {
    if (n > 0) {
      const listed = new Map<string, Device>(
        (await observe(t.api, t.projectId, t.tag)).devices.map((d) => [d.id, d]),
      );
      const next = new Map<string, DeleteTarget>();
      for (const [id, x] of current) {
        if (finished.has(id)) continue;
        const d = listed.get(id);
        if (!d) {
          finish(x, 'gone');
          continue;
        }
        next.set(id, { ...x, state: d.state, locked: d.locked ?? x.locked });
      }
      current = next;
    }

    const jobs: Array<Promise<void>> = [];
    for (const x of current.values()) {
      if (finished.has(x.deviceId)) continue;
      if (requested.has(x.deviceId)) {
        if (until === 'deprovisioning' && (x.state === 'deprovisioning' || x.state === 'deleted'))
          finish(x, x.state);
        else
          t.progress.item(
            x.hostname,
            'running',
            x.state === 'deprovisioning' ? 'deprovisioning' : 'deleting',
          );
        continue;
      }
      if (x.state === 'deprovisioning' || x.state === 'deleted') {
        // Someone (a previous run) already deleted it.
        requested.add(x.deviceId);
        if (until !== 'gone') finish(x, x.state);
        continue;
      }
      if (BUSY.has(x.state)) {
        t.progress.item(x.hostname, 'running', `${x.state}; deleting once it settles`);
        continue;
      }
      jobs.push(
        limit(async () => {
          t.progress.item(x.hostname, 'running', 'deleting');
          try {
            const r = await t.executor.execute({
              kind: 'delete-device',
              deviceId: x.deviceId,
              hostname: x.hostname,
            });
            requested.add(x.deviceId);
            if (r === 'absent') finish(x, 'gone');
            else if (until === 'requested') finish(x, 'deleted');
            else t.progress.item(x.hostname, 'running', 'deprovisioning');
          } catch (err) {
            if (!isUnprocessable(err)) throw err;
            // 422 for a locked device (or any 422 while the device is not busy): retrying cannot
            // help, so give up on this device now with the API's message.
            if (lockedRefusal(x, err) || !BUSY.has(x.state)) {
              const locked = lockedRefusal(x, err);
              const message = String((err as Error).message);
              const detail = locked
                ? `locked: ${message}; ${unlockFix(x.deviceId)}`
                : `refused: ${message}`;
              finished.add(x.deviceId);
              refused.set(x.deviceId, { ...x, locked, error: detail });
              t.progress.item(x.hostname, 'failed', detail);
              return;
            }
            // 422 while provisioning/queued: Metal still considers it busy; retry after the next listing.
            t.progress.item(x.hostname, 'running', 'busy; retrying delete');
          }
        }),
      );
    }
    await settleAll(jobs);
    const left = [...current.values()].filter((x) => !finished.has(x.deviceId));
    return left.length === 0 ? [...refused.values()] : undefined;
  };

  let leftovers: DeleteTarget[] = [];
  try {
    return await pollUntil(t.poll, round, () => {
      leftovers = [
        ...refused.values(),
        ...[...current.values()].filter((x) => !finished.has(x.deviceId)),
      ];
      return new DeleteTimeout();
    });
  } catch (err) {
    if (err instanceof DeleteTimeout) return leftovers;
    throw err;
  }
}

/** Internal marker: the delete budget ran out; the caller reports the leftovers. */
class DeleteTimeout extends Error {}

/**
 * Waits for every promise (so in-flight API calls finish even when one fails or the run is
 * interrupted), then rethrows: the first real error, else InterruptedError if any was interrupted.
 */
export async function settleAll<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const errors = results
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => r.reason as unknown);
  const real = errors.find((e) => !(e instanceof InterruptedError));
  if (real !== undefined) throw real;
  if (errors.length > 0) throw errors[0];
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}
