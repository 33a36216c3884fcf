import { write, writeSync } from 'node:fs';

// One write takes at most this much of what is waiting.
const MAX_WRITE = 4 * 16384;
// A full pipe (EAGAIN) is tried again after this.
const RETRY_MS = 100;
// How long flushSync waits on a full pipe before it drops the rest: an exit must not wait on a reader.
const FLUSH_SYNC_MS = 1000;

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
  private queue: Buffer[] = [];
  /** Bytes queued or being written. */
  private held = 0;
  private writing = false;

  constructor(
    private readonly fd: number,
    private readonly maxBytes: number,
    private readonly drop: (data: Buffer) => void,
  ) {}

  write(data: Buffer): void {
    if (this.gone || this.held + data.length > this.maxBytes) return this.drop(data);
    this.queue.push(data);
    this.held += data.length;
    if (!this.writing) this.next();
  }

  /**
   * Writes what is queued, synchronously. A write still in flight finishes on its own, maybe
   * after these (as with sonic-boom): only at exit, where order matters less than getting out.
   */
  flushSync(): void {
    const end = Date.now() + FLUSH_SYNC_MS;
    for (let chunk = this.take(); chunk !== null; chunk = this.take()) {
      while (chunk.length > 0) {
        try {
          const n = writeSync(this.fd, chunk);
          this.held -= n;
          chunk = chunk.subarray(n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= end) return this.die(chunk);
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        }
      }
    }
  }

  private next(): void {
    const chunk = this.take();
    this.writing = chunk !== null;
    if (chunk) this.send(chunk);
  }

  /** What is queued, joined up to MAX_WRITE (one buffer at least); null when nothing is. */
  private take(): Buffer | null {
    let n = 0;
    let bytes = 0;
    for (const b of this.queue) {
      if (n > 0 && bytes + b.length > MAX_WRITE) break;
      bytes += b.length;
      n++;
    }
    if (n === 0) return null;
    const parts = this.queue.splice(0, n);
    return n === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, bytes);
  }

  private send(chunk: Buffer): void {
    write(this.fd, chunk, (err, n) => {
      if (this.gone) return this.drop(chunk.subarray(err ? 0 : n));
      if (err?.code === 'EAGAIN') return void setTimeout(() => this.send(chunk), RETRY_MS).unref();
      if (err) return this.die(chunk);
      this.held -= n;
      if (n < chunk.length) this.send(chunk.subarray(n));
      else this.next();
    });
  }

  private die(unwritten: Buffer): void {
    this.gone = true;
    for (const b of [unwritten, ...this.queue.splice(0)]) this.drop(b);
  }
}
