import { startApp } from '../app.js';
import type { Config } from '../config/schema.js';

/** Runs the gateway until SIGINT/SIGTERM, then drains in-flight requests and exits. */
export async function runServe(config: Config): Promise<void> {
  const app = await startApp(config);
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
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
