/**
 * Plain GETs of API server paths that are not objects (`/readyz`, `/livez`, `/version`), with the
 * kubeconfig's TLS settings and credentials. The CA is always verified. Errors: no HTTP answer
 * becomes `KubeConnectionError`; any HTTP answer (also 4xx/5xx) resolves with its status, because
 * callers such as a wait for the API decide what a 403 or 503 means.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import https from 'node:https';
import { KubeConnectionError } from './errors.js';

/** An HTTP answer of the API server. */
export interface RawResponse {
  status: number;
  /** The body as text (at most 64 KiB kept). */
  body: string;
}

/** Options of {@link kubeGet}. */
export interface RawGetOptions {
  /** Give up on one request after this long (default 10 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const MAX_BODY = 64 * 1024;

/**
 * GET `path` (e.g. `/readyz?verbose`) from the current cluster of `kc`. Rejects with
 * `KubeConnectionError` (with `code` such as `ECONNREFUSED`, `ETIMEDOUT`, or a TLS code) when no
 * HTTP answer came back.
 */
export async function kubeGet(
  kc: KubeConfig,
  path: string,
  opts: RawGetOptions = {},
): Promise<RawResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const server = cluster.server;
  const url = new URL(path, server);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const options: https.RequestOptions = {
    method: 'GET',
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || 443,
    path: url.pathname + url.search,
    headers: { accept: 'application/json, text/plain' },
    timeout: timeoutMs,
  };
  await kc.applyToHTTPSOptions(options);
  return new Promise<RawResponse>((resolve, reject) => {
    const fail = (code: string | undefined, reason: string, cause?: unknown): void =>
      reject(new KubeConnectionError({ server, code, reason, cause }));
    const req = https.request({ ...options, signal: opts.signal }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_BODY) body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.slice(0, MAX_BODY) }));
      res.on('error', (err: NodeJS.ErrnoException) => fail(err.code, err.message, err));
    });
    req.on('timeout', () => {
      req.destroy();
      fail('ETIMEDOUT', `GET ${url.pathname}: no answer within ${Math.round(timeoutMs / 1000)}s`);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.name === 'AbortError') return reject(opts.signal?.reason ?? err);
      fail(err.code, err.message, err);
    });
    req.end();
  });
}
