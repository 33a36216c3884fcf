import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface Command {
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface Exit {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The parts of a Supervised: its constructor's options. */
export interface SupervisedOptions {
  name: string;
  command: Command;
  logFile: string;
  /** Called when the process exits unasked (`exit`) and when it is started again (`restarted`). */
  report: (event: 'exited' | 'restarted', detail: Record<string, unknown>) => void;
  /** Called with the pid of every process started, the first one too. */
  spawned?: (name: string, pid: number) => void;
}

/**
 * One child process kept running, as compose's `restart: unless-stopped` would: when it exits
 * without being asked to, it is started again with the same command (so the same ports). Its
 * stdout and stderr are appended to one log file, which outlives every restart.
 */
export class Supervised {
  private child: ChildProcess | null = null;
  private wanted = false;
  private startedAt = 0;
  private backoffMs = 100;
  private exited: Promise<Exit> | null = null;

  readonly name: string;
  private readonly command: Command;
  readonly logFile: string;
  private readonly report: (event: 'exited' | 'restarted', detail: Record<string, unknown>) => void;
  private readonly spawned: (name: string, pid: number) => void;

  constructor(o: SupervisedOptions) {
    this.name = o.name;
    this.command = o.command;
    this.logFile = o.logFile;
    this.report = o.report;
    this.spawned = o.spawned ?? (() => undefined);
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  /** Starts the process and keeps it running until `stop`. */
  start(): void {
    this.wanted = true;
    this.spawn();
  }

  private spawn(): void {
    const fd = openSync(this.logFile, 'a');
    const { cmd, args, env, cwd } = this.command;
    // A process group of its own: Ctrl-C (SIGINT to the terminal's group) reaches the runner
    // alone, which then stops everything in order, instead of Redis and HAProxy dying at once.
    const child = spawn(cmd, args, { env: env ?? process.env, cwd, stdio: ['ignore', fd, fd], detached: true });
    closeSync(fd);
    if (child.pid !== undefined) this.spawned(this.name, child.pid);
    this.child = child;
    this.startedAt = Date.now();
    this.exited = new Promise<Exit>((resolve) => {
      child.once('error', (err) => {
        this.report('exited', { name: this.name, error: err.message });
        resolve({ pid: child.pid ?? 0, code: null, signal: null });
      });
      child.once('exit', (code, signal) => resolve({ pid: child.pid ?? 0, code, signal }));
    });
    void this.exited.then((exit) => {
      if (this.child !== child || !this.wanted) return;
      this.report('exited', { name: this.name, ...exit });
      // A process that dies at once again and again is retried ever more slowly (up to 5 s).
      this.backoffMs = Date.now() - this.startedAt > 10_000 ? 100 : Math.min(this.backoffMs * 2, 5000);
      setTimeout(() => {
        if (!this.wanted || this.child !== child) return;
        this.spawn();
        this.report('restarted', { name: this.name, pid: this.pid });
      }, this.backoffMs);
    });
  }

  /** From now on an exit is not followed by a restart (the runner is stopping). */
  release(): void {
    this.wanted = false;
  }

  /** Stops it for good with `signal`; SIGKILL after `graceMs`. Resolves once it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<Exit | null> {
    this.wanted = false;
    const child = this.child;
    const exited = this.exited;
    if (!child || !exited || child.exitCode !== null || child.signalCode !== null) return null;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const exit = await exited;
    clearTimeout(timer);
    return exit;
  }
}

/** Polls `check` until it holds, or throws naming `what` after `ms`. */
export async function waitFor(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`gave up after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
