import type { Result } from 'ioredis';
import type { PriceSet } from '../../prices/price-set-schema.js';
import type { RedisBackend } from '../redis/backend.js';
import type { PriceChange, PriceStore } from './interface.js';
import { DELETE_PRICE_SET, PUT_PRICE_SET, PUT_PRICE_SETS } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgPutPriceSet(
      prices: string,
      date: string,
      json: string,
      replace: string,
      channel: string,
      message: string,
    ): Result<number, Context>;
    fpgPutPriceSets(
      prices: string,
      replace: string,
      channel: string,
      message: string,
      ...datesAndJson: string[]
    ): Result<Array<string | number>, Context>;
    fpgDeletePriceSet(prices: string, date: string, channel: string, message: string): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgPutPriceSet: { lua: PUT_PRICE_SET, numberOfKeys: 1 },
  fpgPutPriceSets: { lua: PUT_PRICE_SETS, numberOfKeys: 1 },
  fpgDeletePriceSet: { lua: DELETE_PRICE_SET, numberOfKeys: 1 },
};

const ANNOUNCEMENT = JSON.stringify({ type: 'prices' });
// The hash's field that numbers the changes (lua.ts): every other field is a date.
const SEQ_FIELD = '#seq';
const change = (date: string, seq: number): PriceChange | null => (seq > 0 ? { effective_date: date, seq } : null);

/** The price history on Redis: one hash, effective date → JSON of the set. */
export class RedisPrices implements PriceStore {
  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  listPriceSets(): Promise<PriceSet[]> {
    const { b } = this;
    return b.run(async () => {
      return Object.entries(await b.redis.hgetall(b.prices))
        .filter(([field]) => field !== SEQ_FIELD)
        .sort(([a], [c]) => a.localeCompare(c))
        .map(([, json]) => JSON.parse(json) as PriceSet);
    });
  }

  putPriceSet(set: PriceSet, replace: boolean): Promise<PriceChange | null> {
    const { b } = this;
    return b.run(async () => {
      const seq = await b.redis.fpgPutPriceSet(
        b.prices,
        set.effective_date,
        JSON.stringify(set),
        replace ? '1' : '0',
        b.channel,
        ANNOUNCEMENT,
      );
      return change(set.effective_date, seq);
    });
  }

  putPriceSets(sets: PriceSet[], replace: boolean): Promise<PriceChange[]> {
    const { b } = this;
    const args = sets.flatMap((set) => [set.effective_date, JSON.stringify(set)]);
    return b.run(async () => {
      const flat = await b.redis.fpgPutPriceSets(b.prices, replace ? '1' : '0', b.channel, ANNOUNCEMENT, ...args);
      const out: PriceChange[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2)
        out.push({ effective_date: String(flat[i]), seq: Number(flat[i + 1]) });
      return out;
    });
  }

  deletePriceSet(date: string): Promise<PriceChange | null> {
    const { b } = this;
    return b.run(async () => change(date, await b.redis.fpgDeletePriceSet(b.prices, date, b.channel, ANNOUNCEMENT)));
  }
}
