import type { ConsumeReceiver, ConsumeResult, ConsumeSpec } from './interface.js';
import { recordMeta } from './lua.js';

// Bounds how long one script call holds Redis (each request costs it a few microseconds).
const MAX_BATCH = 512;
const INACTIVE: ConsumeResult = Object.freeze({ kind: 'inactive' });
const CHANGED: ConsumeResult = Object.freeze({ kind: 'changed' });

/** Sends one CONSUME script call: KEYS then ARGV, as the script's contract (lua.ts) lays them out. */
export type ConsumeScript = (numKeys: number, keysAndArgs: string[]) => Promise<number[]>;

/** Account key, counter key, days key, revision, limit, counter expiry, record. */
type SpecArgs = readonly [string, string, string, string, string, string, string];

/** A spec's arguments, noted on the spec by the batcher that built them. */
class Noted {
  constructor(
    readonly batcher: ConsumeBatcher,
    readonly args: SpecArgs,
  ) {}
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

  constructor(
    private readonly keysOf: (spec: ConsumeSpec) => [account: string, counter: string, days: string],
    private readonly script: ConsumeScript,
    /** One call per request (Redis Cluster: requests of different accounts live on different slots). */
    private readonly perRequest: boolean,
    private readonly onReceiverError: (err: unknown) => void,
    /** Unix ms in Redis' clock after which the call must count nothing (0: none); see redis-clock.ts. */
    private readonly deadline: () => number = () => 0,
    /** A reply reached a threshold of the spec's alerts (the script raised it, or found it raised). */
    private readonly onReached: (spec: ConsumeSpec, used: number) => void = () => undefined,
  ) {}

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
    const keysAndArgs = new Array<string>(8 * n + 2);
    for (let i = 0; i < n; i++) {
      const spec = specs[i] as ConsumeSpec;
      const a = this.argsOf(spec);
      keysAndArgs[3 * i] = a[0];
      keysAndArgs[3 * i + 1] = a[1];
      keysAndArgs[3 * i + 2] = a[2];
      if (spec.touch === undefined) keysAndArgs[3 * n + 5 * i] = a[3];
      else {
        // Sent once: the meter set it for this day (ConsumeSpec.touch).
        keysAndArgs[3 * n + 5 * i] = `${a[3]} ${spec.touch}`;
        spec.touch = undefined;
      }
      keysAndArgs[3 * n + 5 * i + 1] = a[4];
      keysAndArgs[3 * n + 5 * i + 2] = a[5];
      keysAndArgs[3 * n + 5 * i + 3] = a[6];
      // Not kept with the others: it shrinks as thresholds are reached.
      keysAndArgs[3 * n + 5 * i + 4] = spec.alerts?.list ?? '';
    }
    keysAndArgs[8 * n] = day;
    keysAndArgs[8 * n + 1] = String(this.deadline());
    this.calls++;
    this.script(3 * n, keysAndArgs).then(
      (reply) => this.deliver(reply, specs, receivers),
      (err: Error) => {
        for (const r of receivers) this.guard(r, err);
      },
    );
  }

  /**
   * A request's keys and arguments as the script takes them, as strings: worked out once per
   * spec, which the meter builds once per cached account and period, so a warm request builds
   * no key and converts no number.
   */
  private argsOf(spec: ConsumeSpec): SpecArgs {
    const memo = spec.storeMemo;
    if (memo instanceof Noted && memo.batcher === this) return memo.args;
    const [account, counter, days] = this.keysOf(spec);
    const r = spec.record;
    const record = recordMeta(
      spec.periodId,
      r?.kind ?? 'monthly',
      r?.startMs ?? 0,
      r?.endMs ?? spec.expireAtMs,
      r?.plan ?? '',
    );
    const args: SpecArgs = [
      account,
      counter,
      days,
      String(spec.revision),
      String(spec.limit),
      String(spec.expireAtMs),
      record,
    ];
    spec.storeMemo = new Noted(this, args);
    return args;
  }

  private deliver(reply: number[], specs: ConsumeSpec[], receivers: ConsumeReceiver[]): void {
    for (let i = 0; i < receivers.length; i++) {
      const receiver = receivers[i] as ConsumeReceiver;
      const result = decode(reply[2 * i], reply[2 * i + 1]);
      this.guard(receiver, result ?? new Error(`unexpected reply from the consume script: ${String(reply[2 * i])}`));
      // After the answer: moving the crossing to the outbox is no part of the request.
      const alerts = (specs[i] as ConsumeSpec).alerts;
      if (alerts !== undefined && result !== null && 'used' in result && result.used >= alerts.next)
        this.onReached(specs[i] as ConsumeSpec, result.used);
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

function decode(code: number | undefined, used: number | undefined): ConsumeResult | null {
  if (typeof used !== 'number') return null;
  switch (code) {
    case 0:
      return { kind: 'ok', used };
    case 1:
      return { kind: 'exhausted', used };
    case 2:
      return INACTIVE;
    case 3:
      return CHANGED;
  }
  return null;
}
