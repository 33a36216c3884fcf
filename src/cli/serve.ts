import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { startApp } from '../app.js';
import { clusterMetricsText } from '../cluster/metrics.js';
import { READY, runPrimary } from '../cluster/primary.js';
import type { Config } from '../config/schema.js';
import { createLogging, exitOnFatal } from '../log.js';

/**
 * Runs the gateway until SIGINT/SIGTERM, then drains in-flight requests and exits. With
 * `server.workers` above one, this process becomes the primary and each worker runs the app.
 */
export async function runServe(config: Config): Promise<void> {
  const logging = createLogging(config.log);
  exitOnFatal(logging);
  const workers = config.server.workers === 'auto' ? availableParallelism() : config.server.workers;
  if (workers > 1 && cluster.isPrimary) return runPrimary(config, workers, logging);

  const app = await startApp(config, { log: logging.log, droppedLogLines: logging.droppedLines });
  logging.flush();
  if (cluster.isWorker) {
    app.metrics.clusterWide(clusterMetricsText(app.metrics.registry));
    process.send?.(READY);
  }
  const trialKey = app.demoKeys['developer'];
  if (trialKey !== undefined) {
    const { address, port, family } = app.publicAddress;
    const host = address === '0.0.0.0' || address === '::' ? 'localhost' : family === 'IPv6' ? `[${address}]` : address;
    // The one place a key is printed: on the console at first run, not in a log line.
    process.stdout.write(
      `\nDemo accounts created (memory store). Try the developer-trial key:\n\n` +
        `  curl 'http://${host}:${port}/fuel-api/api/simple-current.php?api_key=${trialKey}'\n\n`,
    );
  }
  // Idle keep-alive connections get this long to send a request already on its way.
  const drainMs = Math.min(1000, config.server.keep_alive_timeout_ms);
  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ reason }, 'shutting down');
    app.close(drainMs).then(
      () => {
        logging.flushSync();
        process.exit(0);
      },
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        logging.flushSync();
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A worker whose primary is gone has no one to restart or stop it.
  if (cluster.isWorker) process.on('disconnect', () => stop('primary gone'));
}
