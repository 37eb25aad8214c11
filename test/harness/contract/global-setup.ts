/**
 * vitest globalSetup of the integration project: the contract check of the whole run.
 *
 * Setup creates a run directory (`$TMPDIR/loko-contract-<random>/`) and provides it as
 * `lokoContract`. Every emulator the harness started (test/harness/emulator.ts) saves its
 * response samples and request summary there when it closes. Teardown, after all test files,
 * validates every saved sample against the Metal OpenAPI description and fails the run
 * (exit code 1, offending routes printed) when a body breaks the spec or a (method, route) that
 * was answered has no validated response, whichever test file made the requests.
 *
 * Without the spec (../shared/metal-openapi) the check is skipped with a notice, and fails the
 * run under CI=true.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  checkRunLogs,
  isCI,
  loadContract,
  specPath,
  specPresent,
  type SavedEmulatorLog,
} from './validate.js';

/** What `provide('lokoContract', ...)` hands to test files. */
export interface ContractProvided {
  /** Where the harness saves one JSON file per emulator instance. */
  dir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    lokoContract: ContractProvided;
  }
}

const say = (line: string) => process.stderr.write(`[contract] ${line}\n`);

export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'loko-contract-'));
  project.provide('lokoContract', { dir });

  return async () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    const logs = files.map(
      (f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as SavedEmulatorLog,
    );
    if (logs.length === 0) {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    if (!specPresent()) {
      rmSync(dir, { recursive: true, force: true });
      const msg = `Metal OpenAPI spec not found at ${specPath}: responses of this run not validated`;
      if (isCI()) {
        say(`FAIL: ${msg} (CI=true: the spec must be present)`);
        process.exitCode = 1;
      } else say(`NOTICE: ${msg} (outside CI)`);
      return;
    }
    const result = checkRunLogs(await loadContract(), logs);
    const ok = result.problems.length === 0 && result.uncovered.length === 0;
    say(
      `${logs.length} emulator instances, ${result.routes} (method, route) pairs answered, ` +
        `${result.validated} with a response the spec accepts`,
    );
    if (ok) {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    for (const p of result.problems) say(`FAIL: ${p}`);
    for (const u of result.uncovered) say(`FAIL: no validated response for ${u}`);
    say(`the saved logs are kept in ${dir}`);
    // Fails the run even though every test file passed: the contract covers all of them.
    process.exitCode = 1;
  };
}
