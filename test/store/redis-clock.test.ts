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
  // A measurement slower than 50 ms says too little: it is ignored.
  await clock.measure(async () => {
    await sleep(80); // a measurement slower than 50 ms is the setup
    return redis.time();
  });
  t.equal(clock.deadline(), 0, 'a slow measurement is ignored');
  await clock.measure(() => redis.time());
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
