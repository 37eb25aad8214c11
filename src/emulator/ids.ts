import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** The API's path prefix; every `href` the emulator emits starts with it. */
export const API_PREFIX = '/metal/v1';

/** A fresh random UUID (v4), as the API uses for every object id. */
export function newId(): string {
  return randomUUID();
}

/**
 * A UUID derived from `name` (SHA-1, shaped like a v5 UUID). Catalog objects (metros, plans,
 * operating systems) use it so their ids are the same in every emulator instance and across
 * restarts — tests and configs can hard-code them.
 */
export function stableId(name: string): string {
  const h = createHash('sha1').update(`loko-emulator:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** `short_id`: the first 8 hex characters of the UUID, as the API derives it. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

/** `{href}` for an object of `collection`, e.g. `href('devices', id)`. */
export function href(collection: string, id: string): { href: string } {
  return { href: `${API_PREFIX}/${collection}/${id}` };
}

/** RFC 3339 UTC timestamp without fractional seconds, the API's format (`2018-06-28T18:58:19Z`). */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A random secret shaped like a Metal API key (32 URL-safe characters). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is shaped like a UUID (the API's id format). */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}
