import { type AttemptChange, type AttemptGrant, RESERVATION_MS } from '../store/coordination/interface.js';

/**
 * How an attempt at a key this process cannot vouch for was let go to the store: on the
 * instance's one unreserved attempt (`free`), on a reservation of the shared count (`reserved`),
 * past a block at the throttle's bounded rate (`passed`); or not at all (`throttled`).
 */
export type Ticket = 'free' | 'reserved' | 'passed' | 'throttled';

/** An attempt at a key, as the meter makes it (quota/meter.ts): a ticket first, its outcome told after. */
export interface KeyAttempts {
  take(address: string): Ticket | Promise<Ticket>;
  settle(address: string, ticket: Ticket, unknown: boolean): void;
}

/** Runs `look` as an attempt of `address` once it has a ticket, and tells its outcome (null: unknown). */
export async function attempted<T>(
  attempts: KeyAttempts,
  address: string,
  look: () => Promise<T | null>,
): Promise<T | null | 'throttled'> {
  const ticket = await attempts.take(address);
  if (ticket === 'throttled') return ticket;
  let found: T | null;
  try {
    found = await look();
  } catch (err) {
    attempts.settle(address, ticket, false);
    throw err;
  }
  attempts.settle(address, ticket, found === null);
  return found;
}

/** The shared count of an address's attempts (CoordinationStore.invalidKeyAttempts, rule applied). */
export type AttemptLedger = (address: string, change: AttemptChange) => Promise<AttemptGrant>;

// A waiter the shared count had no room for asks again after this long, unless an attempt of
// this instance settles first: the room is held by attempts in flight elsewhere.
const RETRY_MS = 25;
// Addresses with attempts in flight are few; idle ones are forgotten, and past this many swept.
const MAX_ADDRESSES = 10_000;

interface Waiter {
  resolve(ticket: Ticket): void;
  reject(err: unknown): void;
}

interface Slots {
  /** Reservations held and not in use. */
  granted: number;
  /** The free attempt is in flight, or its invalid key not yet counted by the store. */
  freeBusy: boolean;
  /**
   * Until when the shared count's word that it has no room holds (as long as the reservations
   * filling it could): the free attempt waits for a reservation meanwhile.
   */
  fullUntil: number;
  waiting: Waiter[];
  /** What the next exchange tells the shared count. */
  change: AttemptChange;
  /** The free attempt's invalid key is in `change`: the slot opens when the store has counted it. */
  freeReported: boolean;
  asking: boolean;
  retry: NodeJS.Timeout | undefined;
}

const noChange = (): AttemptChange => ({ want: 0, released: 0, failed: 0, unreserved: 0 });
const changed = (c: AttemptChange): boolean => c.released + c.failed + c.unreserved > 0;

/**
 * The attempts in flight of each address at keys this process cannot vouch for. An attempt
 * counts before its key is looked up: it goes to the store on a reservation of the shared count,
 * which grants no more than the limit less the invalid keys and reservations of every instance,
 * or on the one attempt each instance may make unreserved, which waits whenever the count last
 * said it is full and is free again only once the store has counted its failure. So invalid keys
 * from one address, pipelined or spread over connections and instances, never exceed the limit
 * plus one per instance. The rest wait (a customer's keys behind a busy address get in once the
 * attempts ahead of them settle) or are refused when the address is blocked.
 *
 * The shared count is told in batches: an address's changes of one turn of the event loop in one
 * exchange, one exchange at a time.
 */
export class AttemptSlots {
  private readonly slots = new Map<string, Slots>();
  private readonly dirty = new Set<string>();
  private flushing: NodeJS.Immediate | undefined;

  constructor(
    private readonly ledger: AttemptLedger,
    private readonly now: () => number,
    /** The store says the address is blocked. */
    private readonly blocked: (address: string, ms: number) => void,
  ) {}

  /** A ticket for an attempt from `address`, at once when one is to hand, else once one is. */
  take(address: string): Ticket | Promise<Ticket> {
    const s = this.slotsOf(address);
    if (s.waiting.length === 0) {
      const ticket = this.toHand(s);
      if (ticket !== null) return ticket;
    }
    return new Promise<Ticket>((resolve, reject) => {
      s.waiting.push({ resolve, reject });
      this.schedule(address);
    });
  }

  /** The attempt on `ticket` is over: its key was unknown and counts as invalid (`failed`), or not. */
  settle(address: string, ticket: Ticket, failed: boolean): void {
    if (ticket === 'throttled') return;
    const s = this.slotsOf(address);
    if (ticket === 'free') {
      if (failed) {
        s.change.unreserved++;
        s.freeReported = true;
      } else s.freeBusy = false;
    } else if (ticket === 'reserved') {
      // A reservation whose key was found serves the next attempt as it is.
      if (failed) s.change.failed++;
      else s.granted++;
    } else if (failed) s.change.unreserved++;
    this.handOut(address, s);
  }

  /** An invalid key from `address` that needed no attempt (malformed): told to the shared count. */
  report(address: string): void {
    this.slotsOf(address).change.unreserved++;
    this.schedule(address);
  }

  /** The address is blocked: the attempts waiting are refused. */
  refuse(address: string): void {
    const s = this.slots.get(address);
    if (s === undefined) return;
    for (const w of s.waiting.splice(0)) w.resolve('throttled');
    this.schedule(address);
  }

  private toHand(s: Slots): Ticket | null {
    if (s.granted > 0) {
      s.granted--;
      return 'reserved';
    }
    if (!s.freeBusy && s.fullUntil <= this.now()) {
      s.freeBusy = true;
      return 'free';
    }
    return null;
  }

  /** Hands what is to hand to the attempts waiting, and schedules what the shared count must hear. */
  private handOut(address: string, s: Slots): void {
    while (s.waiting.length > 0) {
      const ticket = this.toHand(s);
      if (ticket === null) break;
      s.waiting.shift()?.resolve(ticket);
    }
    if (changed(s.change) || s.granted > 0 || (s.waiting.length > 0 && s.retry === undefined)) this.schedule(address);
    else this.forgetIfIdle(address, s);
  }

  private schedule(address: string): void {
    this.dirty.add(address);
    if (this.flushing !== undefined) return;
    this.flushing = setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = undefined;
    const addresses = [...this.dirty];
    this.dirty.clear();
    for (const address of addresses) {
      const s = this.slots.get(address);
      if (s !== undefined && !s.asking) this.exchange(address, s);
    }
  }

  private exchange(address: string, s: Slots): void {
    // Reservations nobody waits for go back, so that the room serves other instances.
    if (s.waiting.length === 0 && s.granted > 0) {
      s.change.released += s.granted;
      s.granted = 0;
    }
    const change = { ...s.change, want: s.waiting.length };
    if (!changed(change) && change.want === 0) return this.forgetIfIdle(address, s);
    const freeReported = s.freeReported;
    s.change = noChange();
    s.freeReported = false;
    s.asking = true;
    clearTimeout(s.retry);
    s.retry = undefined;
    this.ledger(address, change).then(
      (grant) => this.answered(address, s, grant, freeReported),
      (err: unknown) => {
        s.asking = false;
        if (freeReported) s.freeBusy = false;
        // The store cannot be asked: the attempts waiting fail as their lookups would have.
        for (const w of s.waiting.splice(0)) w.reject(err);
        this.handOut(address, s);
      },
    );
  }

  private answered(address: string, s: Slots, grant: AttemptGrant, freeReported: boolean): void {
    s.asking = false;
    if (freeReported) s.freeBusy = false;
    if (grant.blockedMs > 0) {
      s.granted = 0;
      this.blocked(address, grant.blockedMs);
      this.refuse(address);
      return;
    }
    s.granted += grant.granted;
    s.fullUntil = grant.room ? 0 : this.now() + RESERVATION_MS;
    // No room: ask again a little later, or sooner when an attempt of ours settles.
    if (grant.granted === 0 && s.waiting.length > 0)
      s.retry = setTimeout(() => {
        s.retry = undefined;
        this.schedule(address);
      }, RETRY_MS);
    this.handOut(address, s);
  }

  private slotsOf(address: string): Slots {
    let s = this.slots.get(address);
    if (s === undefined) {
      if (this.slots.size >= MAX_ADDRESSES) this.sweep();
      s = {
        granted: 0,
        freeBusy: false,
        fullUntil: 0,
        waiting: [],
        change: noChange(),
        freeReported: false,
        asking: false,
        retry: undefined,
      };
      this.slots.set(address, s);
    }
    return s;
  }

  /** An address with nothing in flight, waiting or to tell is forgotten, unless its count is full. */
  private forgetIfIdle(address: string, s: Slots): void {
    if (idle(s) && s.fullUntil <= this.now()) this.slots.delete(address);
  }

  /** Too many addresses: the idle ones go, full counts too (each may then make one more attempt). */
  private sweep(): void {
    for (const [address, s] of this.slots) if (idle(s)) this.slots.delete(address);
  }
}

function idle(s: Slots): boolean {
  return (
    !s.asking && !s.freeBusy && s.waiting.length === 0 && s.granted === 0 && !changed(s.change) && s.retry === undefined
  );
}
