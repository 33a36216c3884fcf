import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Claim {
  runner: number;
  /** The processes the runner started, each with its start time (so a reused pid is not mistaken). */
  children: Array<{ name: string; pid: number; started: string }>;
}

/** When the process started (field 22 of /proc/PID/stat), or null if it is gone. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** The process's command line, split into its arguments (empty if it is gone). */
function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

/** Whether the command line is that of the child the runner starts under this name. */
export type OwnChild = (name: string, argv: string[]) => boolean;

/**
 * The directory holds Redis's data and ACL file, the balancer's socket and the claim naming
 * which processes to stop: anyone else who could write there could make the runner signal any
 * process of this user. Refused unless this user owns it and no one else may write to it.
 */
function mustBePrivate(path: string): void {
  const st = statSync(path);
  if (!st.isDirectory()) throw new Error(`${path}: --state-dir is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`${path}: --state-dir is owned by uid ${st.uid}, not this user (uid ${uid}): choose another`);
  if ((st.mode & 0o022) !== 0)
    throw new Error(
      `${path}: --state-dir is group- or world-writable (mode ${(st.mode & 0o777).toString(8)}): chmod go-w it or choose another`,
    );
}

/** Running: a zombie (killed, not yet reaped by its parent) is not. */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

/**
 * One runner per state directory. Two runners on one directory would share Redis's file, the
 * ACL file, the balancer's runtime socket and the logs: each would serve the other's accounts
 * (a limit of 100 served 190 times). The claim also names the runner's children, so that a
 * runner started after one was SIGKILLed stops what that one left running.
 */
export class StateDir {
  private readonly file: string;
  private claim: Claim = { runner: process.pid, children: [] };
  private taken = false;

  /** `ownChild`: what the command line of each child the runner starts looks like. */
  constructor(
    readonly path: string,
    private readonly ownChild: OwnChild,
  ) {
    this.file = join(path, 'runner.json');
  }

  /** Takes the directory; returns the names of the processes a dead runner had left running. */
  async take(): Promise<string[]> {
    mkdirSync(this.path, { recursive: true, mode: 0o700 });
    mustBePrivate(this.path);
    let earlier: Claim | null = null;
    try {
      earlier = JSON.parse(readFileSync(this.file, 'utf8')) as Claim;
    } catch {
      // no claim: a new directory, or the last runner stopped cleanly
    }
    if (earlier && earlier.runner !== process.pid && alive(earlier.runner))
      throw new Error(
        `${this.path} is in use by the runner with pid ${earlier.runner}: stop it (kill -TERM ${earlier.runner}) or choose another --state-dir`,
      );
    // The claim says which pid; only a process whose start time and command line are those of
    // the runner's own child is signalled (a reused pid, or any other process, is not).
    const left = (earlier?.children ?? []).filter(
      (c) => startTime(c.pid) === c.started && this.ownChild(c.name, commandLine(c.pid)),
    );
    for (const c of left) process.kill(c.pid, 'SIGTERM');
    const end = Date.now() + 10_000;
    while (left.some((c) => alive(c.pid)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    for (const c of left) if (alive(c.pid)) process.kill(c.pid, 'SIGKILL');
    this.taken = true;
    this.write();
    return left.map((c) => `${c.name} (pid ${c.pid})`);
  }

  /** A child was started: remember it until it is replaced or the runner stops. */
  started(name: string, pid: number): void {
    if (!this.taken) return;
    const started = startTime(pid);
    this.claim.children = this.claim.children.filter((c) => c.name !== name);
    if (started !== null) this.claim.children.push({ name, pid, started });
    this.write();
  }

  /** Gives the directory up: only a claim this runner took (never another runner's). */
  release(): void {
    if (this.taken) rmSync(this.file, { force: true });
    this.taken = false;
  }

  private write(): void {
    writeFileSync(this.file, JSON.stringify(this.claim), { mode: 0o600 });
  }
}
