import type { Logger } from 'pino';
import type { Config } from '../config/config-schema.js';
import { MemoryStore } from './memory/memory-store.js';
import { RedisStore } from './redis/redis-store.js';
import type { Store } from './store.js';

/** The store the config asks for. `now` drives the memory store's expiry; Redis keeps its own time. */
export function createStore(config: Config, log: Logger, now?: () => number): Store {
  return config.store.type === 'memory'
    ? new MemoryStore(now, config.store.memory.file || null, (err) =>
        log.error(
          { err },
          'memory store: writing its file failed; counts since the last write are not on disk yet (tried again in a second)',
        ),
      )
    : // The cursor outlives the ledger it reads by a day: gone sooner, a period still kept would be billed again.
      new RedisStore(config.store.redis, log, (config.usage.retention_days + 1) * 86_400_000);
}
