// Prints vitest's JSON report as one plain closing line, "tests: N passed, N failed, N skipped",
// so a CI log reader that does not know vitest still sees the counts.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test-results.json';
const r = JSON.parse(readFileSync(file, 'utf8'));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
