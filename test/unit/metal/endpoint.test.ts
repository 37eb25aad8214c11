import { describe, expect, it } from 'vitest';
import { missingEndpointError, resolveMetalEndpoint } from '../../../src/metal/index.js';
import { LokoError } from '../../../src/util/errors.js';

const TOKEN = 'tok3n-VALUE-42';

function thrown(fn: () => unknown): LokoError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LokoError);
    return e as LokoError;
  }
  throw new Error('did not throw');
}

describe('resolveMetalEndpoint', () => {
  it('returns null when no URL is given', () => {
    expect(resolveMetalEndpoint({ env: { METAL_AUTH_TOKEN: TOKEN } })).toBeNull();
    expect(resolveMetalEndpoint({ apiUrlFlag: '', env: { METAL_API_URL: ' ' } })).toBeNull();
  });

  it('prefers the flag over METAL_API_URL and normalises', () => {
    expect(
      resolveMetalEndpoint({
        apiUrlFlag: 'http://127.0.0.1:1234/metal/v1/',
        env: { METAL_API_URL: 'https://api.equinix.com/metal/v1', METAL_AUTH_TOKEN: ` ${TOKEN}\n` },
      }),
    ).toEqual({ baseUrl: 'http://127.0.0.1:1234/metal/v1', token: TOKEN });
    expect(
      resolveMetalEndpoint({
        env: { METAL_API_URL: 'https://api.equinix.com/metal/v1', METAL_AUTH_TOKEN: TOKEN },
      }),
    ).toEqual({ baseUrl: 'https://api.equinix.com/metal/v1', token: TOKEN });
  });

  it('requires METAL_AUTH_TOKEN with a URL', () => {
    const e = thrown(() =>
      resolveMetalEndpoint({ env: { METAL_API_URL: 'https://api.equinix.com/metal/v1' } }),
    );
    expect(e.message).toContain('METAL_AUTH_TOKEN is not set');
    expect(e.message).toContain('METAL_API_URL');
    expect(e.hint).toContain('METAL_AUTH_TOKEN');
    const f = thrown(() =>
      resolveMetalEndpoint({
        apiUrlFlag: 'http://localhost:8080/metal/v1',
        env: { METAL_AUTH_TOKEN: '' },
      }),
    );
    expect(f.message).toContain('--api-url');
  });

  it('rejects a token that cannot be a header, without echoing it', () => {
    const e = thrown(() =>
      resolveMetalEndpoint({
        apiUrlFlag: 'http://localhost:8080/metal/v1',
        env: { METAL_AUTH_TOKEN: 'ab cd' },
      }),
    );
    expect(e.message).not.toContain('ab cd');
  });

  it('validates the URL', () => {
    const env = { METAL_AUTH_TOKEN: TOKEN };
    expect(thrown(() => resolveMetalEndpoint({ apiUrlFlag: 'not a url', env })).message).toMatch(
      /--api-url: .*not a valid URL/,
    );
    expect(
      thrown(() => resolveMetalEndpoint({ apiUrlFlag: 'ftp://h/metal/v1', env })).message,
    ).toMatch(/http/);
    const noPath = thrown(() => resolveMetalEndpoint({ apiUrlFlag: 'http://127.0.0.1:1234', env }));
    expect(noPath.message).toContain('does not end with /metal/v1');
    expect(noPath.hint).toContain('http://127.0.0.1:1234/metal/v1');
    expect(
      thrown(() => resolveMetalEndpoint({ apiUrlFlag: 'http://h/metal/v1?x=1', env })).message,
    ).toMatch(/query/);
    const cred = thrown(() =>
      resolveMetalEndpoint({ apiUrlFlag: `http://user:${TOKEN}@h/metal/v1`, env }),
    );
    expect(cred.message).not.toContain(TOKEN);
    expect(cred.message).toContain('credentials');
  });

  it('never echoes the token in any error', () => {
    const cases = [
      { apiUrlFlag: 'nope', env: { METAL_AUTH_TOKEN: TOKEN } },
      { apiUrlFlag: 'http://h/x', env: { METAL_AUTH_TOKEN: TOKEN } },
    ];
    for (const c of cases) {
      const e = thrown(() => resolveMetalEndpoint(c));
      expect(`${e.message} ${e.hint}`).not.toContain(TOKEN);
    }
  });
});

describe('missingEndpointError', () => {
  it('names all three ways', () => {
    const e = missingEndpointError();
    expect(e).toBeInstanceOf(LokoError);
    expect(e.message).toContain('--api-url');
    expect(e.message).toContain('METAL_API_URL');
    expect(e.message).toContain('--emulator');
  });
});
