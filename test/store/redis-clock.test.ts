import { Redis } from 'ioredis';
import t from 'tap';
import { RedisClock } from '../../src/store/counting/redis-clock.js';
import { startRedis } from '../helpers/redis.js';
import { sleep } from '../helpers/wait.js';

t.test("the consume deadline is the command timeout ahead, in Redis' clock, once measured", async (t) => {
  const server = await startRedis(t);
  const redis = new Redis(server.url);
  t.teardown(() => redis.quit());
  const clock = new RedisClock(500);
  t.equal(clock.deadline(), 0, 'no deadline before a measurement');
  const slowly = async (): Promise<Array<string | number>> => {
    await sleep(80); // a measurement slower than 50 ms is the setup
    return redis.time();
  };
  // One slower than half the timeout says too little: it is ignored.
  const quick = new RedisClock(100);
  await quick.measure(slowly);
  t.notOk(quick.known, 'a measurement slower than half the timeout is ignored');
  // A slow one, while none quicker is known, gives a deadline early by its error, never late:
  // ignored, it left consumes with no deadline, and a frozen Redis counted requests answered 503.
  await clock.measure(slowly);
  t.ok(clock.known && !clock.precise, 'a slow measurement is kept while none quicker is known');
  const early = clock.deadline();
  const [s0, m0] = await redis.time();
  const ahead = early - (Number(s0) * 1000 + Number(m0) / 1000);
  t.ok(ahead <= 500 && ahead > 300, `its deadline ${ahead.toFixed(1)} ms ahead of Redis' clock`);
  await clock.measure(() => redis.time());
  t.ok(clock.precise, 'a quick measurement replaces it');
  await clock.measure(slowly);
  t.ok(clock.precise, 'and a slow one does not replace a quick one');
  // The deadline as of just before and just after Redis read its clock: taken once the reply was
  // handled, it ran ahead by however long that took (508 ms at load 14).
  const before = clock.deadline();
  const [seconds, micros] = await redis.time();
  const after = clock.deadline();
  const redisNow = Number(seconds) * 1000 + Number(micros) / 1000;
  // Redis runs on this machine: same clock, so the deadline is 500 ms less the safety margin.
  t.ok(before - redisNow <= 500, `deadline ${(before - redisNow).toFixed(1)} ms ahead of Redis' clock at most`);
  t.ok(after - redisNow > 400, `deadline ${(after - redisNow).toFixed(1)} ms ahead of Redis' clock at least`);
});
