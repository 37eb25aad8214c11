/** loko's version, read once from package.json (one level up from both `src/` and `dist/`). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The `version` of loko's package.json, or `0.0.0` when it cannot be read. */
export function version(): string {
  if (cached === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        version?: unknown;
      };
      cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    } catch {
      cached = '0.0.0';
    }
  }
  return cached;
}
