import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { type App, startApp } from '../app.js';
import { clusterMetricsText } from '../cluster/cluster-metrics.js';
import { READY, runPrimary } from '../cluster/primary.js';
import type { Config } from '../config/config-schema.js';
import { exitOnFatal } from '../log/fatal.js';
import { createLogging } from '../log/logging.js';

/** A listener's address as a URL host: a wildcard bind is reached on localhost. */
function urlHost({ address, family }: AddressInfo): string {
  if (address === '0.0.0.0' || address === '::') return 'localhost';
  return family === 'IPv6' ? `[${address}]` : address;
}

/**
 * What the start says about demo accounts (memory store with `demo_accounts`): a curl line with a
 * working key at every start; the first creates the demo accounts, a later one replaces the
 * developer demo account's own key (keys are stored hashed, so the earlier one cannot be shown
 * again). The CLI's `accounts` commands cannot reach the memory store inside the running server.
 */
function demoBanner(app: App): string {
  if (!app.config.demo_accounts || app.store.capabilities.sharedAcrossProcesses) return '';
  const api = `http://${urlHost(app.publicAddress)}:${app.publicAddress.port}/fuel-api/api/simple-current.php`;
  const entries = Object.entries(app.demoKeys);
  const [plan, key] = entries.find(([p]) => p === 'developer') ?? entries[0] ?? [];
  if (plan !== undefined && key !== undefined) {
    return `\n${demoWhat(app, plan, entries.length > 1)}\n\n  curl '${api}?api_key=${key}'\n\n`;
  }
  // No developer plan, and a store that already has accounts: no demo key to give.
  const admin = `http://${urlHost(app.adminAddress)}:${app.adminAddress.port}/admin/accounts`;
  const auth = app.config.listen.admin.token === '' ? '' : ` -H "Authorization: Bearer $ADMIN_TOKEN"`;
  return (
    `\nNo demo account created: the store already has accounts. Create a key:\n\n` +
    `  curl -X POST${auth} -H 'Content-Type: application/json' -d '{"plan":"PLAN"}' ${admin}\n\n` +
    `then, with the "api_key" of its answer:\n\n  curl '${api}?api_key=KEY'\n\n`
  );
}

/** The line above the demo key: what this start made, replaced and topped up, and nothing it did not. */
function demoWhat(app: App, plan: string, created: boolean): string {
  if (created) return `Demo accounts created (memory store). Try the ${plan} key:`;
  const earlier = app.demo.replaced ? 'the earlier one no longer works' : 'its other keys are untouched';
  const topUp = app.demo.granted > 0 ? `; its used-up allowance got ${app.demo.granted} more requests` : '';
  return `Demo account "demo ${plan}" (memory store): a new key for it at this start (${earlier}${topUp}):`;
}

/**
 * Runs the gateway until SIGINT/SIGTERM, then drains in-flight requests and exits. With
 * `server.workers` above one, this process becomes the primary and each worker runs the app.
 */
export async function runServe(config: Config): Promise<void> {
  const logging = createLogging(config.log);
  exitOnFatal(logging);
  // Lines still buffered go out however the process ends on its own (a signal's stop flushes too).
  process.once('exit', () => logging.flushSync());
  // The banner and the console's sign-in links go through process.stdout: with its reader gone
  // (EPIPE) they are dropped, as the log's own writes are, rather than failing the process.
  process.stdout.on('error', () => undefined);
  const workers = config.server.workers === 'auto' ? availableParallelism() : config.server.workers;
  if (workers > 1 && cluster.isPrimary) return runPrimary(config, workers, logging);

  // Handled from before the start: the listeners serve before startApp resolves (demo accounts are
  // still being written), and a SIGTERM then must drain as any other, not end the process mid-count.
  let signalled: string | null = null;
  let stop = (reason: string): void => {
    signalled ??= reason;
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A worker whose primary is gone has no one to restart or stop it.
  if (cluster.isWorker) process.on('disconnect', () => stop('primary gone'));
  const app = await startApp(config, { log: logging.log, droppedLogLines: logging.droppedLines });
  logging.flush();
  if (cluster.isWorker) {
    app.metrics.clusterWide(clusterMetricsText(app.metrics.registry));
    process.send?.(READY);
  }
  const portal =
    app.portalUrl === null
      ? ''
      : `Customer portal: ${app.portalUrl}${app.config.portal.smtp.url === '' ? ' (no SMTP server set: sign-in links are printed here)' : ''}\n\n`;
  const banner = demoBanner(app) + portal;
  // The one place a key is printed: on the console at start, not in a log line.
  if (banner !== '') process.stdout.write(banner);
  // Idle keep-alive connections get this long to send a request already on its way.
  const drainMs = Math.min(1000, config.server.keep_alive_timeout_ms);
  let stopping = false;
  stop = (reason: string): void => {
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
  if (signalled !== null) stop(signalled);
}
