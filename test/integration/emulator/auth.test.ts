import { describe, expect, it } from 'vitest';
import { FOREIGN_PROJECT_ID } from '../../../src/emulator/index.js';
import { deviceInput, useEmulator } from '../../harness/emulator.js';

describe('auth and errors', () => {
  const emu = useEmulator();

  it('answers 401 {error} without or with an unknown X-Auth-Token', async () => {
    const { api } = emu();
    const none = await api('GET', `/projects/${emu().projectId}`, undefined, { token: null });
    expect(none.status).toBe(401);
    expect(typeof none.body.error).toBe('string');
    const wrong = await api('GET', '/locations/metros', undefined, { token: 'not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'Invalid authentication token' });
    expect(wrong.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers 404 for unknown projects and 403 for the foreign one', async () => {
    const { api } = emu();
    const unknown = await api('GET', '/projects/3f1f6b1e-2b0c-4f5e-9d8a-1c2b3a4d5e6f/devices');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ errors: ['Not found'] });
    expect((await api('GET', '/projects/not-a-uuid')).status).toBe(404);
    const foreign = await api('POST', `/projects/${FOREIGN_PROJECT_ID}/devices`, deviceInput());
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors[0]).toMatch(/not authorized/);
    expect((await api('GET', `/projects/${FOREIGN_PROJECT_ID}/ips`)).status).toBe(403);
  });

  it('answers unknown paths with 404 errors and a request id', async () => {
    const { api } = emu();
    const r = await api('GET', '/no/such/thing');
    expect(r.status).toBe(404);
    expect(r.body.errors[0]).toMatch(/Not found/);
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives every answer its own X-Request-Id', async () => {
    const { api } = emu();
    const a = await api('GET', '/plans');
    const b = await api('GET', '/plans');
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});
