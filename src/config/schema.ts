import { isIP } from 'node:net';
import { z } from 'zod';
import { isValidTimeZone } from '../quota/period.js';

const port = z.number({ error: 'expected a port number' }).int().min(0).max(65535);
const posInt = z.number({ error: 'expected a positive integer' }).int('expected a positive integer').positive('expected a positive integer');
const nonNegInt = z.number({ error: 'expected a whole number ≥ 0' }).int().nonnegative();
const message = z.string().min(1, 'expected a non-empty message');

const listener = z.strictObject({ host: z.string().min(1), port });
const redisNode = z.strictObject({ host: z.string().min(1), port: port.min(1) });

const plan = z.strictObject({
  limit: posInt.optional(),
  period: z.enum(['trial', 'monthly']),
  trial_days: posInt.default(14),
  // A trial plan may convert to another plan when its first trial period ends.
  converts_to: z.string().optional(),
});

export const configSchema = z
  .strictObject({
    time_zone: z.string().refine(isValidTimeZone, 'expected an IANA time zone such as Africa/Johannesburg'),
    listen: z.strictObject({
      public: listener,
      admin: listener.extend({ token: z.string() }),
    }),
    server: z.strictObject({
      request_timeout_ms: posInt,
      headers_timeout_ms: posInt,
      keep_alive_timeout_ms: posInt,
      max_header_bytes: z.number().int().min(1024, 'expected at least 1024').max(1048576, 'expected at most 1048576'),
      trusted_proxies: z.array(z.string().refine((a) => isIP(a) !== 0, 'expected an IP address')),
      workers: z.union([posInt, z.literal('auto')]),
    }),
    store: z.strictObject({
      type: z.enum(['memory', 'redis']),
      on_error: z.enum(['reject', 'allow']),
      counter_retention_days: nonNegInt,
      redis: z
        .strictObject({
          url: z.string().regex(/^rediss?:\/\//, 'expected a redis:// or rediss:// URL'),
          key_prefix: z.string(),
          command_timeout_ms: posInt,
          connect_timeout_ms: posInt,
          sentinel: z
            .strictObject({ name: z.string().min(1), nodes: z.array(redisNode).min(1, 'expected at least one node'), password: z.string().optional() })
            .optional(),
          cluster: z.strictObject({ nodes: z.array(redisNode).min(1, 'expected at least one node') }).optional(),
          // PEM file of the CA that signed the server's certificate (rediss:// only); without it
          // the system's trusted CAs are used.
          tls_ca_file: z.string().min(1).optional(),
        })
        .refine((r) => r.tls_ca_file === undefined || r.url.startsWith('rediss://'), { path: ['tls_ca_file'], message: 'needs a rediss:// url' })
        .refine((r) => !(r.sentinel && r.cluster), { path: ['cluster'], message: 'sentinel and cluster exclude each other: pick one' }),
    }),
    plans: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/, 'expected a lower-case plan name'), plan),
    prices: z.strictObject({
      file: z.string().min(1),
      watch_file: z.boolean(),
      source_name: z.string().min(1),
      historical_enabled: z.boolean(),
    }),
    limits: z.strictObject({
      max_key_length: posInt,
      account_cache: z.strictObject({ max_entries: posInt, negative_ttl_ms: nonNegInt }),
      invalid_key_throttle: z.strictObject({ max_attempts: posInt, window_s: posInt, block_s: posInt }),
    }),
    demo_accounts: z.boolean(),
    log: z.strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      access: z.boolean(),
    }),
    messages: z.strictObject({
      missing_key: message,
      invalid_key: message,
      inactive_key: message,
      limit_monthly: message,
      limit_trial: message,
      throttled: message,
      invalid_month: message,
      invalid_year: message,
      bad_request: message,
      request_timeout: message,
      headers_too_large: message,
      historical_disabled: message,
      not_found: message,
      method_not_allowed: message,
      unavailable: message,
      internal: message,
    }),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.server.headers_timeout_ms > cfg.server.request_timeout_ms) {
      ctx.addIssue({ code: 'custom', path: ['server', 'headers_timeout_ms'], message: 'must not exceed server.request_timeout_ms' });
    }
    if ((cfg.server.workers === 'auto' || cfg.server.workers > 1) && cfg.store.type === 'memory') {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'workers'],
        message: 'more than one worker needs the Redis store (store.type: redis or REDIS_URL): with the memory store each worker would count on its own',
      });
    }
    if (cfg.listen.public.port !== 0 && cfg.listen.public.port === cfg.listen.admin.port) {
      ctx.addIssue({ code: 'custom', path: ['listen', 'admin', 'port'], message: 'the admin API never shares the public port' });
    }
    for (const [name, p] of Object.entries(cfg.plans)) {
      if (p.converts_to !== undefined && !(p.converts_to in cfg.plans)) {
        ctx.addIssue({ code: 'custom', path: ['plans', name, 'converts_to'], message: `unknown plan "${p.converts_to}"` });
      }
      if (p.converts_to !== undefined && cfg.plans[p.converts_to] && cfg.plans[p.converts_to]?.limit === undefined) {
        ctx.addIssue({ code: 'custom', path: ['plans', name, 'converts_to'], message: `plan "${p.converts_to}" has no default limit to convert to` });
      }
      if (p.converts_to !== undefined && cfg.plans[p.converts_to]?.converts_to !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['plans', name, 'converts_to'], message: `plan "${p.converts_to}" converts again; conversions do not chain` });
      }
      if (p.converts_to !== undefined && p.period !== 'trial') {
        ctx.addIssue({ code: 'custom', path: ['plans', name, 'converts_to'], message: 'only a trial plan converts' });
      }
    }
  });

export type Config = z.infer<typeof configSchema>;
export type PlanConfig = Config['plans'][string];
export type Messages = Config['messages'];
