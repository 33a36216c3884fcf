import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, lstatSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { UsageExport } from '../admin/usage-export.js';
import { GatewayError } from '../failures.js';

/** `out` itself, not what it may point to: a symlink is refused (it could name any file the user can write). */
function refuseSymlink(out: string): void {
  try {
    if (lstatSync(out).isSymbolicLink())
      throw new GatewayError('BAD_REQUEST', `${out} is a symbolic link: name the file itself (nothing was written)`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Writes the export to a new temporary file beside `out` (O_EXCL|O_NOFOLLOW: never an existing
 * file or a link planted under its name), then renames it over `out`. A rename replaces a link
 * put there meanwhile, never its target; a failed export leaves `out` as it was.
 */
export async function writeExportFile(e: UsageExport, out: string): Promise<void> {
  refuseSymlink(out);
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = constants;
  const fd = openSync(temp, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY, 0o600);
  const file = createWriteStream('', { fd });
  // A write that fails fails the command through `finished`.
  file.on('error', () => undefined);
  let failed: unknown = null;
  await e.writeTo(file).catch((err: unknown) => {
    failed = err;
  });
  file.end();
  try {
    await finished(file);
    if (failed !== null) throw failed;
    refuseSymlink(out);
    renameSync(temp, out);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
