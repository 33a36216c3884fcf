import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/config-schema.js';
import type { Logging } from '../log/logging.js';
import { serveClusterMetrics } from './cluster-metrics.js';

export const READY = 'fpg:ready';
// A worker that keeps dying is restarted more and more slowly, up to this.
const MAX_RESTART_DELAY_MS = 5000;
const CRASH_MEMORY_MS = 30_000;

/**
 * The primary process of `server.workers: N`: forks N workers, which share the public and admin
 * ports (node:cluster hands connections round-robin), replaces a worker that dies, and on
 * SIGTERM or SIGINT has every worker drain, then exits 0 once all have exited cleanly. If a
 * worker fails before all have started, the start failed: the others are stopped and it exits 1.
 */
export function runPrimary(config: Config, count: number, logging: Logging): void {
  const { log } = logging;
  serveClusterMetrics();
  let ready = 0;
  let stopping = false;
  let failed = false;
  const crashes: number[] = [];

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.on('message', (m: unknown) => {
      if (m !== READY) return;
      if (++ready !== count) return;
      log.info({ workers: count }, 'all workers ready');
      logging.flush();
    });
    return worker;
  };

  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'stopping workers');
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (live.length === 0) return finish();
    for (const w of live) w.process.kill('SIGTERM');
    // In-flight requests end within request_timeout_ms; a worker still there after that is stuck.
    setTimeout(() => {
      failed = true;
      log.error('workers did not stop in time: killing them');
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
    }, config.server.request_timeout_ms + 2000).unref();
  };

  const finish = (): void => {
    log.info({ clean: !failed }, 'all workers stopped');
    logging.flushSync();
    process.exit(failed ? 1 : 0);
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) finish();
      return;
    }
    if (ready < count) {
      log.error({ pid: worker.process.pid, code, signal }, 'a worker failed to start');
      failed = true;
      return stop('start failed');
    }
    const now = Date.now();
    crashes.push(now);
    while ((crashes[0] as number) < now - CRASH_MEMORY_MS) crashes.shift();
    const delay = Math.min(MAX_RESTART_DELAY_MS, 50 * 2 ** crashes.length);
    log.error({ pid: worker.process.pid, code, signal, restart_in_ms: delay }, 'worker died: starting a replacement');
    setTimeout(() => !stopping && fork(), delay);
  });

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  log.info({ workers: count }, 'starting workers');
  for (let i = 0; i < count; i++) fork();
}
