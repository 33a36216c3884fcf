import { type CreateAccountInput, createAccount } from '../../src/keys/accounts.js';
import type { TestGateway } from './gateway.js';

/** 2026-11-23 10:00 in Johannesburg: the shipped data's current set is then 2026-09-02. */
export const NOW = Date.parse('2026-11-23T10:00:00+02:00');

/** `usage` after the first request of a starter account created at NOW: its cycle runs to 23 Dec. */
export const STARTER_FIRST_USAGE = {
  plan_type: 'starter',
  requests_used: 1,
  request_limit: 2000,
  requests_remaining: 1999,
  request_period: 'monthly',
  period_started_at: '2026-11-23T10:00:00+02:00',
  period_ends_at: '2026-12-23T10:00:00+02:00',
};

export async function newAccount(gw: TestGateway, input: Partial<CreateAccountInput> & { plan: string }, now = NOW) {
  return createAccount(
    gw.app.store.accounts,
    gw.config.plans,
    { label: 'test', status: 'active', limit: null, ...input },
    now,
  );
}

const REGION_COASTAL =
  '{"zone":null,"price_basis":"official_regional_reference","petrol_93":null,"petrol_95":"26.05","diesel_50ppm":"28.68","diesel_500ppm":"28.24"}';
const REGION_INLAND =
  '{"zone":null,"price_basis":"official_regional_reference","petrol_93":"26.76","petrol_95":"26.92","diesel_50ppm":"29.56","diesel_500ppm":"29.11"}';

/** The spec's envelopes for the shipped 2026-09-02 set, written out by hand, key order included. */
export function expectedSimple(usage: string): string {
  return `{"success":true,"effective_date":"2026-09-02","fuel_prices":{"coastal":${REGION_COASTAL},"inland":${REGION_INLAND}},"usage":${usage}}`;
}

export function expectedFull(usage: string): string {
  return (
    '{"success":true,"source":"Department of Mineral and Petroleum Resources","effective_date":"2026-09-02",' +
    `"updated_at":"2026-09-02 00:01:00","data":{"coastal":${REGION_COASTAL},"inland":${REGION_INLAND}},"usage":${usage}}`
  );
}
