/**
 * Retry of known transient API failures, and only those: an admission or conversion webhook whose
 * backend is not up yet ("connection refused", "no endpoints available for service", ...). This
 * happens right after a component's webhook configuration is applied and before its pods are
 * ready. Every other error is thrown at once.
 */
import { KubeApiError, WebhookUnavailableError } from './errors.js';
import { sleep } from './wait.js';

/** Endings of a webhook call failure that mean "its backend is not (yet) reachable". */
const UNREACHABLE =
  /connection refused|no endpoints available for service|connection reset by peer|i\/o timeout|context deadline exceeded|no route to host/i;

/**
 * When `err` is a transient webhook failure, the name of the webhook (admission webhooks) or of
 * the resource whose conversion webhook failed; otherwise `undefined`.
 */
export function transientWebhook(err: unknown): string | undefined {
  if (!(err instanceof KubeApiError) || err.status < 500) return undefined;
  const msg = err.apiMessage;
  if (!UNREACHABLE.test(msg)) return undefined;
  const admission = /failed calling webhook "([^"]+)"/.exec(msg);
  if (admission) return admission[1];
  const conversion = /conversion webhook for (.+?) failed/.exec(msg);
  if (conversion) return `conversion webhook for ${conversion[1]}`;
  return undefined;
}

/** Options of `retryTransient`. */
export interface RetryOptions {
  /** Retry budget in milliseconds (default 120 s). */
  timeoutMs?: number;
  /** First pause (default 500 ms), growing by half up to 5 s. */
  intervalMs?: number;
  signal?: AbortSignal | undefined;
  /** Called before each retry (progress reporting; the layer itself never prints). */
  onRetry?: (webhook: string, err: KubeApiError) => void;
}

/**
 * Runs `fn`, retrying while it fails with a transient webhook failure. When the budget runs out,
 * throws `WebhookUnavailableError` naming the webhook.
 */
export async function retryTransient<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const started = Date.now();
  let interval = opts.intervalMs ?? 500;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      const webhook = transientWebhook(err);
      if (webhook === undefined) throw err;
      const e = err as KubeApiError;
      const waited = Date.now() - started;
      if (waited + interval > timeoutMs) {
        throw new WebhookUnavailableError({
          status: e.status,
          reason: e.reason,
          message: e.apiMessage,
          kind: e.kind,
          name: e.objectName,
          namespace: e.namespace,
          causes: e.causes,
          verb: e.verb,
          webhook,
          waitedMs: waited,
          cause: err,
        });
      }
      opts.onRetry?.(webhook, e);
      await sleep(interval, opts.signal);
      interval = Math.min(interval * 1.5, 5000);
    }
  }
}
