import type { Result } from 'ioredis';
import type { PriceSet } from '../../prices/schema.js';
import type { RedisBackend } from '../redis/backend.js';
import type { PriceStore } from './interface.js';
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
    ): Result<number, Context>;
    fpgDeletePriceSet(prices: string, date: string, channel: string, message: string): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgPutPriceSet: { lua: PUT_PRICE_SET, numberOfKeys: 1 },
  fpgPutPriceSets: { lua: PUT_PRICE_SETS, numberOfKeys: 1 },
  fpgDeletePriceSet: { lua: DELETE_PRICE_SET, numberOfKeys: 1 },
};

const ANNOUNCEMENT = JSON.stringify({ type: 'prices' });

/** The price history on Redis: one hash, effective date → JSON of the set. */
export class RedisPrices implements PriceStore {
  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  listPriceSets(): Promise<PriceSet[]> {
    const { b } = this;
    return b.run(async () => {
      return Object.entries(await b.redis.hgetall(b.prices))
        .sort(([a], [c]) => a.localeCompare(c))
        .map(([, json]) => JSON.parse(json) as PriceSet);
    });
  }

  putPriceSet(set: PriceSet, replace: boolean): Promise<boolean> {
    const { b } = this;
    return b.run(async () => {
      const stored = await b.redis.fpgPutPriceSet(
        b.prices,
        set.effective_date,
        JSON.stringify(set),
        replace ? '1' : '0',
        b.channel,
        ANNOUNCEMENT,
      );
      return stored === 1;
    });
  }

  putPriceSets(sets: PriceSet[], replace: boolean): Promise<number> {
    const { b } = this;
    const args = sets.flatMap((set) => [set.effective_date, JSON.stringify(set)]);
    return b.run(() => b.redis.fpgPutPriceSets(b.prices, replace ? '1' : '0', b.channel, ANNOUNCEMENT, ...args));
  }

  deletePriceSet(date: string): Promise<boolean> {
    const { b } = this;
    return b.run(async () => (await b.redis.fpgDeletePriceSet(b.prices, date, b.channel, ANNOUNCEMENT)) === 1);
  }
}
