import { existsSync } from 'node:fs';
import { z } from 'zod';
import { refusedLiteral } from '../events/addresses.js';
import { isValidTimeZone } from '../time/zone.js';
import { maxEntries } from './account-cache.js';
import { billing } from './billing-config.js';
import { adminListenerProblem, isAddressOrRange, isOrigin, listener, nonNegInt, posInt, redisNode } from './fields.js';
import { keys, messages, secretScanning } from './keys-config.js';
import { plan } from './plan-config.js';
import { portal } from './portal-config.js';
import { stripePlanIssues } from './stripe-config.js';
import { telemetry } from './telemetry-config.js';
import { upstream } from './upstream.js';
import { webhooks } from './webhooks-config.js';

export const configSchema = z
  .strictObject({
    time_zone: z
      .string()
      .refine(isValidTimeZone, 'expected an IANA time zone such as Africa/Johannesburg')
      .describe('IANA zone of periods, effective times and timestamps in answers'),
    listen: z.strictObject({
      public: listener,
      admin: listener.extend({
        token: z
          .string()
          .describe(
            'Bearer token of the admin API (env ADMIN_TOKEN); without one the admin listener only binds to loopback; beyond loopback it needs at least 32 characters and about 128 bits of estimated entropy (docs/admin-api.md); never trimmed: surrounding whitespace is refused',
          ),
      }),
    }),
    server: z.strictObject({
      request_timeout_ms: posInt.describe(
        'A request must be complete (head and body) within this; also the shutdown drain limit',
      ),
      headers_timeout_ms: posInt.describe('A request head must arrive within this, else 408 (slow clients)'),
      keep_alive_timeout_ms: posInt.describe('An idle kept-alive connection is closed after this'),
      max_header_bytes: z
        .number()
        .int()
        .min(1024, 'expected at least 1024')
        .max(1048576, 'expected at most 1048576')
        .describe('Largest request head accepted, else 431'),
      max_headers: z
        .number()
        .int()
        .min(16, 'expected at least 16')
        .max(1000, 'expected at most 1000')
        .describe('Most header fields in a request head, else 431'),
      trusted_proxies: z
        .array(z.string().refine(isAddressOrRange, 'expected an IP address or a CIDR range such as 172.16.0.0/12'))
        .describe(
          'Balancers in front (addresses or CIDR ranges) whose X-Forwarded-For names the client (env TRUSTED_PROXIES, comma-separated)',
        ),
      workers: z
        .union([posInt, z.literal('auto')])
        .describe(
          'Processes on the same ports (node:cluster), a number or auto (one per CPU); more than one needs Redis',
        ),
      cors_origins: z
        .array(z.string().refine(isOrigin, 'expected an origin such as https://app.example.com (no path, no slash)'))
        .describe('Browser origins allowed to call the API (CORS); [] answers no preflight and allows none'),
    }),
    page: z.strictObject({
      enabled: z
        .boolean()
        .describe('Serve the public page at / (current prices, chart, usage check, API docs); false: 404'),
    }),
    store: z.strictObject({
      type: z
        .enum(['memory', 'redis'])
        .describe('memory: embedded, one process; redis: shared by every instance (REDIS_URL selects it)'),
      on_error: z
        .enum(['reject', 'allow'])
        .describe('While the store is unreachable: reject (503) or allow (unmetered, keys known as active only)'),
      counter_retention_days: nonNegInt.describe('Counters of a finished period are kept this long'),
      memory: z.strictObject({
        // The embedded store's file: kept across restarts. "" keeps nothing (state lives and dies with the process).
        file: z.string().describe("The memory store's file, kept across restarts; empty keeps nothing"),
      }),
      redis: z
        .strictObject({
          url: z
            .string()
            .regex(/^rediss?:\/\//, 'expected a redis:// or rediss:// URL')
            .describe(
              'redis:// or rediss:// (TLS) URL (env REDIS_URL); with sentinel or cluster, only credentials and TLS',
            ),
          key_prefix: z.string().describe('Prefix of every key the gateway writes'),
          command_timeout_ms: posInt.describe('A store call slower than this fails (503): fail fast'),
          connect_timeout_ms: posInt.describe('Time allowed to connect'),
          sentinel: z
            .strictObject({
              name: z.string().min(1).describe('Name of the monitored primary'),
              nodes: z.array(redisNode).min(1, 'expected at least one node').describe('The sentinels'),
              password: z.string().optional().describe("The sentinels' own password, if any"),
            })
            .optional(),
          cluster: z
            .strictObject({
              nodes: z.array(redisNode).min(1, 'expected at least one node').describe('Seed nodes of a Redis Cluster'),
            })
            .optional(),
          // PEM file of the CA that signed the server's certificate (rediss:// only); without it
          // the system's trusted CAs are used.
          tls_ca_file: z
            .string()
            .min(1)
            .optional()
            .describe("PEM file of the CA that signed the server's certificate (rediss:// only)"),
        })
        .refine((r) => r.tls_ca_file === undefined || r.url.startsWith('rediss://'), {
          path: ['tls_ca_file'],
          message: 'needs a rediss:// url',
        })
        .refine((r) => !(r.sentinel && r.cluster), {
          path: ['cluster'],
          message: 'sentinel and cluster exclude each other: pick one',
        }),
    }),
    usage: z.strictObject({
      retention_days: posInt.describe(
        "Daily usage and period records are kept this long after their period ends (the customer's history reaches this far back)",
      ),
    }),
    metering: z.strictObject({
      count_not_modified: z
        .boolean()
        .describe(
          'Count a 304 Not Modified (If-None-Match on the current endpoints) against the allowance; false: conditional polling is free',
        ),
    }),
    plans: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/, 'expected a lower-case plan name'), plan),
    prices: z.strictObject({
      file: z
        .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
        .describe(
          'Price history file, or files (one per source range), loaded at start without overwriting published sets',
        ),
      watch_file: z
        .boolean()
        .describe('Memory store: re-read the file when it changes (its sets replace those of the same dates)'),
      source_name: z.string().min(1).describe('Served as source when a set names none: the publishing authority'),
      historical_enabled: z.boolean().describe('Serve historical.php (else 501)'),
      max_age_days: posInt.describe('A current set older than this is stale: warned daily, shown by /readyz'),
      stale_is_unready: z.boolean().describe('/readyz answers 503 while prices are stale'),
    }),
    limits: z.strictObject({
      max_key_length: posInt.describe('Longer keys are refused without a lookup'),
      account_cache: z.strictObject({
        max_entries: maxEntries,
        negative_ttl_ms: nonNegInt.describe('Unknown keys are remembered this long'),
      }),
      invalid_key_throttle: z.strictObject({
        max_attempts: posInt.describe('Invalid keys from one client address within window_s that block it'),
        window_s: posInt.describe('Window of the count, seconds'),
        block_s: posInt.describe('How long a blocked address is refused, seconds'),
        paused_after_data_loss_s: nonNegInt.describe(
          'After Redis is found to have lost its data, unknown keys do not count for this long, seconds',
        ),
      }),
    }),
    upstream: upstream,
    compat: z.strictObject({
      fuelsa: z.strictObject({
        enabled: z
          .boolean()
          .describe(
            "Serve /exapi/fuel/current and /exapi/fuel/byyear/{year} in FuelSA's shape for its clients (metered as current.php)",
          ),
      }),
    }),
    webhooks,
    billing,
    keys,
    secret_scanning: secretScanning,
    portal,
    demo_accounts: z
      .boolean()
      .describe(
        'Memory store: the first start (a store with no account) creates one demo account per plan; every start prints a curl line with a working developer demo key (its own key replaced after the first, a used-up allowance topped up)',
      ),
    log: z.strictObject({
      level: z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .describe('Log level (env LOG_LEVEL)'),
      access: z
        .boolean()
        .describe('One line per public request (account id, client address, redacted URL, status, time)'),
      max_buffer_bytes: z
        .number()
        .int()
        .min(65536)
        .describe('Log output held while stdout cannot take it; beyond it lines are dropped and counted'),
    }),
    telemetry,
    messages,
  })
  .superRefine((cfg, ctx) => {
    if (cfg.server.headers_timeout_ms > cfg.server.request_timeout_ms) {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'headers_timeout_ms'],
        message: 'must not exceed server.request_timeout_ms',
      });
    }
    // Checked here, not at start, so that `config check` refuses what `serve` would refuse.
    const admin = adminListenerProblem(cfg.listen.admin);
    if (admin) ctx.addIssue({ code: 'custom', ...admin });
    for (const file of priceFiles(cfg)) {
      if (!existsSync(file))
        ctx.addIssue({ code: 'custom', path: ['prices', 'file'], message: `no such file: ${file}` });
    }
    // The exporters reach out as webhooks do, under the same address rule: an address is refused
    // here, a name at each send (billing/post.ts).
    cfg.billing.exporters.forEach((e, i) => {
      const [field, url] = e.type === 'stripe' ? ['api_base', e.api_base] : ['url', e.url];
      const refused = refusedLiteral(url, cfg.webhooks.allow_private_addresses);
      if (refused) ctx.addIssue({ code: 'custom', path: ['billing', 'exporters', i, field], message: refused });
    });
    if ((cfg.server.workers === 'auto' || cfg.server.workers > 1) && cfg.store.type === 'memory') {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'workers'],
        message:
          'more than one worker needs the Redis store (store.type: redis or REDIS_URL): with the memory store each worker would count on its own',
      });
    }
    if (cfg.listen.public.port !== 0 && cfg.listen.public.port === cfg.listen.admin.port) {
      ctx.addIssue({
        code: 'custom',
        path: ['listen', 'admin', 'port'],
        message: 'the admin API never shares the public port',
      });
    }
    for (const issue of stripePlanIssues(cfg.billing.stripe, cfg.plans)) ctx.addIssue({ code: 'custom', ...issue });
    if (cfg.portal.enabled && !(cfg.portal.signup_plan in cfg.plans))
      ctx.addIssue({
        code: 'custom',
        path: ['portal', 'signup_plan'],
        message: `unknown plan "${cfg.portal.signup_plan}"`,
      });
    for (const [name, p] of Object.entries(cfg.plans)) {
      if (p.converts_to !== undefined && !(p.converts_to in cfg.plans)) {
        ctx.addIssue({
          code: 'custom',
          path: ['plans', name, 'converts_to'],
          message: `unknown plan "${p.converts_to}"`,
        });
      }
      if (p.converts_to !== undefined && cfg.plans[p.converts_to] && cfg.plans[p.converts_to]?.limit === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['plans', name, 'converts_to'],
          message: `plan "${p.converts_to}" has no default limit to convert to`,
        });
      }
      if (p.converts_to !== undefined && cfg.plans[p.converts_to]?.converts_to !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['plans', name, 'converts_to'],
          message: `plan "${p.converts_to}" converts again; conversions do not chain`,
        });
      }
      if (p.converts_to !== undefined && p.period !== 'trial') {
        ctx.addIssue({ code: 'custom', path: ['plans', name, 'converts_to'], message: 'only a trial plan converts' });
      }
    }
  });

export type Config = z.infer<typeof configSchema>;
export type PlanConfig = Config['plans'][string];
export type Messages = Config['messages'];

/** The messages the answers serve: `account_unpaid` is `billing.stripe.unpaid_message` unless set itself. */
export const servedMessages = (c: Config): Required<Messages> => ({
  ...c.messages,
  account_unpaid: c.messages.account_unpaid ?? c.billing.stripe.unpaid_message,
});

/** The price history files, in the order given: `prices.file` is one file or a list of them. */
export function priceFiles(cfg: { prices: { file: string | string[] } }): string[] {
  return typeof cfg.prices.file === 'string' ? [cfg.prices.file] : cfg.prices.file;
}
