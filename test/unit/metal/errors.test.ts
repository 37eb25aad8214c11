import { describe, expect, it } from 'vitest';
import { MetalApiError } from '../../../src/metal/index.js';
import { parseErrorBody } from '../../../src/metal/transport.js';
import { TOKEN, json, networkError, setup } from './fakes.js';

const input = {
  metro: 'da',
  plan: 'c3.small.x86',
  operating_system: 'flatcar_stable',
  hostname: 'h',
};

describe('error bodies', () => {
  it('reads {error}', async () => {
    const { client } = setup(() =>
      json(404, { error: 'Not found' }, { 'x-request-id': 'abc-123' }),
    );
    const err = (await client.getProject('p1').catch((e: unknown) => e)) as MetalApiError;
    expect(err).toBeInstanceOf(MetalApiError);
    expect(err.status).toBe(404);
    expect(err.errors).toEqual(['Not found']);
    expect(err.method).toBe('GET');
    expect(err.path).toBe('/projects/p1');
    expect(err.requestId).toBe('abc-123');
    expect(err.message).toBe('GET /projects/p1: 404 Not Found: Not found');
  });

  it('reads {errors[]}', async () => {
    const { client } = setup(() =>
      json(422, { errors: ['Plan is not available in metro', 'Hostname is invalid'] }),
    );
    const err = (await client.createDevice('p1', input).catch((e: unknown) => e)) as MetalApiError;
    expect(err.status).toBe(422);
    expect(err.errors).toEqual(['Plan is not available in metro', 'Hostname is invalid']);
    expect(err.message).toBe(
      'POST /projects/p1/devices: 422 Unprocessable Entity: Plan is not available in metro; Hostname is invalid',
    );
    expect(err.hasMessage('not available')).toBe(true);
    expect(err.hasMessage(/^hostname/i)).toBe(true);
    expect(err.hasMessage('already')).toBe(false);
  });

  it('describes a non-JSON body with its content type', async () => {
    const { client } = setup(
      () =>
        new Response('<html><body><h1>502 Bad Gateway</h1></body></html>', {
          status: 502,
          headers: { 'content-type': 'text/html' },
        }),
      { maxRetries: 0 },
    );
    const err = (await client.listMetros().catch((e: unknown) => e)) as MetalApiError;
    expect(err.status).toBe(502);
    expect(err.errors).toHaveLength(1);
    expect(err.errors[0]).toContain('non-JSON response (content-type text/html)');
    expect(err.errors[0]).toContain('502 Bad Gateway');
    expect(err.message).toMatch(/^GET \/locations\/metros: 502 Bad Gateway: non-JSON/);
  });

  it('parses edge cases', () => {
    expect(parseErrorBody('', 'application/json')).toEqual([]);
    expect(parseErrorBody('{}', 'application/json')).toEqual([]);
    expect(parseErrorBody('{"error":"a","errors":["a","b"]}', 'application/json')).toEqual([
      'a',
      'b',
    ]);
    expect(
      parseErrorBody(
        '{"statusCode":404,"error":"Not Found","message":"Route GET:/x not found"}',
        'application/json',
      ),
    ).toEqual(['Not Found', 'Route GET:/x not found']);
    expect(parseErrorBody('{broken', 'application/json')[0]).toContain('non-JSON');
    expect(parseErrorBody('{"error":"x"}', '')).toEqual(['x']);
    expect(parseErrorBody('oops', '')[0]).toBe('non-JSON response (content-type not set): oops');
  });

  it('treats a redirect as an error and does not follow it', async () => {
    const { client, requests } = setup(
      () => new Response(null, { status: 302, headers: { location: 'https://evil.example/x' } }),
    );
    const err = (await client.getDevice('d').catch((e: unknown) => e)) as MetalApiError;
    expect(err.status).toBe(302);
    expect(err.errors[0]).toBe('unexpected redirect to evil.example/x');
    expect(requests).toHaveLength(1);
  });

  it('rejects a list answer without its envelope key', async () => {
    const { client } = setup(() => json(200, { hello: 'world' }));
    await expect(client.listDevices('p1', { tag: 't' })).rejects.toThrow(/no "devices" list/);
  });
});

describe('token redaction', () => {
  it('never puts the token into logs or errors', async () => {
    const { client, lines, requests } = setup(
      [
        () => json(503, { error: `key ${TOKEN} is throttled` }),
        () => json(401, { errors: [`invalid token ${TOKEN}`] }),
      ],
      {},
    );
    const err = (await client.getProject('p1').catch((e: unknown) => e)) as MetalApiError;
    // the key is sent, as a header only
    expect(requests[0]!.headers['x-auth-token']).toBe(TOKEN);
    expect(requests[0]!.url.href).not.toContain(TOKEN);
    expect(err.status).toBe(401);
    const surfaces = [
      err.message,
      err.path,
      ...err.errors,
      JSON.stringify(err),
      String(err.stack),
      ...lines,
    ].join('\n');
    expect(lines.length).toBeGreaterThan(2);
    expect(surfaces).not.toContain(TOKEN);
    expect(surfaces).not.toContain(encodeURIComponent(TOKEN));
    expect(surfaces).toContain('[REDACTED]');
  });

  it('redacts the token from transport errors', async () => {
    const { client, lines } = setup(
      () => Promise.reject(networkError('ECONNRESET', `weird proxy error for ${TOKEN}`)),
      { maxRetries: 1 },
    );
    const err = (await client.listPlans().catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('[REDACTED]');
    expect(err.message).not.toContain(TOKEN);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it('rejects an unsendable token without echoing it', async () => {
    const bad = 'abc def\nghi';
    expect(() => setup(() => json(200, {}), { token: bad })).toThrow(/cannot be sent/);
    try {
      setup(() => json(200, {}), { token: bad });
    } catch (e) {
      expect((e as Error).message).not.toContain('abc def');
    }
  });

  it('logs one line per request and response', async () => {
    const { client, lines } = setup(() => json(200, { metros: [] }, { 'x-request-id': 'r1' }));
    await client.listMetros();
    expect(lines).toEqual([
      'metal: -> GET http://127.0.0.1:1234/metal/v1/locations/metros',
      expect.stringMatching(/^metal: <- 200 OK GET \/locations\/metros \(\d+ ms, request-id r1\)$/),
    ]);
  });
});
