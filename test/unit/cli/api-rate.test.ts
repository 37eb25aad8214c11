/**
 * `--api-rate <requests-per-second>` and its fallback LOKO_API_RATE: the flag wins, then the env
 * variable, then 10; bad values are errors naming the flag or the variable.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli.js';
import type { GlobalOptions } from '../../../src/commands/shared/context.js';
import { apiRate, DEFAULT_API_RATE } from '../../../src/commands/shared/endpoint.js';
import { memoryStreams } from '../tasks/streams.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function run(args: string[], env: Record<string, string | undefined> = {}) {
  const streams = memoryStreams({ env });
  const code = await main(['node', 'loko', ...args], { streams, cwd: ROOT, exit: () => {} });
  return { code, stdout: streams.out(), stderr: streams.err() };
}

const globals = (apiRateFlag?: number): GlobalOptions => ({
  config: '.',
  var: [],
  varFile: [],
  apiRate: apiRateFlag,
  emulator: false,
  output: 'text',
  color: false,
  debug: false,
  yes: false,
});

describe('--api-rate', () => {
  it('is listed in --help with its env fallback', async () => {
    const r = await run(['--help']);
    expect(r.stdout).toContain('--api-rate <requests-per-second>');
    expect(r.stdout).toContain('LOKO_API_RATE');
  });

  it.each(['0', '-1', 'fast', '', 'Infinity'])('rejects %j naming the flag, exit 1', async (v) => {
    const r = await run(['--api-rate', v, 'cluster', 'plan', '-c', 'examples/quickstart']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--api-rate');
    expect(r.stderr).toContain('must be a positive number');
  });

  it('a bad LOKO_API_RATE is an error naming the variable, before any API call', async () => {
    const r = await run(['cluster', 'plan', '-c', 'examples/quickstart'], {
      LOKO_API_RATE: 'lots',
      METAL_API_URL: 'http://127.0.0.1:9/metal/v1',
      METAL_AUTH_TOKEN: 'secret',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('LOKO_API_RATE="lots" is not a positive number');
    expect(r.stderr).toContain('--api-rate');
  });

  it('precedence: flag, then LOKO_API_RATE, then 10', () => {
    expect(DEFAULT_API_RATE).toBe(10);
    expect(apiRate({ globals: globals(), env: {} })).toBe(10);
    expect(apiRate({ globals: globals(), env: { LOKO_API_RATE: '' } })).toBe(10);
    expect(apiRate({ globals: globals(), env: { LOKO_API_RATE: '2.5' } })).toBe(2.5);
    expect(apiRate({ globals: globals(40), env: { LOKO_API_RATE: '2.5' } })).toBe(40);
    // The flag wins even over a malformed variable.
    expect(apiRate({ globals: globals(3), env: { LOKO_API_RATE: 'x' } })).toBe(3);
    expect(() => apiRate({ globals: globals(), env: { LOKO_API_RATE: '0' } })).toThrow(
      /LOKO_API_RATE="0"/,
    );
  });
});
