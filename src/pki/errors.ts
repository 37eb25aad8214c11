/**
 * Errors of the PKI layer. Messages name files and what is wrong with them, never their contents:
 * a PEM or a token must not end up in a terminal, a log or a CI transcript.
 */
import { LokoError } from '../util/errors.js';

export class PkiError extends LokoError {
  constructor(message: string, opts: { hint?: string } = {}) {
    // The cause is deliberately dropped: crypto errors may quote their input.
    super(message, { hint: opts.hint });
    this.name = 'PkiError';
  }
}
