import { write, writeSync } from 'node:fs';

// One write takes at most this much of what is waiting.
const MAX_WRITE = 4 * 16384;
// A full pipe (EAGAIN) is tried again after this.
const RETRY_MS = 100;
// How long flushSync waits on a full pipe before it drops the rest: an exit must not wait on a reader.
const FLUSH_SYNC_MS = 1000;

/** Told whether a buffer given to `Output.write` was written (true) or dropped (false). */
export type Written = (ok: boolean) => void;

interface Entry {
  data: Buffer;
  written?: Written;
}

/** What Output tells its owner: data it drops, and each write that got through. */
export interface OutputEvents {
  drop(data: Buffer): void;
  /** A write succeeded: the reader takes output again (called before the next write starts). */
  flowed(): void;
}

/**
 * Asynchronous writes to a file descriptor, one at a time, holding at most `maxBytes` waiting
 * (beyond it data goes to `drop`). A write error other than EAGAIN means the reader is gone
 * (EPIPE: a crashed log shipper, a closed terminal, a restarted supervisor): from then on
 * everything goes to `drop`. sonic-boom, used before, retried any error in its flushSync every
 * 100 ms for ever, so SIGTERM with a dead stdout never ended.
 */
export class Output {
  /** Nothing can be written any more. */
  gone = false;
  private queue: Entry[] = [];
  /** Bytes queued or being written. */
  private held = 0;
  private writing = false;

  constructor(
    private readonly fd: number,
    private readonly maxBytes: number,
    private readonly events: OutputEvents,
  ) {}

  /** Queues `data`; `written` hears whether it got out (a warning counts as given only once it has). */
  write(data: Buffer, written?: Written): void {
    if (this.gone || this.held + data.length > this.maxBytes) return this.lose(data, [{ data, written }]);
    this.queue.push({ data, written });
    this.held += data.length;
    if (!this.writing) this.next();
  }

  /**
   * Writes what is queued, synchronously. A write still in flight finishes on its own, maybe
   * after these (as with sonic-boom): only at exit, where order matters less than getting out.
   */
  flushSync(): void {
    const end = Date.now() + FLUSH_SYNC_MS;
    for (let taken = this.take(); taken !== null; taken = this.take()) {
      let chunk = taken.chunk;
      while (chunk.length > 0) {
        try {
          const n = writeSync(this.fd, chunk);
          this.held -= n;
          chunk = chunk.subarray(n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= end)
            return this.die(chunk, taken.entries);
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        }
      }
      for (const e of taken.entries) e.written?.(true);
    }
  }

  private next(): void {
    const taken = this.take();
    this.writing = taken !== null;
    if (taken) this.send(taken.chunk, taken.entries);
  }

  /** What is queued, joined up to MAX_WRITE (one buffer at least); null when nothing is. */
  private take(): { chunk: Buffer; entries: Entry[] } | null {
    let n = 0;
    let bytes = 0;
    for (const e of this.queue) {
      if (n > 0 && bytes + e.data.length > MAX_WRITE) break;
      bytes += e.data.length;
      n++;
    }
    if (n === 0) return null;
    const entries = this.queue.splice(0, n);
    const chunk =
      n === 1
        ? (entries[0] as Entry).data
        : Buffer.concat(
            entries.map((e) => e.data),
            bytes,
          );
    return { chunk, entries };
  }

  private send(chunk: Buffer, entries: Entry[]): void {
    write(this.fd, chunk, (err, n) => {
      if (this.gone) return this.lose(chunk.subarray(err ? 0 : n), entries);
      if (err?.code === 'EAGAIN') return void setTimeout(() => this.send(chunk, entries), RETRY_MS).unref();
      if (err) return this.die(chunk, entries);
      this.held -= n;
      if (n < chunk.length) return this.send(chunk.subarray(n), entries);
      for (const e of entries) e.written?.(true);
      this.events.flowed();
      this.next();
    });
  }

  private die(unwritten: Buffer, entries: Entry[]): void {
    this.gone = true;
    this.lose(unwritten, entries);
    for (const e of this.queue.splice(0)) this.lose(e.data, [e]);
  }

  /** `data` is dropped: counted, and whoever waits on one of `entries` hears it did not get out. */
  private lose(data: Buffer, entries: Entry[]): void {
    this.events.drop(data);
    for (const e of entries) e.written?.(false);
  }
}
