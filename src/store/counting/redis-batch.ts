import { storeCalls } from '../../telemetry/store-calls.js';
import { decodeAccount, pairsToRecord } from '../redis/codec.js';
import type { BurstState, ConsumeReceiver, ConsumeResult, ConsumeSpec, Threshold } from './interface.js';
import {
  ARG,
  CONSUME_ARGS,
  CONSUME_KEYS,
  CONSUME_TAIL,
  encodeBurst,
  encodeNote,
  encodeThresholds,
  KEY,
  recordMeta,
  TAIL,
} from './lua.js';

// Bounds how long one script call holds Redis (each request costs it a few microseconds).
const MAX_BATCH = 512;
const INACTIVE: ConsumeResult = Object.freeze({ kind: 'inactive' });
const CHANGED: ConsumeResult = Object.freeze({ kind: 'changed' });

/** Sends one CONSUME script call: KEYS then ARGV, as the script's contract (lua.ts) lays them out. */
export type ConsumeScript = (numKeys: number, keysAndArgs: string[]) => Promise<ConsumeReply>;

/** CONSUME's reply: integers, and the account's fields for a request that asked for them (lua.ts). */
export type ConsumeReply = Array<number | string[]>;

const NO_THRESHOLDS: readonly Threshold[] = [];

/**
 * A spec's keys and arguments as the script lays them out (KEY and ARG, 0-based here), noted on
 * the spec by the batcher that built them. The thresholds shrink as they are reached: their
 * encoding is redone only when the spec's list was replaced.
 */
class Noted {
  encodedFrom: readonly Threshold[] | undefined = undefined;
  constructor(
    readonly batcher: ConsumeBatcher,
    readonly keys: readonly string[],
    readonly args: string[],
  ) {}
}

/** The names of a request's keys: built once per spec (`Noted`), never per request. */
export interface ConsumeKeys {
  account: string;
  counter: string;
  days: string;
}

/** The parts of a ConsumeBatcher: its constructor's options. */
export interface ConsumeBatcherOptions {
  /** The request's account hash (KEY.account), and its period's counter and days (ARG.counter, ARG.days). */
  keysOf: (spec: ConsumeSpec) => ConsumeKeys;
  script: ConsumeScript;
  /** One call per request (Redis Cluster: requests of different accounts live on different slots). */
  perRequest: boolean;
  onReceiverError: (err: unknown) => void;
  /** Unix ms in Redis' clock after which the call must count nothing (0: none); see redis-clock.ts. */
  deadline?: () => number;
  /** A reply reached a threshold of the spec's alerts (the script raised it, or found it raised). */
  onReached?: (spec: ConsumeSpec, used: number) => void;
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
  private readonly perRequest: boolean;
  private readonly onReceiverError: (err: unknown) => void;
  private readonly deadline: () => number;
  private readonly onReached: (spec: ConsumeSpec, used: number) => void;

  constructor(o: ConsumeBatcherOptions) {
    this.keysOf = o.keysOf;
    this.script = o.script;
    this.perRequest = o.perRequest;
    this.onReceiverError = o.onReceiverError;
    this.deadline = o.deadline ?? (() => 0);
    this.onReached = o.onReached ?? (() => undefined);
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
    const n = specs.length;
    const argsAt = CONSUME_KEYS * n;
    const tailAt = argsAt + CONSUME_ARGS * n;
    const keysAndArgs = new Array<string>(tailAt + CONSUME_TAIL);
    let notes = '';
    for (let i = 0; i < n; i++) {
      const spec = specs[i] as ConsumeSpec;
      const noted = this.notedOf(spec);
      for (let k = 0; k < CONSUME_KEYS; k++) keysAndArgs[CONSUME_KEYS * i + k] = noted.keys[k] as string;
      const at = argsAt + CONSUME_ARGS * i;
      for (let a = 0; a < CONSUME_ARGS; a++) keysAndArgs[at + a] = noted.args[a] as string;
      if (spec.touch !== undefined || spec.load === true) {
        // Sent once: the meter set them for this day (ConsumeSpec.touch) and this miss (.load).
        notes = `${notes === '' ? '' : `${notes},`}${encodeNote(i, spec.load === true, spec.touch)}`;
        spec.touch = undefined;
        spec.load = undefined;
      }
    }
    keysAndArgs[tailAt + TAIL.notes - 1] = notes;
    keysAndArgs[tailAt + TAIL.day - 1] = day;
    keysAndArgs[tailAt + TAIL.deadline - 1] = String(this.deadline());
    this.calls++;
    // Traces on: a CLIENT span for the call when a sampled request it answers asks (store-calls.ts).
    const sentAt = storeCalls.sentAt();
    this.script(argsAt, keysAndArgs).then(
      (reply) => {
        storeCalls.delivering('EVALSHA', n, sentAt);
        try {
          this.deliver(reply, specs, receivers);
        } finally {
          storeCalls.delivered(null);
        }
      },
      (err: Error) => {
        storeCalls.delivering('EVALSHA', n, sentAt);
        for (const r of receivers) this.guard(r, err);
        storeCalls.delivered(err);
      },
    );
  }

  /**
   * A request's keys and arguments as the script takes them, as strings: worked out once per
   * spec, which the meter builds once per cached account and period, so a warm request builds
   * no key and converts no number.
   */
  private notedOf(spec: ConsumeSpec): Noted {
    const memo = spec.storeMemo;
    const noted = memo instanceof Noted && memo.batcher === this ? memo : this.note(spec);
    const pending = spec.alerts?.pending ?? NO_THRESHOLDS;
    if (noted.encodedFrom !== pending) {
      noted.encodedFrom = pending;
      noted.args[ARG.alerts - 1] = encodeThresholds(pending);
    }
    return noted;
  }

  private note(spec: ConsumeSpec): Noted {
    const keys: string[] = [];
    const names = this.keysOf(spec);
    keys[KEY.account - 1] = names.account;
    const r = spec.record;
    const args: string[] = [];
    args[ARG.revision - 1] = String(spec.revision);
    args[ARG.counter - 1] = names.counter;
    args[ARG.days - 1] = names.days;
    args[ARG.record - 1] = `${spec.expireAtMs} ${spec.limit} ${recordMeta(
      spec.periodId,
      r?.kind ?? 'monthly',
      r?.startMs ?? 0,
      r?.endMs ?? spec.expireAtMs,
      r?.plan ?? '',
    )}`;
    args[ARG.alerts - 1] = '';
    args[ARG.cap - 1] = String(spec.cap ?? spec.limit);
    args[ARG.burst - 1] = encodeBurst(spec.burst);
    const noted = new Noted(this, keys, args);
    spec.storeMemo = noted;
    return noted;
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

/** One request's reply: its code and count, and with a burst limit the window's room and wait at `at`. */
function decode(
  code: number | string[] | undefined,
  used: number | string[] | undefined,
  burstReply: ConsumeReply | null,
  at: number,
): ConsumeResult | null {
  if (typeof used !== 'number') return null;
  let burst: BurstState | undefined;
  if (burstReply !== null) {
    const remaining = burstReply[at];
    const resetMs = burstReply[at + 1];
    if (typeof remaining !== 'number' || typeof resetMs !== 'number') return null;
    burst = { remaining, resetMs };
  }
  switch (code) {
    case 0:
      return burst === undefined ? { kind: 'ok', used } : { kind: 'ok', used, burst };
    case 1:
      return burst === undefined ? { kind: 'exhausted', used } : { kind: 'exhausted', used, burst };
    case 2:
      return INACTIVE;
    case 3:
      return CHANGED;
    case 4:
      return burst === undefined ? null : { kind: 'burst', used, burst };
  }
  return null;
}
