import { sendersFor } from '../billing/senders.js';
import { type Config, priceFiles } from '../config/config-schema.js';
import { type LoadOptions, loadConfig } from '../config/load.js';
import { GatewayError } from '../failures.js';
import { readPriceFiles } from '../prices/price-file.js';
import { tlsOptions } from '../store/redis/tls-ca.js';

/**
 * The rules a start applies beyond the config schema: those that read the environment and the
 * files the config names. Each is the very function the start later uses (the exporters'
 * senders, the price files' reader, the store's TLS options), so a rule cannot be changed in one
 * and not the other. A new rule of this kind belongs here.
 */
const RULES: Array<(config: Config, env: NodeJS.ProcessEnv) => unknown> = [
  (c, env) => sendersFor(c.billing.exporters, env, c.webhooks.allow_private_addresses),
  (c) => c.store.type === 'redis' && tlsOptions(c.store.redis),
  (c) => readPriceFiles(priceFiles(c)),
];

/**
 * The configuration as `serve` starts with it, and as `config check` checks it: loaded and
 * validated (loadConfig), then every rule of the start run. Throws CONFIG_INVALID with one line
 * per problem, the same text from both commands.
 */
export function loadStartConfig(opts: LoadOptions & { env: NodeJS.ProcessEnv }): Config {
  const config = loadConfig(opts);
  const lines: string[] = [];
  for (const rule of RULES) {
    try {
      rule(config, opts.env);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      lines.push(...(err.details.length > 0 ? err.details : [err.message]));
    }
  }
  if (lines.length > 0) throw new GatewayError('CONFIG_INVALID', `invalid configuration:\n${lines.join('\n')}`, lines);
  return config;
}
