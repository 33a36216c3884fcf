import { storeCalls } from '../../telemetry/store-calls.js';
import { decodeAccount, pairsToRecord } from '../redis/codec.js';
import type { CallReceiver } from '../redis/lean-calls.js';
import type { LeanConsume } from '../redis/lean-consume.js';
import { bulk, type RespValue } from '../redis/resp.js';
import { type ConsumeKeys, type ConsumeReply, decode, notedOf, wire } from './consume-args.js';
import type { ConsumeReceiver, ConsumeResult, ConsumeSpec } from './interface.js';
import { CONSUME_ARGS, CONSUME_KEYS, CONSUME_TAIL, encodeNote, TAIL } from './lua.js';

export type { ConsumeKeys, ConsumeReply };

// Requests per script call at most: a full batch is sent at once, the rest on setImmediate. Small
// calls keep several in flight, so Redis runs one while the gateway parses the reply of another
// and gathers the next (issue 43; docs/performance.md).
export const MAX_BATCH = 16;

/** Sends one CONSUME script call: KEYS then ARGV, as the script's contract (lua.ts) lays them out. */
export type ConsumeScript = (numKeys: number, keysAndArgs: string[]) => Promise<ConsumeReply>;

/** The store's own consume connection (lean-consume.ts), and how its calls meet the store's rules. */
export interface LeanScript {
  connection: LeanConsume;
  /** While the store starts, what calls wait for (backend.ts `currentGate`); null: nothing. */
  gate: () => Promise<unknown> | null;
  /** A failed start as the requests get it (STORE_UNAVAILABLE). */
  failure: (err: unknown) => Error;
}

/** The parts of a ConsumeBatcher: its constructor's options. */
export interface ConsumeBatcherOptions {
  /** The request's account hash (KEY.account), and its period's counter and days (ARG.counter, ARG.days). */
  keysOf: (spec: ConsumeSpec) => ConsumeKeys;
  /** Through ioredis (Redis Cluster), or `lean`: through the store's own consume connection. */
  script: ConsumeScript;
  lean?: LeanScript;
  /** One call per request (Redis Cluster: requests of different accounts live on different slots). */
  perRequest: boolean;
  onReceiverError: (err: unknown) => void;
  /** Unix ms in Redis' clock after which the call must count nothing (0: none); see redis-clock.ts. */
  deadline?: () => number;
  /** A reply reached a threshold of the spec's alerts (the script raised it, or found it raised). */
  onReached?: (spec: ConsumeSpec, used: number) => void;
  /** A request answered 503 (its call timed out) that Redis counted after all, on `day`: to give back. */
  onLate?: (spec: ConsumeSpec, day: string) => void;
}

/**
 * Gathers the consumes that arrive in one event-loop turn into one CONSUME script call, and
 * hands each request its own answer from the one reply.
 *
 * The flush runs on `setImmediate`: requests read from every socket in one poll phase arrive
 * before it, while `process.nextTick` would flush after each socket's callback and batch little.
 * A failed call fails every request in it (the caller answers 503); nothing is ever resent,
 * since a call whose reply was lost may have counted. The requests of one call share their day
 * (one argument, not one per request): a request for another day sends what is gathered first.
 */
export class ConsumeBatcher {
  private specs: ConsumeSpec[] = [];
  private receivers: ConsumeReceiver[] = [];
  private day = '';
  private scheduled = false;
  /** Script calls sent so far, for metrics. */
  calls = 0;

  private readonly keysOf: (spec: ConsumeSpec) => ConsumeKeys;
  private readonly script: ConsumeScript;
  private readonly lean: LeanScript | undefined;
  private readonly perRequest: boolean;
  private readonly onReceiverError: (err: unknown) => void;
  private readonly deadline: () => number;
  private readonly onReached: (spec: ConsumeSpec, used: number) => void;
  private readonly onLate: (spec: ConsumeSpec, day: string) => void;

  constructor(o: ConsumeBatcherOptions) {
    this.keysOf = o.keysOf;
    this.script = o.script;
    this.lean = o.lean;
    this.perRequest = o.perRequest;
    this.onReceiverError = o.onReceiverError;
    this.deadline = o.deadline ?? (() => 0);
    this.onReached = o.onReached ?? (() => undefined);
    this.onLate = o.onLate ?? (() => undefined);
  }

  add(spec: ConsumeSpec, day: string, receiver: ConsumeReceiver): void {
    if (this.perRequest) return this.send([spec], [receiver], day);
    if (day !== this.day) {
      this.flush();
      this.day = day;
    }
    this.specs.push(spec);
    this.receivers.push(receiver);
    if (this.specs.length >= MAX_BATCH) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
  }

  private readonly onImmediate = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.specs.length === 0) return;
    const specs = this.specs;
    const receivers = this.receivers;
    this.specs = [];
    this.receivers = [];
    this.send(specs, receivers, this.day);
  }

  private send(specs: ConsumeSpec[], receivers: ConsumeReceiver[], day: string): void {
    this.calls++;
    // Traces on: a CLIENT span for the call when a sampled request it answers asks (store-calls.ts).
    const batch = new Batch(this, specs, receivers, storeCalls.sentAt(), day);
    const lean = this.lean;
    if (lean === undefined) this.sendStrings(batch, day);
    else this.sendWire(lean, batch, day);
  }

  /** Through ioredis: the keys and arguments as strings. */
  private sendStrings(batch: Batch, day: string): void {
    const { specs } = batch;
    const n = specs.length;
    const argsAt = CONSUME_KEYS * n;
    const tailAt = argsAt + CONSUME_ARGS * n;
    const keysAndArgs = new Array<string>(tailAt + CONSUME_TAIL);
    for (let i = 0; i < n; i++) {
      const noted = notedOf(specs[i] as ConsumeSpec, this, this.keysOf);
      for (let k = 0; k < CONSUME_KEYS; k++) keysAndArgs[CONSUME_KEYS * i + k] = noted.keys[k] as string;
      const at = argsAt + CONSUME_ARGS * i;
      for (let a = 0; a < CONSUME_ARGS; a++) keysAndArgs[at + a] = noted.args[a] as string;
    }
    keysAndArgs[tailAt + TAIL.notes - 1] = notesOf(specs);
    keysAndArgs[tailAt + TAIL.day - 1] = day;
    keysAndArgs[tailAt + TAIL.deadline - 1] = String(this.deadline());
    this.script(argsAt, keysAndArgs).then(
      (reply) => batch.replied(reply),
      (err: Error) => batch.failed(err),
    );
  }

  /** Through the lean connection: RESP text, from each spec's wire strings, built once per spec. */
  private sendWire(lean: LeanScript, batch: Batch, day: string): void {
    const { specs } = batch;
    const n = specs.length;
    let keys = '';
    let args = '';
    for (let i = 0; i < n; i++) {
      const noted = notedOf(specs[i] as ConsumeSpec, this, this.keysOf);
      keys += noted.keysWire ?? wire(noted, 'keys');
      args += noted.argsWire ?? wire(noted, 'args');
    }
    const tail: string[] = [];
    tail[TAIL.notes - 1] = notesOf(specs);
    tail[TAIL.day - 1] = day;
    tail[TAIL.deadline - 1] = String(this.deadline());
    let body = `${keys}${args}`;
    for (const t of tail) body += bulk(t);
    const numKeys = CONSUME_KEYS * n;
    const argc = (CONSUME_KEYS + CONSUME_ARGS) * n + CONSUME_TAIL;
    const gate = lean.gate();
    if (gate === null) lean.connection.call(numKeys, argc, body, batch);
    else
      gate.then(
        () => lean.connection.call(numKeys, argc, body, batch),
        (err: unknown) => batch.failed(lean.failure(err)),
      );
  }

  /** Hands each request of a call its answer from the call's reply. */
  delivered(reply: ConsumeReply, batch: Batch): void {
    storeCalls.delivering('EVALSHA', batch.specs.length, batch.sentAt);
    try {
      this.deliver(reply, batch.specs, batch.receivers);
    } finally {
      storeCalls.delivered(null);
    }
  }

  /** A failed call fails every request in it. */
  failedAll(err: Error, batch: Batch): void {
    storeCalls.delivering('EVALSHA', batch.specs.length, batch.sentAt);
    for (const r of batch.receivers) this.guard(r, err);
    storeCalls.delivered(err);
  }

  private deliver(reply: ConsumeReply, specs: ConsumeSpec[], receivers: ConsumeReceiver[]): void {
    let at = 0;
    for (let i = 0; i < receivers.length; i++) {
      const receiver = receivers[i] as ConsumeReceiver;
      const spec = specs[i] as ConsumeSpec;
      const code = reply[at];
      const result = decode(code, reply[at + 1], spec.burst === undefined ? null : reply, at + 2);
      at += spec.burst === undefined ? 2 : 4;
      const fields = reply[at];
      // The account, asked for by ConsumeSpec.load: the only item of a reply that is not an integer.
      if (Array.isArray(fields)) {
        at++;
        const account = decodeAccount(pairsToRecord(fields));
        if (result !== null && result.kind !== 'inactive' && result.kind !== 'changed' && account !== null)
          result.account = account;
      }
      this.guard(receiver, result ?? new Error(`unexpected reply from the consume script: ${String(code)}`));
      // After the answer: moving the crossing to the outbox is no part of the request.
      const alerts = spec.alerts;
      if (alerts !== undefined && result !== null && 'used' in result && result.used >= alerts.next)
        this.onReached(spec, result.used);
    }
  }

  /**
   * A call answered 503 at its timeout that Redis ran after all: the requests it counted go back.
   * Read as any reply, with receivers of its own (this path is rare: the hot one allocates nothing).
   */
  late(reply: ConsumeReply, batch: Batch): void {
    const giveBack = batch.specs.map(
      (spec): ConsumeReceiver => ({
        consumed: (result) => {
          if (result.kind === 'ok') this.onLate(spec, batch.day);
        },
        failed: () => undefined,
      }),
    );
    this.deliver(reply, batch.specs, giveBack);
  }

  /** A receiver that throws must not keep the others of its batch from their answers. */
  private guard(receiver: ConsumeReceiver, outcome: ConsumeResult | Error): void {
    try {
      if (outcome instanceof Error) receiver.failed(outcome);
      else receiver.consumed(outcome);
    } catch (err) {
      this.onReceiverError(err);
    }
  }
}

/**
 * TAIL.notes (lua.ts encodeNote): what the meter set on a spec for this day (ConsumeSpec.touch)
 * and this miss (.load), sent once, then cleared.
 */
function notesOf(specs: ConsumeSpec[]): string {
  let notes = '';
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as ConsumeSpec;
    if (spec.touch === undefined && spec.load !== true) continue;
    notes = `${notes === '' ? '' : `${notes},`}${encodeNote(i, spec.load === true, spec.touch)}`;
    spec.touch = undefined;
    spec.load = undefined;
  }
  return notes;
}

/** One script call's requests, and where its outcome goes: one object per call, no promise. */
class Batch implements CallReceiver {
  constructor(
    private readonly batcher: ConsumeBatcher,
    readonly specs: ConsumeSpec[],
    readonly receivers: ConsumeReceiver[],
    readonly sentAt: number,
    readonly day: string,
  ) {}

  replied(reply: RespValue): void {
    if (Array.isArray(reply)) this.batcher.delivered(reply as ConsumeReply, this);
    else this.failed(new Error(`unexpected reply from the consume script: ${String(reply)}`));
  }

  failed(err: Error): void {
    this.batcher.failedAll(err, this);
  }

  late(reply: RespValue): void {
    if (Array.isArray(reply)) this.batcher.late(reply as ConsumeReply, this);
  }
}
