import type { MemoryData } from '../memory/state.js';
import type { Passkey } from './interface.js';

/** Passkeys in the embedded store, kept in its state file with the members; each call one synchronous step. */
export class MemoryPasskeys {
  constructor(protected readonly data: MemoryData) {}

  async addPasskey(passkey: Passkey): Promise<boolean> {
    if (this.data.passkeys.has(passkey.id)) return false;
    this.data.passkeys.set(passkey.id, { ...passkey, transports: [...passkey.transports] });
    await this.data.save();
    return true;
  }

  async passkey(id: string): Promise<Passkey | null> {
    const p = this.data.passkeys.get(id);
    return p === undefined ? null : { ...p, transports: [...p.transports] };
  }

  async passkeys(email: string): Promise<Passkey[]> {
    return [...this.data.passkeys.values()]
      .filter((p) => p.email === email)
      .map((p) => ({ ...p, transports: [...p.transports] }))
      .sort(oldestFirst);
  }

  async usePasskey(id: string, counter: number, at: string): Promise<boolean> {
    const p = this.data.passkeys.get(id);
    if (p === undefined || !(counter > p.counter || (counter === 0 && p.counter === 0))) return false;
    p.counter = counter;
    p.last_used_at = at;
    await this.data.save();
    return true;
  }

  async removePasskey(email: string, id: string): Promise<boolean> {
    if (this.data.passkeys.get(id)?.email !== email) return false;
    this.data.passkeys.delete(id);
    await this.data.save();
    return true;
  }
}

export const oldestFirst = (a: Passkey, b: Passkey): number =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1;
