import { unprocessable } from './errors.js';

/** Query value as fastify parses it (repeated keys become arrays). */
export type QueryValue = string | string[] | undefined;

/** Page selection of a list request. */
export interface PageParams {
  page: number;
  perPage: number;
}

/** The API's `meta` object. `previous`/`next` are omitted at the ends (the spec's Href is not nullable). */
export interface Meta {
  first: { href: string };
  previous?: { href: string };
  self: { href: string };
  next?: { href: string };
  last: { href: string };
  total: number;
  current_page: number;
  last_page: number;
}

/** The spec's limits: page 1..100000, per_page 1..1000. */
export const MAX_PAGE = 100_000;
export const MAX_PER_PAGE = 1000;

/** Reads `page`/`per_page` (422 when out of the spec's range or not an integer). */
export function parsePageParams(
  query: Record<string, QueryValue>,
  defaultPerPage = 10,
): PageParams {
  const page = intParam(query, 'page', 1, 1, MAX_PAGE);
  const perPage = intParam(query, 'per_page', defaultPerPage, 1, MAX_PER_PAGE);
  return { page, perPage };
}

function intParam(
  query: Record<string, QueryValue>,
  name: string,
  dflt: number,
  min: number,
  max: number,
): number {
  const raw = first(query[name]);
  if (raw === undefined || raw === '') return dflt;
  if (!/^\d+$/.test(raw)) throw unprocessable(`${name} must be an integer`);
  const n = Number(raw);
  if (n < min || n > max) throw unprocessable(`${name} must be between ${min} and ${max}`);
  return n;
}

/** One page of `items` plus `meta` whose hrefs keep the request's other query parameters. */
export function paginate<T>(
  items: readonly T[],
  params: PageParams,
  basePath: string,
  query: Record<string, QueryValue>,
): { items: T[]; meta: Meta } {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / params.perPage));
  const start = (params.page - 1) * params.perPage;
  const link = (page: number): { href: string } => ({
    href: pageHref(basePath, query, page, params.perPage),
  });
  const meta: Meta = {
    first: link(1),
    ...(params.page > 1 ? { previous: link(Math.min(params.page - 1, lastPage)) } : {}),
    self: link(params.page),
    ...(params.page < lastPage ? { next: link(params.page + 1) } : {}),
    last: link(lastPage),
    total,
    current_page: params.page,
    last_page: lastPage,
  };
  return { items: items.slice(start, start + params.perPage), meta };
}

function pageHref(
  basePath: string,
  query: Record<string, QueryValue>,
  page: number,
  perPage: number,
): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (k === 'page' || k === 'per_page' || v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
  }
  qs.set('page', String(page));
  qs.set('per_page', String(perPage));
  return `${basePath}?${qs.toString()}`;
}

/** First value of a possibly repeated query parameter. */
export function first(v: QueryValue): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Values of a list parameter sent either repeated or comma-joined (`a,b` / `a&a`). */
export function listParam(v: QueryValue): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
