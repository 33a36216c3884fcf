import type { CoordinationStore } from '../store/store.js';
import type { Audit } from './audit.js';
import type { PurgeInput } from './input.js';

export interface CacheOperationsDeps {
  /** Announces the purge to every gateway. */
  coordination: CoordinationStore;
  audit: Audit;
}

/** The pass-through cache, for `DELETE /admin/cache` and `cache purge` alike. */
export class CacheOperations {
  private readonly coordination: CoordinationStore;
  private readonly audit: Audit;

  constructor(deps: CacheOperationsDeps) {
    this.coordination = deps.coordination;
    this.audit = deps.audit;
  }

  /**
   * Empties the pass-through cache of every gateway (`all=true`), or one path's entries (a prefix
   * when it ends in `*`): announced through the store, so it reaches them all, this one included,
   * within a second.
   */
  async purgeCache({ path }: PurgeInput, from: string): Promise<{ purged: 'all' | string }> {
    const p = path ?? null;
    await this.coordination.purgeCache(p);
    this.audit({ action: 'cache.purge', from, ...(p === null ? {} : { path: p }) });
    return { purged: p ?? 'all' };
  }
}
