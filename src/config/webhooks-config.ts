/** The `webhooks` section of the config: how the outbox is delivered. */
import { z } from 'zod';
import { posInt } from './fields.js';

export const webhooks = z.strictObject({
  timeout_ms: posInt.describe('A delivery succeeds on a 2xx answer within this; else it is retried'),
  allow_private_addresses: z
    .boolean()
    .describe(
      "Let the operator's webhooks and billing exporters reach loopback, private, link-local and metadata addresses (tests, internal receivers); endpoints made in the portal follow portal.webhooks.allow_private_addresses instead",
    ),
  allow_http: z.boolean().describe('Accept http:// endpoints; else https:// is required'),
  retry_delays_ms: z
    .array(posInt)
    .min(1, 'expected at least one delay')
    .describe('Wait before each retry of a failed delivery (±20% jitter); after the last, the delivery is failed'),
  poll_interval_ms: posInt.describe('How often each gateway looks for deliveries due'),
});
