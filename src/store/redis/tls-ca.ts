import { readFileSync } from 'node:fs';
import type { Config } from '../../config/config-schema.js';
import { GatewayError } from '../../failures.js';

/**
 * The TLS options of the store's connections: none for redis://, and for rediss:// the CA file's
 * certificates when one is named (else the system's). An unreadable file is a config error
 * naming the setting, found by `config check` as by the start (cli/start-config.ts).
 */
export function tlsOptions(o: Config['store']['redis']): { tls?: { ca?: Buffer } } {
  if (!o.url.startsWith('rediss://')) return {};
  if (o.tls_ca_file === undefined) return { tls: {} };
  try {
    return { tls: { ca: readFileSync(o.tls_ca_file) } };
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new GatewayError('CONFIG_INVALID', `store.redis.tls_ca_file: cannot read ${o.tls_ca_file} (${why})`);
  }
}
