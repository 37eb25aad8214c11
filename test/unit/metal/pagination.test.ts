import { describe, expect, it } from 'vitest';
import { nextPage } from '../../../src/metal/transport.js';
import { device, json, setup, type RecordedRequest } from './fakes.js';

/** A paginated devices endpoint with `total` devices, answering like the Metal API. */
function devicesPages(total: number, style: 'next' | 'last_page') {
  return (req: RecordedRequest) => {
    const page = Number(req.url.searchParams.get('page') ?? '1');
    const perPage = Number(req.url.searchParams.get('per_page') ?? '10');
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const from = (page - 1) * perPage;
    const items = Array.from({ length: Math.max(0, Math.min(perPage, total - from)) }, (_, i) =>
      device(`d${from + i}`),
    );
    const href = (p: number) => `/metal/v1/projects/p1/devices?page=${p}&per_page=${perPage}`;
    const meta =
      style === 'next'
        ? {
            first: { href: href(1) },
            last: { href: href(lastPage) },
            self: { href: href(page) },
            next: page < lastPage ? { href: href(page + 1) } : null,
            previous: page > 1 ? { href: href(page - 1) } : null,
            total,
          }
        : { total, current_page: page, last_page: lastPage };
    return json(200, { devices: items, meta });
  };
}

describe('pagination', () => {
  it('merges 3 pages following meta.next, with per_page=100 and the tag filter', async () => {
    const { client, requests } = setup(devicesPages(250, 'next'));
    const list = await client.listDevices('p1', { tag: 'loko:cluster=c1' });
    expect(list).toHaveLength(250);
    expect(list.map((d) => d.id)).toEqual(Array.from({ length: 250 }, (_, i) => `d${i}`));
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.url.pathname)).toEqual(
      Array(3).fill('/metal/v1/projects/p1/devices'),
    );
    expect(requests.map((r) => r.url.searchParams.get('page'))).toEqual([null, '2', '3']);
    for (const r of requests) {
      expect(r.url.searchParams.get('per_page')).toBe('100');
      expect(r.url.searchParams.get('tag')).toBe('loko:cluster=c1');
    }
    expect(requests[0]!.url.search).toBe('?tag=loko%3Acluster%3Dc1&per_page=100');
  });

  it('follows current_page < last_page when there is no next link', async () => {
    const { client, requests } = setup(devicesPages(201, 'last_page'));
    const list = await client.listDevices('p1');
    expect(list).toHaveLength(201);
    expect(requests).toHaveLength(3);
  });

  it('drops duplicates when pages shift between requests', async () => {
    const { client } = setup([
      () =>
        json(200, { devices: [device('a'), device('b')], meta: { current_page: 1, last_page: 2 } }),
      () =>
        json(200, { devices: [device('b'), device('c')], meta: { current_page: 2, last_page: 2 } }),
    ]);
    const list = await client.listDevices('p1');
    expect(list.map((d) => d.id)).toEqual(['a', 'b', 'c']);
  });

  it('reads one page when there is no meta', async () => {
    const { client, requests } = setup(() => json(200, { projects: [{ id: 'p', name: 'n' }] }));
    await expect(client.listProjects()).resolves.toEqual([{ id: 'p', name: 'n' }]);
    expect(requests).toHaveLength(1);
  });

  it('merges IP reservation pages under ip_addresses', async () => {
    const { client, requests } = setup([
      () =>
        json(200, {
          ip_addresses: [{ id: 'i1' }],
          meta: { next: { href: '/projects/p1/ips?page=2' } },
        }),
      () => json(200, { ip_addresses: [{ id: 'i2' }], meta: { next: null } }),
    ]);
    const list = await client.listIPReservations('p1', { types: ['public_ipv4', 'global_ipv4'] });
    expect(list.map((r) => r.id)).toEqual(['i1', 'i2']);
    expect(requests[0]!.url.searchParams.getAll('types')).toEqual(['public_ipv4', 'global_ipv4']);
    expect(requests[1]!.url.searchParams.getAll('types')).toEqual(['public_ipv4', 'global_ipv4']);
  });

  it('nextPage', () => {
    expect(nextPage(undefined, 1)).toBeUndefined();
    expect(nextPage({ next: null }, 1)).toBeUndefined();
    expect(nextPage({ next: { href: 'https://api.equinix.com/metal/v1/x?page=4' } }, 3)).toBe(4);
    expect(nextPage({ current_page: 2, last_page: 3 }, 2)).toBe(3);
    expect(nextPage({ current_page: 3, last_page: 3 }, 3)).toBeUndefined();
    // a next link that does not advance falls back to page + 1 (bounded by empty pages)
    expect(nextPage({ next: { href: '/x?page=1' } }, 1)).toBe(2);
  });
});
