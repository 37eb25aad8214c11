/**
 * A small HTTPS client for the twin's own kube-apiserver: JSON requests with a client certificate
 * (the twin's admin identity), a bearer token (a joining node's bootstrap token) or nothing
 * (anonymous discovery). Only ever pointed at a loopback address.
 */
import { Agent, request } from 'node:https';

/** An answer of the apiserver (body parsed when JSON). */
export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** How a request authenticates and which server certificate it trusts. */
export interface KubeAuth {
  /** CA to verify the server with; absent = do not verify (kubeadm's first discovery fetch). */
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  bearerToken?: string;
}

/** Thrown when the apiserver cannot be reached or answers with an unexpected status. */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A client of one apiserver (`https://<host>:<port>`). */
export class KubeApi {
  private readonly agent: Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly auth: KubeAuth,
    private readonly timeoutMs = 15_000,
  ) {
    if (!/^127\.\d+\.\d+\.\d+$/.test(host)) {
      throw new Error(`the twin only talks to loopback apiservers, not ${host}`);
    }
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 8,
      ...(auth.caPem ? { ca: auth.caPem } : { rejectUnauthorized: false }),
      ...(auth.certPem ? { cert: auth.certPem, key: auth.keyPem } : {}),
    });
  }

  /** The same server with other credentials. */
  as(auth: KubeAuth): KubeApi {
    return new KubeApi(this.host, this.port, auth, this.timeoutMs);
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  /** One request; resolves with any HTTP status, rejects on a transport error. */
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<KubeResponse<T>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    if (this.auth.bearerToken) headers.authorization = `Bearer ${this.auth.bearerToken}`;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          headers,
          agent: this.agent,
          timeout: this.timeoutMs,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              /* plain text (e.g. /readyz) */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, text });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timeout after ${this.timeoutMs} ms`)));
      req.on('error', (err) => reject(new KubeApiError(`${method} ${path}: ${err.message}`)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** GET; undefined on 404. */
  async get<T = Record<string, unknown>>(path: string): Promise<T | undefined> {
    const r = await this.request<T>('GET', path);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw failure('GET', path, r);
    return r.body;
  }

  /** Server-side apply (field manager `manager`, forced: the twin owns what it applies). */
  async apply(path: string, obj: unknown, manager: string): Promise<Record<string, unknown>> {
    const q = `?fieldManager=${encodeURIComponent(manager)}&force=true`;
    const r = await this.request<Record<string, unknown>>(
      'PATCH',
      path + q,
      obj,
      'application/apply-patch+yaml',
    );
    if (r.status !== 200 && r.status !== 201) throw failure('PATCH', path, r);
    return r.body;
  }

  /** POST; resolves with the status (201, or 409 when it exists). */
  async create(path: string, obj: unknown): Promise<number> {
    const r = await this.request('POST', path, obj);
    if (r.status !== 201 && r.status !== 409) throw failure('POST', path, r);
    return r.status;
  }

  /** Merge patch (`application/merge-patch+json`). */
  async mergePatch(path: string, patch: unknown): Promise<Record<string, unknown>> {
    const r = await this.request<Record<string, unknown>>(
      'PATCH',
      path,
      patch,
      'application/merge-patch+json',
    );
    if (r.status !== 200) throw failure('PATCH', path, r);
    return r.body;
  }

  /**
   * JSON patch (`application/json-patch+json`) recorded under field manager `manager` (an Update
   * in managedFields: the manager owns exactly the fields it changed). Resolves false when a
   * `test` operation fails (422) or the object is gone (404): the caller looks again next round.
   */
  async jsonPatch(path: string, ops: unknown[], manager: string): Promise<boolean> {
    const q = `?fieldManager=${encodeURIComponent(manager)}`;
    const r = await this.request('PATCH', path + q, ops, 'application/json-patch+json');
    if (r.status === 404 || r.status === 422 || r.status === 409) return false;
    if (r.status !== 200) throw failure('PATCH', path, r);
    return true;
  }

  /** PUT (an update with resourceVersion); resolves false on a 409 conflict. */
  async replace(path: string, obj: unknown): Promise<boolean> {
    const r = await this.request('PUT', path, obj);
    if (r.status === 409) return false;
    if (r.status !== 200) throw failure('PUT', path, r);
    return true;
  }

  /** DELETE; true when something was deleted, false on 404. */
  async delete(path: string): Promise<boolean> {
    const r = await this.request('DELETE', path);
    if (r.status === 404) return false;
    if (r.status !== 200 && r.status !== 202) throw failure('DELETE', path, r);
    return true;
  }
}

function failure(method: string, path: string, r: KubeResponse): KubeApiError {
  const msg =
    typeof r.body === 'object' && r.body !== null && 'message' in r.body
      ? String((r.body as { message: unknown }).message)
      : r.text.slice(0, 300);
  return new KubeApiError(`${method} ${path.split('?')[0]}: HTTP ${r.status}: ${msg}`, r.status);
}
