/**
 * Bootstrap tokens (kubeadm's `--token`, a Secret `bootstrap-token-<id>` in kube-system) and the
 * control-plane certificate key. Both come from `node:crypto`'s CSPRNG and are kept in redacting
 * wrappers ({@link Secret}, {@link BootstrapToken}).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { inspect } from 'node:util';
import { PkiError } from './errors.js';
import { Secret } from './secret.js';

/** kubeadm's and the bootstrap-token authenticator's format: `<id>.<secret>`. */
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/**
 * Default lifetime of the token in the first controller's `InitConfiguration`, counted from
 * `kubeadm init`. Long enough for every machine of the first apply to provision (Metal takes
 * 5–20 min), install packages and join; short enough that a token read from a device's userdata is
 * useless soon after. Machines created later get a fresh token minted through the API.
 */
export const DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS = 4 * 60 * 60;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A bootstrap token. `id` is public (it names the Secret); the secret half never prints. */
export class BootstrapToken {
  readonly id: string;
  readonly #secret: string;
  /** Lifetime in seconds, as written to kubeadm's `ttl`. */
  readonly ttlSeconds: number;

  private constructor(id: string, secret: string, ttlSeconds: number) {
    this.id = id;
    this.#secret = secret;
    this.ttlSeconds = ttlSeconds;
  }

  /** A new random token: 22 characters of [a-z0-9] from the CSPRNG (about 113 bits). */
  static generate(ttlSeconds: number = DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS): BootstrapToken {
    checkTtl(ttlSeconds);
    return new BootstrapToken(randomString(6), randomString(16), ttlSeconds);
  }

  /** Wraps an existing token (e.g. one minted through the API). The input is never echoed. */
  static parse(
    token: string,
    ttlSeconds: number = DEFAULT_BOOTSTRAP_TOKEN_TTL_SECONDS,
  ): BootstrapToken {
    checkTtl(ttlSeconds);
    const m = BOOTSTRAP_TOKEN_PATTERN.exec(token);
    if (!m?.[1] || !m[2]) {
      throw new PkiError('the bootstrap token is not of the form [a-z0-9]{6}.[a-z0-9]{16}');
    }
    return new BootstrapToken(m[1], m[2], ttlSeconds);
  }

  /** `<id>.<secret>`: call only where the token is written to its destination. */
  reveal(): string {
    return `${this.id}.${this.#secret}`;
  }

  /** The TTL as a Go duration string (`4h0m0s`), the form kubeadm writes. */
  get ttl(): string {
    return goDuration(this.ttlSeconds);
  }

  toString(): string {
    return `${this.id}.[redacted]`;
  }

  toJSON(): { id: string; ttlSeconds: number } {
    return { id: this.id, ttlSeconds: this.ttlSeconds };
  }

  [inspect.custom](): string {
    return `BootstrapToken(${this.id}.[redacted], ttl ${this.ttl})`;
  }
}

/**
 * The key kubeadm uses to encrypt the `kubeadm-certs` Secret (`--upload-certs` /
 * `--certificate-key`): 32 random bytes, hex. loko writes the CA files into every controller's
 * userdata instead, so its userdata does not need this; it is here for callers that do.
 */
export function generateCertificateKey(): Secret {
  return new Secret(randomBytes(32).toString('hex'));
}

/** Seconds as Go's `time.Duration.String()` prints them: `4h0m0s`, `30m0s`, `45s`. */
export function goDuration(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new PkiError(`a duration must be a whole number of seconds >= 0, got ${seconds}`);
  }
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function randomString(length: number): string {
  let out = '';
  // randomInt rejects biased draws, so every character is uniform over the 36 symbols.
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

function checkTtl(ttlSeconds: number): void {
  // 0 would mean "never expires" to kubeadm; loko's tokens always expire.
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new PkiError(
      `a bootstrap token TTL must be a whole number of seconds > 0, got ${ttlSeconds}`,
    );
  }
}
