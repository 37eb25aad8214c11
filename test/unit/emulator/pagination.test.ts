import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/emulator/errors.js';
import { listParam, paginate, parsePageParams } from '../../../src/emulator/pagination.js';

const items = Array.from({ length: 25 }, (_, i) => i);
const base = '/metal/v1/projects/p/devices';

describe('pagination', () => {
  it('emits meta with hrefs keeping the other query parameters', () => {
    const query = { tag: 'loko:cluster=a', page: '2', per_page: '10' };
    const { items: page, meta } = paginate(items, parsePageParams(query), base, query);
    expect(page).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(meta).toEqual({
      first: { href: `${base}?tag=loko%3Acluster%3Da&page=1&per_page=10` },
      previous: { href: `${base}?tag=loko%3Acluster%3Da&page=1&per_page=10` },
      self: { href: `${base}?tag=loko%3Acluster%3Da&page=2&per_page=10` },
      next: { href: `${base}?tag=loko%3Acluster%3Da&page=3&per_page=10` },
      last: { href: `${base}?tag=loko%3Acluster%3Da&page=3&per_page=10` },
      total: 25,
      current_page: 2,
      last_page: 3,
    });
  });

  it('omits previous on the first page and next on the last', () => {
    const first = paginate(items, { page: 1, perPage: 10 }, base, {}).meta;
    expect(first.previous).toBeUndefined();
    expect(first.next).toBeDefined();
    const last = paginate(items, { page: 3, perPage: 10 }, base, {});
    expect(last.items).toEqual([20, 21, 22, 23, 24]);
    expect(last.meta.next).toBeUndefined();
  });

  it('answers an empty list with one (empty) page', () => {
    const { items: page, meta } = paginate([], { page: 1, perPage: 10 }, base, {});
    expect(page).toEqual([]);
    expect(meta).toMatchObject({ total: 0, current_page: 1, last_page: 1 });
    expect(meta.next).toBeUndefined();
  });

  it('accepts per_page up to 1000 and defaults to 10 (or the endpoint default)', () => {
    expect(parsePageParams({})).toEqual({ page: 1, perPage: 10 });
    expect(parsePageParams({}, 250)).toEqual({ page: 1, perPage: 250 });
    expect(parsePageParams({ per_page: '1000' }).perPage).toBe(1000);
    const all = paginate(items, parsePageParams({ per_page: '1000' }), base, {});
    expect(all.items).toHaveLength(25);
    expect(all.meta.last_page).toBe(1);
  });

  it('rejects out-of-range or non-integer paging with 422', () => {
    for (const q of [{ per_page: '1001' }, { per_page: '0' }, { page: '0' }, { page: 'two' }]) {
      expect(() => parsePageParams(q)).toThrow(ApiError);
      try {
        parsePageParams(q);
      } catch (err) {
        expect((err as ApiError).status).toBe(422);
      }
    }
  });

  it('reads list parameters sent comma-joined or repeated', () => {
    expect(listParam('a,b')).toEqual(['a', 'b']);
    expect(listParam(['a', 'b,c'])).toEqual(['a', 'b', 'c']);
    expect(listParam(undefined)).toEqual([]);
  });
});
