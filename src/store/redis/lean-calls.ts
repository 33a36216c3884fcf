import type { RespValue } from './resp.js';

/** Where a call's outcome goes: exactly one of the two, once. */
export interface CallReceiver {
  replied(reply: RespValue): void;
  failed(err: Error): void;
  /** The reply to a call already failed (it timed out): what Redis did anyway, to be undone. */
  late(reply: RespValue): void;
}

/** A call of the consume connection. `done`: answered already (it timed out); a reply to it goes to `late`. */
export interface Pending {
  receiver: CallReceiver;
  numKeys: string;
  argc: number;
  body: string;
  sentAt: number;
  done: boolean;
  retried: boolean;
}

/**
 * The consume connection's calls (lean-consume.ts): those sent, oldest first, which Redis answers
 * in order, so a reply is the oldest's; and those held while the connection is made. A call that
 * times out is answered at once but stays in the FIFO until its reply comes, so that replies
 * keep matching their calls.
 */
export class LeanCalls {
  /** Sent, oldest first, from `head`; the first `expired` of them have timed out. */
  private queue: Array<Pending | undefined> = [];
  private head = 0;
  private expired = 0;
  /** Made while connecting: sent once ready, failed at their timeout or if the attempt fails. */
  private held: Pending[] = [];

  constructor(private readonly failure: (err: Error) => Error) {}

  sent(entry: Pending): void {
    this.queue.push(entry);
  }

  hold(entry: Pending): void {
    this.held.push(entry);
  }

  /** The held calls still waiting, to be sent now that the connection is ready. */
  release(): Pending[] {
    return this.held.splice(0).filter((entry) => !entry.done);
  }

  /** The call a reply answers: the oldest sent. */
  answered(): Pending {
    const entry = this.queue[this.head];
    if (entry === undefined) throw new Error('a reply from Redis that no call asked for');
    this.queue[this.head++] = undefined;
    if (this.expired > 0) this.expired--;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return entry;
  }

  /** Fails the calls made before `limit` (ms) and not yet answered; sent ones stay queued for their replies. */
  expire(limit: number): void {
    if (this.held.length > 0 && (this.held[0] as Pending).sentAt <= limit) {
      const late = this.held.filter((entry) => entry.sentAt <= limit);
      this.held = this.held.filter((entry) => entry.sentAt > limit);
      for (const entry of late) this.fail(entry, new Error('Command timed out'));
    }
    for (let i = this.head + this.expired; i < this.queue.length; i++) {
      const entry = this.queue[i] as Pending;
      if (!entry.done && entry.sentAt > limit) return;
      this.expired++;
      this.fail(entry, new Error('Command timed out'));
    }
  }

  failHeld(err: Error): void {
    for (const entry of this.held.splice(0)) this.fail(entry, err);
  }

  /** The connection is gone: every call waiting fails, and none is sent again. */
  failAll(err: Error): void {
    this.failHeld(err);
    const queue = this.queue;
    const head = this.head;
    this.queue = [];
    this.head = 0;
    this.expired = 0;
    for (let i = head; i < queue.length; i++) this.fail(queue[i] as Pending, err);
  }

  private fail(entry: Pending, err: Error): void {
    if (entry.done) return;
    entry.done = true;
    entry.receiver.failed(this.failure(err));
  }
}
