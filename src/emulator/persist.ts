import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EmulatorState } from './state.js';

/** Marker of the state file format. */
export const STATE_FORMAT = 'loko-emulator-state';

/** The state file's JSON document. */
export interface StateFile {
  format: typeof STATE_FORMAT;
  version: 1;
  savedAt: string;
  /** Virtual clock minus wall clock at save time (see Clock). */
  clockOffsetMs: number;
  state: EmulatorState;
}

/**
 * Writes `data` to `path` atomically (temp file in the same directory + rename), mode 0600:
 * the state holds the API token. Creates the directory if needed.
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode });
    await chmod(tmp, mode); // umask may have narrowed or widened the create mode
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Reads a state file; undefined when it does not exist, an Error when it is not one. */
export async function readStateFile(path: string): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`emulator state file ${path} is not valid JSON; move it away to start fresh`);
  }
  const f = doc as Partial<StateFile>;
  if (
    f?.format !== STATE_FORMAT ||
    f.version !== 1 ||
    typeof f.state !== 'object' ||
    f.state === null
  ) {
    throw new Error(
      `${path} is not a loko emulator state file (format ${STATE_FORMAT} v1); move it away to start fresh`,
    );
  }
  const s = f.state as Partial<EmulatorState>;
  for (const key of [
    'token',
    'addressing',
    'catalog',
    'projects',
    'devices',
    'reservations',
    'assignments',
    'bgpConfigs',
  ] as const) {
    if (s[key] === undefined) throw new Error(`emulator state file ${path} lacks "${key}"`);
  }
  s.provisionFailures ??= [];
  return {
    ...f,
    clockOffsetMs: typeof f.clockOffsetMs === 'number' ? f.clockOffsetMs : 0,
  } as StateFile;
}

/**
 * Saves the state after changes: `schedule()` coalesces bursts of mutations into one write
 * shortly after; `flush()` writes now. Writes never overlap. Without a path it does nothing.
 */
export class Persister {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(
    private readonly path: string | undefined,
    private readonly snapshot: () => StateFile,
    private readonly onError: (err: unknown) => void,
    private readonly delayMs = 25,
  ) {}

  /** Marks the state changed; a write follows soon. */
  schedule(): void {
    if (!this.path) return;
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().catch(this.onError);
    }, this.delayMs);
    this.timer.unref();
  }

  /** Writes the current state now (after any write in progress). */
  async flush(): Promise<void> {
    if (!this.path) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const path = this.path;
    const next = this.writing.then(async () => {
      this.dirty = false;
      await writeFileAtomic(path, JSON.stringify(this.snapshot(), null, 1));
    });
    // A failed write must not wedge later ones.
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** True when changes are waiting to be written. */
  get pending(): boolean {
    return this.dirty;
  }
}
