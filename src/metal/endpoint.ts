/**
 * Where the Metal API is and which key to use: `--api-url` (flag) over `METAL_API_URL`, plus
 * `METAL_AUTH_TOKEN`. Commands handle `--emulator` themselves (they start or find the emulator
 * and build the endpoint from it).
 */
import { LokoError } from '../util/errors.js';

export interface MetalEndpoint {
  /** Normalised: no trailing slash, no query. */
  baseUrl: string;
  token: string;
}

const TOKEN_HINT =
  'Export METAL_AUTH_TOKEN with a user or project API key (for the emulator, the token it prints on start).';

/**
 * Resolves the endpoint from the `--api-url` flag or `METAL_API_URL`, and `METAL_AUTH_TOKEN`.
 * Returns `null` when no URL is given (the caller may then use `--emulator`, or throw
 * `missingEndpointError()`). Throws a `LokoError` for an invalid URL, or when a URL is given but
 * `METAL_AUTH_TOKEN` is missing. Never echoes the token.
 */
export function resolveMetalEndpoint(input: {
  apiUrlFlag?: string;
  env: Record<string, string | undefined>;
}): MetalEndpoint | null {
  const flag = input.apiUrlFlag?.trim();
  const fromEnv = input.env.METAL_API_URL?.trim();
  const raw = flag ? flag : fromEnv;
  if (!raw) return null;
  const source = flag ? '--api-url' : 'METAL_API_URL';
  const baseUrl = validateMetalUrl(raw, source);

  const token = input.env.METAL_AUTH_TOKEN?.trim();
  if (!token) {
    throw new LokoError(`METAL_AUTH_TOKEN is not set; it is required with ${source} ${baseUrl}`, {
      hint: TOKEN_HINT,
    });
  }
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new LokoError(
      'METAL_AUTH_TOKEN contains whitespace, control or non-ASCII characters and cannot be sent as a header',
      { hint: TOKEN_HINT },
    );
  }
  return { baseUrl, token };
}

/** The error for commands when neither `--api-url`, `METAL_API_URL` nor `--emulator` is given. */
export function missingEndpointError(): LokoError {
  return new LokoError(
    'no Metal API endpoint: pass --api-url <url>, set METAL_API_URL, or use --emulator',
    {
      hint:
        'For Equinix Metal use https://api.equinix.com/metal/v1 with METAL_AUTH_TOKEN set; ' +
        'for a local run use --emulator (or `loko emulator start` and its URL).',
    },
  );
}

/**
 * Checks that `raw` is an http(s) URL without credentials, query or fragment whose path ends with
 * `/metal/v1`; returns it without a trailing slash. `source` names the flag or variable in messages.
 */
export function validateMetalUrl(raw: string, source = 'the Metal API URL'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LokoError(`${source}: "${raw}" is not a valid URL`, {
      hint: 'Use a URL like https://api.equinix.com/metal/v1 or http://127.0.0.1:8080/metal/v1.',
    });
  }
  if (url.username || url.password) {
    // Do not echo it: the user part may hold a secret.
    throw new LokoError(`${source}: the URL must not contain credentials`, {
      hint: 'Pass the API key in METAL_AUTH_TOKEN instead.',
    });
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new LokoError(`${source}: "${shown}" must be an http:// or https:// URL`);
  }
  if (url.search || url.hash) {
    throw new LokoError(`${source}: "${shown}" must not have a query string or fragment`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/metal/v1')) {
    throw new LokoError(`${source}: "${shown}" does not end with /metal/v1`, {
      hint: `The Metal API lives under /metal/v1; did you mean ${url.origin}${path}/metal/v1 ?`,
    });
  }
  return `${url.origin}${path}`;
}
