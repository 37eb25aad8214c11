import { MetalApiError } from './errors.js';

/** One encoded path segment (IDs come from config or the API; never let them add a `/`). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** Maps a 404 of a DELETE to `'absent'` (already gone counts as done). */
export async function deleted(p: Promise<unknown>): Promise<'deleted' | 'absent'> {
  try {
    await p;
    return 'deleted';
  } catch (err) {
    if (err instanceof MetalApiError && err.status === 404) return 'absent';
    throw err;
  }
}
