import { bulk } from '../redis/resp.js';
import type { BurstState, ConsumeResult, ConsumeSpec, Threshold } from './interface.js';
import { ARG, encodeBurst, encodeThresholds, KEY, recordMeta } from './lua.js';

/** CONSUME's reply: integers, and the account's fields for a request that asked for them (lua.ts). */
export type ConsumeReply = Array<number | string[]>;

/** The names of a request's keys: built once per spec (`Noted`), never per request. */
export interface ConsumeKeys {
  account: string;
  counter: string;
  days: string;
}

const INACTIVE: ConsumeResult = Object.freeze({ kind: 'inactive' });
const CHANGED: ConsumeResult = Object.freeze({ kind: 'changed' });
const NO_THRESHOLDS: readonly Threshold[] = [];

/**
 * A spec's keys and arguments as the script lays them out (KEY and ARG, 0-based here), noted on
 * the spec by the batcher that built them. The thresholds shrink as they are reached: their
 * encoding is redone only when the spec's list was replaced.
 */
export class Noted {
  encodedFrom: readonly Threshold[] | undefined = undefined;
  /** The keys, and the arguments, as RESP bulk strings (the lean connection's call), once built. */
  keysWire: string | undefined = undefined;
  argsWire: string | undefined = undefined;
  constructor(
    readonly owner: object,
    readonly keys: readonly string[],
    readonly args: string[],
  ) {}
}

/**
 * A request's keys and arguments as the script takes them, as strings: worked out once per
 * spec, which the meter builds once per cached account and period, so a warm request builds
 * no key and converts no number. `owner`: the batcher that noted it (another store's note is
 * not this one's).
 */
export function notedOf(spec: ConsumeSpec, owner: object, keysOf: (spec: ConsumeSpec) => ConsumeKeys): Noted {
  const memo = spec.storeMemo;
  const noted = memo instanceof Noted && memo.owner === owner ? memo : note(spec, owner, keysOf(spec));
  const pending = spec.alerts?.pending ?? NO_THRESHOLDS;
  if (noted.encodedFrom !== pending) {
    noted.encodedFrom = pending;
    noted.args[ARG.alerts - 1] = encodeThresholds(pending);
    noted.argsWire = undefined;
  }
  return noted;
}

function note(spec: ConsumeSpec, owner: object, names: ConsumeKeys): Noted {
  const keys: string[] = [];
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
  const noted = new Noted(owner, keys, args);
  spec.storeMemo = noted;
  return noted;
}

/** A spec's keys or arguments as RESP bulk strings, kept on it: a warm request encodes nothing. */
export function wire(noted: Noted, part: 'keys' | 'args'): string {
  let out = '';
  for (const s of part === 'keys' ? noted.keys : noted.args) out += bulk(s);
  if (part === 'keys') noted.keysWire = out;
  else noted.argsWire = out;
  return out;
}

/** One request's reply: its code and count, and with a burst limit the window's room and wait at `at`. */
export function decode(
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
