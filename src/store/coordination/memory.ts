import type { MemoryData } from '../memory/state.js';
import type { AttemptChange, AttemptGrant, CoordinationStore, StoreEvent, ThrottleRule } from './interface.js';
import { MemoryAttempts } from './memory-attempts.js';

/**
 * Coordination in one process, which is the whole deployment: it holds every lease, its notes
 * are its own, and it counts the invalid-key attempts of this process alone. Changes are
 * announced by the other concerns through MemoryData.emit.
 */
export class MemoryCoordination implements CoordinationStore {
  private readonly notes = new Map<string, string>();
  private readonly attempts: MemoryAttempts;

  constructor(private readonly data: MemoryData) {
    this.attempts = new MemoryAttempts(data.now, (address, ms) => data.emit({ type: 'blocked', address, ms }));
  }

  subscribe(listener: (event: StoreEvent) => void): void {
    this.data.listeners.push(listener);
  }

  // One process is the whole deployment: it always holds every lease.
  async lease(): Promise<boolean> {
    return true;
  }

  async releaseLease(): Promise<void> {}

  async putNote(name: string, value: string): Promise<void> {
    this.notes.set(name, value);
  }

  async getNote(name: string): Promise<string | null> {
    return this.notes.get(name) ?? null;
  }

  async invalidKeyAttempts(address: string, rule: ThrottleRule, change: AttemptChange): Promise<AttemptGrant> {
    return this.attempts.change(address, rule, change);
  }

  async purgeCache(path: string | null): Promise<void> {
    this.data.emit({ type: 'cache_purge', path });
  }
}
