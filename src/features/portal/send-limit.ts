/**
 * Test events and replays, per account and per gateway: each is a signed POST, now, to a URL the
 * account chose. Unbounded, a member could have the gateway send one for every request they make
 * (300 in a second were sent), to any public address, from the gateway's own address.
 */
export const SENDS_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

/** Counts a send of `accountId`: 0 when it may go, else the seconds until one may. */
export type SendLimit = (accountId: string, now: number) => number;

export function sendLimit(): SendLimit {
  const sent = new Map<string, number[]>();
  return (accountId, now) => {
    const recent = (sent.get(accountId) ?? []).filter((at) => at > now - WINDOW_MS);
    const oldest = recent[0];
    if (oldest !== undefined && recent.length >= SENDS_PER_MINUTE) {
      sent.set(accountId, recent);
      return Math.ceil((oldest + WINDOW_MS - now) / 1000);
    }
    sent.set(accountId, [...recent, now]);
    return 0;
  };
}
