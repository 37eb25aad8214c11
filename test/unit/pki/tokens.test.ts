import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_TOKEN_PATTERN,
  BootstrapToken,
  DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS,
  generateCertificateKey,
  goDuration,
  PkiError,
  Secret,
} from '../../../src/pki/index.js';

describe('BootstrapToken', () => {
  it('generates [a-z0-9]{6}.[a-z0-9]{16} tokens that differ every time', () => {
    const tokens = Array.from({ length: 200 }, () => BootstrapToken.generate().reveal());
    for (const t of tokens) expect(t).toMatch(BOOTSTRAP_TOKEN_PATTERN);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('uses every character of the alphabet (not a biased or truncated one)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      for (const c of BootstrapToken.generate().reveal().replace('.', '')) seen.add(c);
    }
    expect([...seen].sort().join('')).toBe('0123456789abcdefghijklmnopqrstuvwxyz');
  });

  it('has a default TTL of 4 h, written as a Go duration', () => {
    const t = BootstrapToken.generate();
    expect(t.ttlSeconds).toBe(DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS);
    expect(t.ttl).toBe('4h0m0s');
    expect(BootstrapToken.generate(90 * 60).ttl).toBe('1h30m0s');
  });

  it('refuses a TTL that would never expire or is not whole seconds', () => {
    expect(() => BootstrapToken.generate(0)).toThrow(PkiError);
    expect(() => BootstrapToken.generate(-5)).toThrow(PkiError);
    expect(() => BootstrapToken.generate(1.5)).toThrow(PkiError);
  });

  it('never prints its secret half: String, template, JSON, inspect', () => {
    const t = BootstrapToken.generate();
    const secret = t.reveal().split('.')[1]!;
    const renderings = [
      String(t),
      `${t}`,
      JSON.stringify({ t }),
      inspect(t),
      inspect({ nested: { t } }, { depth: 5 }),
    ];
    for (const r of renderings) {
      expect(r).not.toContain(secret);
      expect(r).toContain(t.id);
    }
  });

  it('parses a valid token and rejects a malformed one without echoing it', () => {
    const t = BootstrapToken.parse('abcdef.0123456789abcdef', 600);
    expect(t.id).toBe('abcdef');
    expect(t.reveal()).toBe('abcdef.0123456789abcdef');
    expect(t.ttl).toBe('10m0s');
    for (const bad of [
      'ABCDEF.0123456789abcdef',
      'abcdef.0123456789abcde',
      'abcdef0123456789abcdef',
    ]) {
      let err: unknown;
      try {
        BootstrapToken.parse(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(PkiError);
      expect((err as Error).message).not.toContain(bad);
    }
  });
});

describe('generateCertificateKey', () => {
  it('is 32 random bytes in hex, redacted when printed', () => {
    const a = generateCertificateKey();
    const b = generateCertificateKey();
    expect(a.reveal()).toMatch(/^[0-9a-f]{64}$/);
    expect(a.reveal()).not.toBe(b.reveal());
    expect(String(a)).toBe('[redacted]');
    expect(inspect(a)).not.toContain(a.reveal());
  });
});

describe('Secret', () => {
  it('redacts in every common rendering and compares in constant time', () => {
    const s = new Secret('-----BEGIN PRIVATE KEY-----\nxyz\n-----END PRIVATE KEY-----\n');
    expect(`${s}`).toBe('[redacted]');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(inspect({ s })).not.toContain('PRIVATE');
    expect(s.equals(new Secret(s.reveal()))).toBe(true);
    expect(s.equals(new Secret('other'))).toBe(false);
  });
});

describe('goDuration', () => {
  it('prints like Go time.Duration.String()', () => {
    expect(goDuration(0)).toBe('0s');
    expect(goDuration(45)).toBe('45s');
    expect(goDuration(60)).toBe('1m0s');
    expect(goDuration(3600)).toBe('1h0m0s');
    expect(goDuration(24 * 3600 + 61)).toBe('24h1m1s');
    expect(() => goDuration(-1)).toThrow(PkiError);
  });
});
