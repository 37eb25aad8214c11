import { LokoError } from '../../../util/errors.js';

/** A value the userdata cannot carry (a label the kubelet may not set, a malformed subnet, ...). */
export class UserdataError extends LokoError {
  constructor(message: string, opts: { hint?: string } = {}) {
    super(message, opts);
    this.name = 'UserdataError';
  }
}
