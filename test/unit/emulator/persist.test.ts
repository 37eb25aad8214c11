import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Persister,
  readStateFile,
  STATE_FORMAT,
  writeFileAtomic,
  type StateFile,
} from '../../../src/emulator/persist.js';
import { createInitialState } from '../../../src/emulator/state.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loko-persist-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function file(): StateFile {
  return {
    format: STATE_FORMAT,
    version: 1,
    savedAt: 'now',
    clockOffsetMs: 1234,
    state: createInitialState({ now: 0, addressing: { v4Octet: 3, v6Hextet: 3 } }),
  };
}

describe('state file', () => {
  it('writes atomically with mode 0600, creating the directory, leaving no temp files', async () => {
    const path = join(dir, 'nested', 'state.json');
    await writeFileAtomic(path, 'secret', 0o600);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, 'nested'))).toEqual(['state.json']);
  });

  it('round-trips through the Persister and reads back', async () => {
    const path = join(dir, 'state.json');
    const f = file();
    const p = new Persister(
      path,
      () => f,
      (e) => {
        throw e;
      },
    );
    p.schedule();
    await p.flush();
    const back = await readStateFile(path);
    expect(back?.clockOffsetMs).toBe(1234);
    expect(back?.state.token).toBe(f.state.token);
    expect(JSON.parse(await readFile(path, 'utf8')).format).toBe(STATE_FORMAT);
  });

  it('answers undefined for a missing file and refuses a foreign one', async () => {
    expect(await readStateFile(join(dir, 'absent.json'))).toBeUndefined();
    const other = join(dir, 'other.json');
    await writeFile(other, '{"hello": 1}');
    await expect(readStateFile(other)).rejects.toThrow(/not a loko emulator state file/);
    await writeFile(other, '{oops');
    await expect(readStateFile(other)).rejects.toThrow(/not valid JSON/);
  });
});
