import { describe, expect, it } from 'vitest';
import { deviceInput, useEmulator, withEmulator } from '../../harness/emulator.js';

describe('control API', () => {
  const emu = useEmulator();

  it('logs requests with route templates, supports ?since and a summary', async () => {
    const { api, control } = emu();
    await control.clearRequests();
    const since = await control.lastSeq();
    await api('GET', `/projects/${emu().projectId}`);
    await api('GET', `/projects/${emu().projectId}`);
    await api('GET', '/plans');
    const entries = await control.requests(since);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatchObject({
      method: 'GET',
      route: '/metal/v1/projects/:id',
      path: `/metal/v1/projects/${emu().projectId}`,
      status: 200,
    });
    expect(typeof entries[0]!.durationMs).toBe('number');
    expect(Date.parse(entries[0]!.at)).not.toBeNaN();
    expect(await control.requests(entries[1]!.seq)).toHaveLength(1);
    const summary = await control.summary();
    expect(summary.total).toBe(3);
    expect(summary.routes[0]).toEqual({
      method: 'GET',
      route: '/metal/v1/projects/:id',
      count: 2,
      statuses: { 200: 2 },
    });
    const samples = await control.responses();
    expect(samples.find((s) => s.route === '/metal/v1/plans')?.body).toHaveProperty('plans');
    await control.clearRequests();
    expect(await control.requests()).toEqual([]);
  });

  it('injects 429s with Retry-After and X-RateLimit-* headers, for `times` requests', async () => {
    const { api, control } = emu();
    await control.addFault({
      route: '/metal/v1/plans',
      status: 429,
      times: 2,
      retryAfterSeconds: 7,
    });
    const r1 = await api('GET', '/plans');
    expect(r1.status).toBe(429);
    expect(r1.headers.get('retry-after')).toBe('7');
    expect(r1.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(r1.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(r1.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(r1.body.errors).toHaveLength(1);
    expect((await api('GET', '/plans')).status).toBe(429);
    expect((await api('GET', '/plans')).status).toBe(200);
    const log = await control.requests();
    expect(log.filter((e) => e.status === 429).every((e) => e.retryAfter === 7)).toBe(true);
  });

  it('injects 5xx by method and path prefix, and clears faults', async () => {
    const { api, control } = emu();
    await control.addFault({ method: 'GET', pathPrefix: '/locations', status: 503, times: 5 });
    expect((await api('GET', '/locations/metros')).status).toBe(503);
    expect((await api('GET', '/plans')).status).toBe(200);
    await control.addFault({ method: 'POST', route: '/projects/:id/devices', status: 500 });
    const r = await api('POST', `/projects/${emu().projectId}/devices`, {});
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toMatch(/Oh snap/);
    expect((await control.faults()).length).toBe(1);
    await control.clearFaults();
    expect((await api('GET', '/locations/metros')).status).toBe(200);
  });

  it('adds latency and resets connections', async () => {
    const { api, control } = emu();
    await control.addFault({ route: '/plans', latencyMs: 300 });
    const t0 = Date.now();
    expect((await api('GET', '/plans')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    await control.addFault({ route: '/plans', reset: true });
    await expect(api('GET', '/plans')).rejects.toThrow();
    expect((await api('GET', '/plans')).status).toBe(200);
    const reset = (await control.requests()).find((e) => e.status === 0);
    expect(reset?.route).toBe('/metal/v1/plans');
  });

  it('a request held by latency is done and logged even when its client has gone away', async () => {
    const { control, url, token, projectId } = emu();
    await control.addFault({ method: 'POST', route: '/projects/:id/devices', latencyMs: 300 });
    const since = await control.lastSeq();
    const gone = new AbortController();
    const sent = fetch(`${url}/projects/${projectId}/devices`, {
      method: 'POST',
      signal: gone.signal,
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify(deviceInput({ hostname: 'held-then-orphaned' })),
    });
    while ((await control.faults()).length > 0) await new Promise((r) => setTimeout(r, 10));
    gone.abort();
    await expect(sent).rejects.toThrow();
    let created: Array<{ method: string; status: number }> = [];
    for (let i = 0; i < 100 && created.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      created = (await control.requests(since)).filter((e) => e.method === 'POST');
    }
    expect(created).toEqual([expect.objectContaining({ status: 201 })]);
    const list = await emu().api(
      'GET',
      `/projects/${projectId}/devices?hostname=held-then-orphaned`,
    );
    expect(list.body.devices.map((d: { hostname: string }) => d.hostname)).toContain(
      'held-then-orphaned',
    );
  });

  it('rejects malformed fault rules with 400', async () => {
    const res = await fetch(`${emu().controlUrl}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': emu().token },
      body: JSON.stringify({ status: 418 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/status must be one of/);
  });

  it('controls the clock', async () => {
    const { control } = emu();
    const before = await control.clock();
    const after = await control.advanceClock(3600);
    expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(3600_000);
    expect((await control.setTimeScale(50)).timeScale).toBe(50);
    expect((await control.setTimeScale(1)).timeScale).toBe(1);
  });

  it('dumps the state without the token', async () => {
    const dump = (await emu().control.state()) as { state: { token: string; projects: unknown[] } };
    expect(dump.state.token).toBe('<redacted>');
    expect(JSON.stringify(dump)).not.toContain(emu().token);
    expect(dump.state.projects.length).toBe(2);
  });

  it('wants the emulator token on every control route', async () => {
    for (const [method, route] of [
      ['GET', '/health'],
      ['GET', '/state'],
      ['GET', '/responses'],
      ['GET', '/requests/summary'],
      ['POST', '/clock'],
      ['DELETE', '/faults'],
    ] as const) {
      for (const token of [undefined, 'not-the-token']) {
        const res = await fetch(`${emu().controlUrl}${route}`, {
          method,
          headers: {
            ...(token ? { 'x-auth-token': token } : {}),
            ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          },
          ...(method === 'POST' ? { body: JSON.stringify({ advanceSeconds: 1 }) } : {}),
        });
        expect(res.status, `${method} ${route} with ${token ?? 'no token'}`).toBe(401);
        expect(((await res.json()) as { error: string }).error).toMatch(/X-Auth-Token|token/);
      }
    }
    const ok = await fetch(`${emu().controlUrl}/health`, {
      headers: { 'x-auth-token': emu().token },
    });
    expect(ok.status).toBe(200);
  });

  it('redacts userdata and root passwords in the state dump and the response samples', async () => {
    const { api, control, projectId } = emu();
    const secret = '#cloud-config\nwrite_files: [{path: /etc/kubernetes/pki/ca.key}]';
    const created = await api(
      'POST',
      `/projects/${projectId}/devices`,
      deviceInput({ hostname: 'secret-holder', userdata: secret }),
    );
    expect(created.status).toBe(201);
    await control.advanceClock(3600); // active: the device now shows a root_password
    const device = await api('GET', `/devices/${created.body.id}`);
    const password = device.body.root_password as string;
    expect(password).toBeTruthy();
    expect((await api('GET', `/devices/${created.body.id}/userdata`)).body.userdata).toBe(secret);

    const dump = JSON.stringify(await control.state());
    const samples = await control.responses();
    for (const text of [dump, JSON.stringify(samples)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(password);
    }
    const stateDevice = (
      (await control.state()) as {
        state: { devices: Array<{ hostname: string; userdata: string; rootPassword: string }> };
      }
    ).state.devices.find((d) => d.hostname === 'secret-holder')!;
    expect(stateDevice).toMatchObject({ userdata: '<redacted>', rootPassword: '<redacted>' });
    const sample = samples.find(
      (s) => s.method === 'GET' && s.route === '/metal/v1/devices/:id' && s.status === 200,
    )!.body as { userdata: string; root_password: string };
    expect(sample).toMatchObject({ userdata: '<redacted>', root_password: '<redacted>' });
    const userdataSample = samples.find((s) => s.route === '/metal/v1/devices/:id/userdata')!
      .body as { userdata: string };
    expect(userdataSample.userdata).toBe('<redacted>');
  });
});

describe('rate limit', () => {
  it('answers 429 + Retry-After beyond the cap and recovers', async () => {
    await withEmulator(
      async ({ api, control }) => {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) statuses.push((await api('GET', '/plans')).status);
        expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
        expect(statuses).toContain(429);
        const limited = await api('GET', '/plans');
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
        await control.setRateLimit(null);
        expect((await api('GET', '/plans')).status).toBe(200);
        await control.setRateLimit(1000);
        const ok = await api('GET', '/plans');
        expect(ok.headers.get('x-ratelimit-limit')).toBe('1000');
      },
      { rateLimitPerSecond: 3 },
    );
  });
});
