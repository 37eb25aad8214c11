/**
 * Validation of emulator responses against the published Metal OpenAPI description
 * (../shared/metal-openapi): one response schema per path, method and status. Used by the
 * contract test's own flow (test/integration/contract) and, for every emulator the integration
 * run started through the harness, by the run's teardown (./global-setup.ts).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { RequestSummary, ResponseSample } from '../../../src/emulator/index.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the spec is expected: beside the repository, not copied into it. */
export const specPath = fileURLToPath(
  new URL('../shared/metal-openapi/openapi3.yaml', `file://${repoRoot}`),
);

/** Whether the spec folder is there. */
export function specPresent(): boolean {
  return existsSync(specPath);
}

/** True under CI=true, where a missing spec is a failure instead of a skip. */
export function isCI(): boolean {
  return process.env.CI === 'true';
}

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * (method route status) pairs the spec does not declare but the API answers; the body is still
 * validated against the Error schema.
 */
const KNOWN_UNDECLARED: Record<string, string> = {
  'DELETE /ips/{id} 422':
    'the spec lists no 422, but the API refuses to delete a reservation that still has assignments',
  'GET /projects/{id}/devices 422':
    'the spec lists no 422, but the API refuses a query out of its range (per_page above 1000)',
  'GET /projects/{id}/hardware-reservations 422':
    'the spec lists no 422, but the API refuses an unknown state or provisionable filter',
};

/**
 * Statuses any operation may answer although few declare them: the rate limiter (429) and the
 * gateway or backend failing (5xx). Tests inject them as faults; their bodies are still
 * validated against the Error schema.
 */
const ANY_OPERATION = new Set([429, 500, 502, 503, 504]);

/** A loaded spec with its validator. */
export interface Contract {
  spec: OpenApi;
  ajv: Ajv;
}

/** Loads and bundles the spec and prepares the validator. */
export async function loadContract(): Promise<Contract> {
  const spec = (await $RefParser.bundle(specPath)) as unknown as OpenApi;
  return { spec, ajv: buildAjv(spec) };
}

export interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

const SPEC_ID = 'https://loko.invalid/metal-openapi.json';

// OpenAPI 3.0 schema objects are JSON Schema draft-04-ish: map `nullable`, drop annotations
// ajv does not know. Only schema positions are walked, so a property named "example" survives.
const DROP = new Set([
  'example',
  'examples',
  'externalDocs',
  'xml',
  'discriminator',
  'readOnly',
  'writeOnly',
  'deprecated',
]);

function convertSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(convertSchema);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
    if (DROP.has(k) || k.startsWith('x-') || k === 'nullable') continue;
    if (k === '$ref' && typeof v === 'string') out[k] = v.startsWith('#') ? `${SPEC_ID}${v}` : v;
    else if (k === 'properties' && typeof v === 'object' && v !== null) {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, convertSchema(ps)]));
    } else if (['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf'].includes(k)) {
      out[k] = convertSchema(v);
    } else out[k] = v;
  }
  const src = s as Record<string, unknown>;
  if (src.nullable === true) {
    if (typeof src.type === 'string') out.type = [src.type, 'null'];
    if (Array.isArray(src.enum)) out.enum = [...src.enum, null];
  }
  return out;
}

function buildAjv(spec: OpenApi): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const f of [
    'int32',
    'int64',
    'float',
    'double',
    'datetime',
    'binary',
    'byte',
    'string',
    'password',
  ]) {
    ajv.addFormat(f, true);
  }
  const schemas = Object.fromEntries(
    Object.entries(spec.components.schemas).map(([k, v]) => [k, convertSchema(v)]),
  );
  ajv.addSchema({ $id: SPEC_ID, components: { schemas } });
  return ajv;
}

/** `/metal/v1/devices/:id` -> `/devices/{id}` */
export function specPathOf(route: string): string {
  return route.replace(/^\/metal\/v1/, '').replace(/:([A-Za-z_]+)/g, '{$1}');
}

const caches = new WeakMap<OpenApi, Map<string, ValidateFunction>>();

/**
 * Problems of `samples`, one line each (`METHOD /path STATUS: what is wrong`); empty when every
 * body validates against the response schema the spec declares for its path and status.
 */
export function validateSamples(
  { spec, ajv }: Contract,
  samples: readonly ResponseSample[],
): string[] {
  const problems: string[] = [];
  let cache = caches.get(spec);
  if (!cache) caches.set(spec, (cache = new Map()));
  for (const s of samples) {
    const path = specPathOf(s.route);
    const key = `${s.method} ${path} ${s.status}`;
    const op = spec.paths[path]?.[s.method.toLowerCase()];
    if (!op) {
      problems.push(`${key}: the spec has no operation ${s.method} ${path}`);
      continue;
    }
    let response = op.responses[String(s.status)] ?? op.responses.default;
    if (!response) {
      if (!KNOWN_UNDECLARED[key] && !ANY_OPERATION.has(s.status)) {
        problems.push(`${key}: status ${s.status} is not declared for this operation`);
        continue;
      }
      response = {
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      if (s.body !== null)
        problems.push(
          `${key}: the spec declares no body, got ${JSON.stringify(s.body).slice(0, 200)}`,
        );
      continue;
    }
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile(convertSchema(schema) as object);
      cache.set(key, validate);
    }
    if (!validate(s.body)) {
      const errs = (validate.errors ?? [])
        .slice(0, 8)
        .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
        .join('; ');
      problems.push(`${key}: body does not match the spec: ${errs}`);
    }
  }
  return problems;
}

/** What the harness saves for one emulator instance when it closes (test/harness/emulator.ts). */
export interface SavedEmulatorLog {
  /** The test file that ran the instance, when known. */
  testFile?: string;
  /** `GET /_emulator/responses`: the last body per (method, route, status). */
  responses: ResponseSample[];
  /** `GET /_emulator/requests/summary`: every (method, route) the instance answered. */
  summary: RequestSummary;
}

/** Result of {@link checkRunLogs}. */
export interface RunCheck {
  /** Bodies that break the spec (with the test files that got them). */
  problems: string[];
  /** (method, route) pairs that were answered but have no validated response. */
  uncovered: string[];
  /** Distinct (method, route) pairs answered, and how many of them validated. */
  routes: number;
  validated: number;
}

/**
 * Checks the logs of a whole run: every sample validates, and every (method, route) any
 * instance answered has at least one validated response. Answers that carry no body to check
 * (a connection reset by a fault, status 0) and paths the emulator does not serve
 * (`(unmatched)`) are not part of the contract.
 */
export function checkRunLogs(contract: Contract, logs: readonly SavedEmulatorLog[]): RunCheck {
  const problems = new Map<string, Set<string>>();
  const validated = new Set<string>();
  const seen = new Map<string, Set<string>>();
  const checked = new Map<string, string | undefined>();
  for (const log of logs) {
    const from = log.testFile ?? 'unknown test file';
    for (const r of log.summary.routes) {
      if (r.route.includes('(unmatched)')) continue;
      if (Object.keys(r.statuses).every((st) => st === '0')) continue;
      const key = `${r.method} ${r.route}`;
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(from);
    }
    for (const sample of log.responses) {
      if (sample.route.includes('(unmatched)')) continue;
      const id = JSON.stringify(sample);
      if (!checked.has(id)) checked.set(id, validateSamples(contract, [sample])[0]);
      const problem = checked.get(id);
      if (problem === undefined) validated.add(`${sample.method} ${sample.route}`);
      else {
        if (!problems.has(problem)) problems.set(problem, new Set());
        problems.get(problem)!.add(from);
      }
    }
  }
  const uncovered = [...seen]
    .filter(([key]) => !validated.has(key))
    .map(([key, files]) => `${key} (requested in ${[...files].join(', ')})`)
    .sort();
  return {
    problems: [...problems].map(([p, files]) => `${p} (in ${[...files].join(', ')})`).sort(),
    uncovered,
    routes: seen.size,
    validated: [...seen.keys()].filter((k) => validated.has(k)).length,
  };
}
