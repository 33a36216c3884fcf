/**
 * Log lines gathered as bytes in one buffer, handed to `sink` as one Buffer when the next line
 * would not fit and whenever the owner flushes (a timer, exit). Writing a line's parts straight
 * into bytes costs less than joining them into a string and encoding it later
 * (docs/performance.md). A caller makes room for its whole line first (`room`), so a line is never
 * split between two flushes.
 */
export class LineBuffer {
  private readonly buf: Buffer;
  private at = 0;

  constructor(
    readonly size: number,
    private readonly sink: (data: Buffer) => void,
  ) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Bytes waiting. */
  get held(): number {
    return this.at;
  }

  /** Makes room for `bytes` more, flushing first if they would not fit; false when no buffer could hold them. */
  room(bytes: number): boolean {
    if (bytes > this.size) return false;
    if (this.at + bytes > this.size) this.flush();
    return true;
  }

  /**
   * A string, UTF-8; room for `s.length * 3` bytes was made. Byte by byte while it is ASCII (as
   * every access-log field is): for strings this short a loop costs less than a call into
   * Buffer's native encoder, as do the copies in `bytes`.
   */
  text(s: string): void {
    const { buf } = this;
    let at = this.at;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.at = at + buf.write(s.slice(i), at, 'utf8');
        return;
      }
      buf[at++] = c;
    }
    this.at = at;
  }

  bytes(b: Uint8Array): void {
    const { buf } = this;
    let at = this.at;
    for (let i = 0; i < b.length; i++) buf[at++] = b[i] as number;
    this.at = at;
  }

  /** A whole number ≥ 0, as its decimal digits. */
  digits(n: number): void {
    let length = 1;
    for (let m = n; m >= 10; m = Math.floor(m / 10)) length++;
    let i = this.at + length;
    this.at = i;
    let m = n;
    do {
      this.buf[--i] = 48 + (m % 10);
      m = Math.floor(m / 10);
    } while (m > 0);
  }

  /** A line too long for the buffer: what is held goes first, then the line, as it is. */
  passOn(line: Buffer): void {
    this.flush();
    this.sink(line);
  }

  /** Hands what is held to the sink as a Buffer of its own (the sink may keep it), and starts again. */
  flush(): void {
    if (this.at === 0) return;
    const out = Buffer.allocUnsafe(this.at);
    this.buf.copy(out, 0, 0, this.at);
    this.at = 0;
    this.sink(out);
  }
}
