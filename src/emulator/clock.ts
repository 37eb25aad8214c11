import { performance } from 'node:perf_hooks';

/** Where the clock reads real time from; injectable so unit tests control time. */
export interface TimeSource {
  /** Wall-clock milliseconds since the epoch (used to carry time across restarts). */
  wallMs(): number;
  /** Monotonic milliseconds (used for elapsed time inside one process). */
  monoMs(): number;
}

const realTime: TimeSource = { wallMs: () => Date.now(), monoMs: () => performance.now() };

/**
 * The emulator's virtual clock. Every timestamp in the state is virtual milliseconds, and device
 * states are computed from those timestamps (not from timers), so a restart, a time-scale change
 * or an explicit advance all keep the state consistent.
 *
 * virtual now = wall time at start + offset + (monotonic elapsed since the last anchor) × scale
 * + explicit advances. The offset (virtual − wall) is what persists: time spent while the
 * emulator was not running counts at real speed.
 */
export class Clock {
  private anchorVirtual: number;
  private anchorMono: number;
  private scale: number;

  constructor(
    opts: { offsetMs?: number; timeScale?: number } = {},
    private readonly time: TimeSource = realTime,
  ) {
    const scale = opts.timeScale ?? 1;
    assertScale(scale);
    this.scale = scale;
    this.anchorVirtual = time.wallMs() + (opts.offsetMs ?? 0);
    this.anchorMono = time.monoMs();
  }

  /** Virtual now, in epoch milliseconds. */
  now(): number {
    return this.anchorVirtual + (this.time.monoMs() - this.anchorMono) * this.scale;
  }

  /** Current speed factor (1 = real time, 10 = ten times faster). */
  get timeScale(): number {
    return this.scale;
  }

  /** Changes the speed from now on; time already elapsed is kept. */
  setTimeScale(scale: number): void {
    assertScale(scale);
    this.reanchor();
    this.scale = scale;
  }

  /** Jumps the virtual clock forward. */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) {
      throw new RangeError(`advanceSeconds must be a non-negative number, got ${seconds}`);
    }
    this.reanchor();
    this.anchorVirtual += seconds * 1000;
  }

  /** virtual − wall time, the value persisted in the state file. */
  offsetMs(): number {
    return this.now() - this.time.wallMs();
  }

  private reanchor(): void {
    this.anchorVirtual = this.now();
    this.anchorMono = this.time.monoMs();
  }
}

function assertScale(scale: number): void {
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1_000_000) {
    throw new RangeError(`timeScale must be a number in (0, 1000000], got ${scale}`);
  }
}
