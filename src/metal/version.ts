import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** loko's version from package.json (two levels up from both `src/metal` and `dist/metal`). */
export function lokoVersion(): string {
  if (cached === undefined) {
    try {
      const pkg = JSON.parse(
        readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
      ) as { name?: unknown; version?: unknown };
      cached = pkg.name === 'loko' && typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    } catch {
      cached = '0.0.0';
    }
  }
  return cached;
}
