import type { MemoryData } from '../memory/state.js';
import type { CoordinationStore, StoreEvent } from './interface.js';

/**
 * Coordination in one process, which is the whole deployment: it holds every lease, its notes
 * are its own, and there is no other instance to share invalid keys with. Changes are announced
 * by the other concerns through MemoryData.emit.
 */
export class MemoryCoordination implements CoordinationStore {
  private readonly notes = new Map<string, string>();

  constructor(private readonly data: MemoryData) {}

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

  async reportInvalidKey(): Promise<void> {}

  async purgeCache(path: string | null): Promise<void> {
    this.data.emit({ type: 'cache_purge', path });
  }
}
