/** The memory store's temporary files: always new, never followed, 0600, and none left from a crash. */
import { constants, openSync, readdirSync, rmSync } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

// A temp file is always new (O_EXCL), never followed (O_NOFOLLOW), and 0600: it carries key hashes
// and webhook secrets, and the state file takes its mode and place with the rename.
const TEMP_FLAGS = constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_WRONLY;
const TEMP_MODE = 0o600;
export const tempOf = (file: string): string => `${file}.${process.pid}.tmp`;
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/**
 * Removes the temp files of runs that died mid-write (kill -9, power loss): those of a pid that
 * no longer runs, or of this process's own pid (a container's gateway is pid 1 at every start).
 * A live process's may be a write in flight: left alone.
 */
export function removeStaleTemps(file: string): void {
  const dir = dirname(file);
  const prefix = `${basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // no directory yet: nothing left behind
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) ? /^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid !== undefined && isGone(Number(pid))) rmSync(join(dir, name), { force: true });
  }
}

function isGone(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return errno(err) === 'ESRCH';
  }
}

/** A new temp file; one already under its name (a file or a link someone put there) is removed first. */
export async function openTemp(temp: string): Promise<FileHandle> {
  try {
    return await open(temp, TEMP_FLAGS, TEMP_MODE);
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
    await rm(temp, { force: true });
    return open(temp, TEMP_FLAGS, TEMP_MODE);
  }
}

export function openTempSync(temp: string): number {
  try {
    return openSync(temp, TEMP_FLAGS, TEMP_MODE);
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
    rmSync(temp, { force: true });
    return openSync(temp, TEMP_FLAGS, TEMP_MODE);
  }
}
