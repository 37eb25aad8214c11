/** Errors raised by the command layer. */
import type { Diagnostic } from '../../config/types.js';
import { LokoError } from '../../util/errors.js';

/**
 * The configuration has errors. The CLI's error handler prints `diagnostics` (each with
 * file:line:col) before the message.
 */
export class ConfigError extends LokoError {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic[]) {
    const n = diagnostics.filter((d) => d.severity === 'error').length;
    super(`the configuration has ${n} error${n === 1 ? '' : 's'}`, {
      hint: 'Fix the problems listed above; `loko config validate` checks the configuration offline.',
    });
    this.name = 'ConfigError';
    this.diagnostics = diagnostics;
  }
}

/** True for errors that carry config-style diagnostics (ConfigError, PreflightError). */
export function hasDiagnostics(err: unknown): err is LokoError & { diagnostics: Diagnostic[] } {
  return err instanceof LokoError && Array.isArray((err as { diagnostics?: unknown }).diagnostics);
}

/** A diagnostic as JSON (`config validate -o json`, and `{"error":{"diagnostics":[…]}}`). */
export function diagnosticJson(d: Diagnostic): Record<string, unknown> {
  return {
    severity: d.severity,
    summary: d.summary,
    ...(d.detail ? { detail: d.detail } : {}),
    ...(d.range
      ? {
          file: d.range.file,
          line: d.range.start.line,
          column: d.range.start.column,
          endLine: d.range.end.line,
          endColumn: d.range.end.column,
        }
      : {}),
  };
}
