import { createHash } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import type { Logger } from 'pino';
import { retryDelay } from './connection.js';
import { type CallReceiver, LeanCalls, type Pending } from './lean-calls.js';
import { bulk, command, RespError, RespParser, type RespValue } from './resp.js';

export interface LeanOptions {
  script: string;
  /** The server to connect to now, or null while unknown (Sentinel: the command connection is down). */
  address: () => { host: string; port: number } | null;
  /** TLS options (rediss://), or undefined for plain TCP. */
  tls: ConnectionOptions | undefined;
  username: string | undefined;
  password: string | undefined;
  db: number;
  commandTimeoutMs: number;
  connectTimeoutMs: number;
  /** What a failed call's receiver is given (the store's STORE_UNAVAILABLE). */
  failure: (err: Error) => Error;
  /** Whether the command connection is ready: while it is not, this one waits for follow(). */
  commandsReady: () => boolean;
  log: Logger;
}

type State = 'down' | 'connecting' | 'ready' | 'closed';

/**
 * One connection of its own for the consume script, beside the ioredis command connection: a
 * call is one string written, its reply parsed from the socket's Buffers into plain values and
 * handed to a receiver, with no promise, no command object and no argument conversion per call.
 *
 * Failure rules, as the ioredis path has them (connection.ts): no offline queue (while the
 * connection is down a call fails at once; while it is made again beside a command connection
 * that is back, a call waits for it, within its timeout), a call not answered within
 * `commandTimeoutMs` fails, and no call is ever sent twice, since one whose reply was lost may have counted. The one
 * exception is NOSCRIPT (Redis lost its script cache, e.g. SCRIPT FLUSH): Redis ran nothing, so
 * that call is sent once more as EVAL, which also loads the script for the next ones. A timed-out
 * call stays in the FIFO until its reply comes, so replies keep matching their calls; the consume
 * script's deadline (redis-clock.ts) makes one Redis runs too late count nothing. A dropped
 * connection fails every call in flight and reconnects with the command connection's backoff,
 * and only while that connection is up: after an outage it follows the command connection back
 * (follow()), so that the store comes back as one and its outage log ends once
 * (test/http/store-outage-log.test.ts).
 */
export class LeanConsume {
  private socket: Socket | null = null;
  private state: State = 'down';
  private readonly parser = new RespParser((reply) => this.onReply(reply));
  private readonly calls: LeanCalls;
  /** Handshake replies still to come while connecting, first first: whether an error reply is fatal. */
  private handshake: boolean[] = [];
  private attempts = 0;
  private connectedTo = '';
  private down = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private connectTimer: NodeJS.Timeout | undefined;
  private readonly ticker: NodeJS.Timeout;
  private readonly sha: string;
  private readonly evalsha: string;
  private readonly eval: string;
  private readyWaiters: Array<() => void> = [];

  constructor(private readonly o: LeanOptions) {
    this.sha = createHash('sha1').update(o.script).digest('hex');
    this.evalsha = `${bulk('EVALSHA')}${bulk(this.sha)}`;
    this.eval = `${bulk('EVAL')}${bulk(o.script)}`;
    this.calls = new LeanCalls(o.failure);
    // Timeouts are checked a few times per timeout, not timed per call, and a call is failed only
    // after a poll phase that began after its timeout: the replies already waiting in the socket
    // then are read first. Checked in the timer itself, after an event loop held past the timeout
    // (CPU throttled, a long GC, SIGSTOP), calls Redis counted in time were answered 503; checked
    // in the same turn's check phase, so were replies that came while its poll phase was busy
    // (test/store/redis-lean-busy.test.ts): the moment is taken in one turn, applied in the next.
    const expire = (): void => {
      const limit = Date.now() - o.commandTimeoutMs;
      setImmediate(() => this.calls.expire(limit));
    };
    this.ticker = setInterval(() => setImmediate(expire), Math.max(5, Math.min(50, o.commandTimeoutMs / 10))).unref();
    this.connect();
  }

  /** Resolves once the connection is first ready (at once if it is). */
  ready(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /**
   * Sends EVALSHA of the script: `body` is its keys then its arguments (`argc` of them in all,
   * each a RESP bulk string), `numKeys` of them keys.
   */
  call(numKeys: number, argc: number, body: string, receiver: CallReceiver): void {
    const socket = this.socket;
    const connecting = this.state === 'connecting';
    if ((this.state !== 'ready' && !connecting) || socket === null) {
      receiver.failed(this.o.failure(new Error(this.state === 'closed' ? 'Connection is closed.' : 'not connected')));
      return;
    }
    const entry: Pending = {
      receiver,
      numKeys: bulk(String(numKeys)),
      argc,
      body,
      sentAt: Date.now(),
      done: false,
      retried: false,
    };
    // Reconnecting beside a command connection that is back: held for at most the timeout, so
    // that the first requests after an outage do not fail on this connection alone.
    if (connecting) this.calls.hold(entry);
    else this.send(socket, entry);
  }

  private send(socket: Socket, entry: Pending): void {
    this.calls.sent(entry);
    socket.write(`*${entry.argc + 3}\r\n${this.evalsha}${entry.numKeys}${entry.body}`);
  }

  /**
   * The command connection reached the server (again): if the server is now another one (a
   * Sentinel failover), this connection moves there; its calls in flight fail.
   */
  follow(): void {
    const now = this.o.address();
    if (this.state === 'down' && this.socket === null) {
      clearTimeout(this.retryTimer);
      return this.connect();
    }
    if (this.state === 'ready' && now !== null && `${now.host}:${now.port}` !== this.connectedTo)
      this.socket?.destroy(new Error(`the primary moved to ${now.host}:${now.port}`));
  }

  close(): void {
    this.state = 'closed';
    clearInterval(this.ticker);
    clearTimeout(this.retryTimer);
    clearTimeout(this.connectTimer);
    this.socket?.destroy();
    this.calls.failAll(new Error('Connection is closed.'));
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private connect(): void {
    if (this.state === 'closed') return;
    const to = this.o.address();
    // Sentinel: until the command connection has found the primary; follow() starts it then.
    if (to === null) return this.retry(null);
    this.state = 'connecting';
    this.connectedTo = `${to.host}:${to.port}`;
    const socket =
      this.o.tls === undefined
        ? netConnect({ host: to.host, port: to.port })
        : tlsConnect({ host: to.host, port: to.port, ...this.o.tls });
    this.socket = socket;
    socket.setNoDelay(true);
    this.connectTimer = setTimeout(
      () => socket.destroy(new Error(`not connected within ${this.o.connectTimeoutMs} ms`)),
      this.o.connectTimeoutMs,
    ).unref();
    socket.once(this.o.tls === undefined ? 'connect' : 'secureConnect', () => this.greet(socket));
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      try {
        this.parser.feed(chunk);
      } catch (err) {
        socket.destroy(err as Error);
      }
    });
    socket.on('error', (err) => {
      if (!this.down && this.state !== 'closed')
        this.o.log.warn({ err, connection: 'consume' }, 'redis connection failed; retrying');
      this.down = true;
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      clearTimeout(this.connectTimer);
      this.parser.reset();
      this.calls.failAll(new Error('Connection is closed.'));
      if (this.state !== 'closed') this.retry(null);
    });
  }

  /** AUTH, SELECT, a name for CLIENT LIST, and the script loaded: one write, answered in order. */
  private greet(socket: Socket): void {
    const { username, password, db, script } = this.o;
    let out = '';
    this.handshake = [];
    if (password !== undefined) {
      out += username === undefined ? command('AUTH', password) : command('AUTH', username, password);
      this.handshake.push(true);
    }
    if (db !== 0) {
      out += command('SELECT', String(db));
      this.handshake.push(true);
    }
    // The name only helps CLIENT LIST: a user whose ACL refuses it still consumes.
    out += command('CLIENT', 'SETNAME', 'fuel-gateway-consume') + command('SCRIPT', 'LOAD', script);
    this.handshake.push(false, true);
    socket.write(out);
  }

  private retry(err: Error | null): void {
    this.state = 'down';
    this.calls.failHeld(new Error('not connected'));
    if (err !== null && !this.down)
      this.o.log.warn({ err, connection: 'consume' }, 'redis connection failed; retrying');
    if (err !== null) this.down = true;
    // While the command connection is down too, its return (follow()) starts the next attempt:
    // back first on its own, this one would count requests the other cannot yet serve, and the
    // store's outage would end and begin again.
    if (!this.o.commandsReady()) return;
    this.retryTimer = setTimeout(() => this.connect(), retryDelay(++this.attempts)).unref();
  }

  private onReply(reply: RespValue): void {
    if (this.state === 'connecting') return this.greeted(reply);
    const entry = this.calls.answered();
    if (entry.done) {
      // Timed out and answered 503, then run after all: Redis writes a reply once the rest of its
      // backlog has run, which a thawing Redis (every call held in the stall) makes late.
      if (!(reply instanceof RespError)) entry.receiver.late(reply);
      return;
    }
    if (reply instanceof RespError) {
      // NOSCRIPT: Redis ran nothing, so this (and only this) is safe to send again.
      if (reply.message.startsWith('NOSCRIPT') && !entry.retried && this.socket !== null) {
        entry.retried = true;
        this.calls.sent(entry);
        this.socket.write(`*${entry.argc + 3}\r\n${this.eval}${entry.numKeys}${entry.body}`);
        return;
      }
      entry.done = true;
      entry.receiver.failed(this.o.failure(new Error(reply.message)));
      // A demoted primary: the command connection reconnects to the new one, and so does this.
      if (reply.message.startsWith('READONLY')) this.socket?.destroy();
      return;
    }
    entry.done = true;
    entry.receiver.replied(reply);
  }

  private greeted(reply: RespValue): void {
    const fatal = this.handshake.shift();
    if (reply instanceof RespError && fatal !== false) throw reply;
    if (this.handshake.length > 0) return;
    if (reply !== this.sha) throw new Error(`SCRIPT LOAD answered ${String(reply)}, expected ${this.sha}`);
    clearTimeout(this.connectTimer);
    this.state = 'ready';
    this.attempts = 0;
    if (this.down) this.o.log.info({ connection: 'consume' }, 'redis connection restored');
    this.down = false;
    for (const entry of this.calls.release()) if (this.socket !== null) this.send(this.socket, entry);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }
}
