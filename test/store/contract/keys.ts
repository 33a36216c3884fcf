import type { Test } from 'tap';
import { isGatewayError } from '../../../src/failures.js';
import type { Store, StoredKey, StoreEvent } from '../../../src/store/store.js';
import { account, DAY, hashOf, spec, storedKey, waitFor } from './fixtures.js';

const refusal = async (p: Promise<unknown>): Promise<string> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return isGatewayError(err) ? err.code : `not a GatewayError: ${String(err)}`;
};

/**
 * The keys contract (store/keys/interface.ts): every backend runs it unchanged. Keys live with
 * their account: a change bumps its revision (so a consume from an older copy answers
 * `changed`) and announces every key hash of the account.
 */
export function keysContract(t: Test, make: () => Promise<Store>): void {
  t.test('a key hash finds its account and key; the keys are listed oldest first', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const found = await store.keys.findByKeyHash(hashOf(a));
    t.same(found, { account: a, key: a.keys[0] });
    t.equal(await store.keys.findByKeyHash('0'.repeat(64)), null);
    const second = storedKey({ name: 'erp' });
    await store.keys.addKey(a.id, second);
    t.same(
      (await store.keys.listKeys(a.id))?.map((k) => k.name),
      ['default', 'erp'],
    );
    t.equal(await store.keys.listKeys('acct_none'), null);
    t.same((await store.keys.findByKeyHash(second.key_hash))?.key, second, 'the new key finds the same account');
    t.equal((await store.keys.findByKeyHash(second.key_hash))?.account.id, a.id);
  });

  t.test('a key change bumps the revision, refuses older copies, and announces every hash', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    const a = account();
    await store.accounts.createAccount(a);
    const added = storedKey({ name: 'telematics' });
    const change = await store.keys.addKey(a.id, added);
    t.equal(change.account.revision, a.revision + 1);
    t.same(change.key, added);
    t.same(
      await store.counting.consume(spec(a), DAY),
      { kind: 'changed' },
      'a copy from before the change cannot count',
    );
    t.same(await store.counting.consume(spec(change.account), DAY), { kind: 'ok', used: 1 });
    await waitFor(() => events.some((e) => e.type === 'account' && e.keyHashes.includes(added.key_hash)));
    const e = events.find((x) => x.type === 'account' && x.keyHashes.includes(added.key_hash));
    t.same(e?.type === 'account' ? [...e.keyHashes].sort() : [], [hashOf(a), added.key_hash].sort());
  });

  t.test('update: the fields given change, the rest stay; the answer has both versions', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const k = a.keys[0] as StoredKey;
    const change = await store.keys.updateKey(a.id, k.id, {
      scopes: ['history'],
      allowed_cidrs: ['203.0.113.0/24'],
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    t.same(change.previous, k);
    t.same(change.key, {
      ...k,
      scopes: ['history'],
      allowed_cidrs: ['203.0.113.0/24'],
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    t.same((await store.keys.findByKeyHash(k.key_hash))?.key, change.key);
    t.equal(await refusal(store.keys.updateKey(a.id, 'key_0000000000000000', { name: 'x' })), 'NOT_FOUND');
    t.equal(await refusal(store.keys.updateKey('acct_none', k.id, { name: 'x' })), 'NOT_FOUND');
  });

  t.test('rotate: the new key takes the name, scopes and allowlist; the old one gets its expiry', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const old = storedKey({ name: 'erp', scopes: ['prices'], allowed_cidrs: ['10.0.0.0/8'] });
    const a = account({ keys: [old] });
    await store.accounts.createAccount(a);
    const next = storedKey({ name: 'ignored' });
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const change = await store.keys.rotateKey(a.id, old.id, next, until);
    t.same(change.key, { ...next, name: 'erp', scopes: ['prices'], allowed_cidrs: ['10.0.0.0/8'] });
    t.same(change.previous, { ...old, expires_at: until, rotated_to: next.id });
    t.equal((await store.keys.findByKeyHash(old.key_hash))?.key.expires_at, until, 'both keys are found');
    t.equal((await store.keys.findByKeyHash(old.key_hash))?.key.rotated_to, next.id, 'the old one names its successor');
    t.equal((await store.keys.findByKeyHash(next.key_hash))?.key.name, 'erp');
    const sooner = new Date(Date.now() + 60_000).toISOString();
    await store.keys.updateKey(a.id, next.id, { expires_at: sooner });
    const again = await store.keys.rotateKey(a.id, next.id, storedKey(), until);
    t.equal(again.previous?.expires_at, sooner, 'a grace never lengthens the life of a key');
  });

  t.test('a key rotates once: later rotations of it, at once or after, are refused naming its successor', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const old = a.keys[0] as StoredKey;
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const tries = [storedKey(), storedKey(), storedKey()];
    const settled = await Promise.allSettled(tries.map((next) => store.keys.rotateKey(a.id, old.id, next, until)));
    const won = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    t.equal(won.length, 1, 'one of three at once');
    const successor = won[0]?.key.id;
    for (const r of settled.filter((x) => x.status === 'rejected')) {
      const err: unknown = r.reason;
      t.ok(isGatewayError(err, 'CONFLICT'), 'the others: CONFLICT');
      if (isGatewayError(err)) t.same(err.fields, { successor_key_id: successor });
    }
    const later = await store.keys.rotateKey(a.id, old.id, storedKey(), until).catch((e: unknown) => e);
    t.ok(isGatewayError(later, 'CONFLICT') && later.fields['successor_key_id'] === successor, 'and one after');
    t.same(
      (await store.keys.listKeys(a.id))?.map((k) => [k.id, k.rotated_to]),
      [
        [old.id, successor],
        [successor, undefined],
      ],
      'two keys: the old one naming its successor',
    );
    await store.keys.revoke(a.id, successor as string);
    const gone = await store.keys.rotateKey(a.id, old.id, storedKey(), until).catch((e: unknown) => e);
    t.match(String(gone), /was already rotated: its successor is key_\w+ \(since removed\)/, 'a removed successor too');
  });

  t.test('revoke: the key is found no more; the last key and unknown keys are refused', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const events: StoreEvent[] = [];
    store.coordination.subscribe((e) => events.push(e));
    const a = account();
    await store.accounts.createAccount(a);
    const second = storedKey({ name: 'second' });
    await store.keys.addKey(a.id, second);
    const change = await store.keys.revoke(a.id, second.id);
    t.same(change.key, second, 'answers the key as it was');
    t.equal(await store.keys.findByKeyHash(second.key_hash), null);
    t.equal(await store.accounts.findByKeyHash(second.key_hash), null);
    t.same(
      (await store.keys.listKeys(a.id))?.map((k) => k.id),
      [a.keys[0]?.id],
    );
    await waitFor(
      () => events.filter((e) => e.type === 'account' && e.keyHashes.includes(second.key_hash)).length >= 2,
    );
    t.equal(await refusal(store.keys.revoke(a.id, (a.keys[0] as StoredKey).id)), 'CONFLICT', 'the last key stays');
    const gone = storedKey({ name: 'gone', expires_at: '2020-01-01T00:00:00.000Z' });
    await store.keys.addKey(a.id, gone);
    t.equal(
      await refusal(store.keys.revoke(a.id, (a.keys[0] as StoredKey).id)),
      'CONFLICT',
      'so does the last key that works, beside an expired one',
    );
    t.same((await store.keys.revoke(a.id, gone.id)).key.id, gone.id, 'an expired key may go');
    t.equal(await refusal(store.keys.revoke(a.id, second.id)), 'NOT_FOUND');
    t.equal(await refusal(store.keys.revoke('acct_none', second.id)), 'NOT_FOUND');
    t.equal(await refusal(store.keys.addKey(a.id, storedKey({ key_hash: hashOf(a) }))), 'CONFLICT', 'a hash in use');
  });

  t.test('at most 20 keys that have not expired; expired ones do not count', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account({ keys: [storedKey({ expires_at: '2020-01-01T00:00:00.000Z' })] });
    await store.accounts.createAccount(a);
    for (let i = 0; i < 20; i++) await store.keys.addKey(a.id, storedKey({ name: `k${i}` }));
    t.equal(await refusal(store.keys.addKey(a.id, storedKey())), 'CONFLICT');
    t.equal((await store.keys.listKeys(a.id))?.length, 21);
  });

  t.test('a consume that counts notes the day its key last worked, without a revision bump', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const a = account();
    await store.accounts.createAccount(a);
    const k = a.keys[0] as StoredKey;
    const s = spec(a, { limit: 1 });
    s.touch = k.id;
    t.same(await store.counting.consume(s, DAY), { kind: 'ok', used: 1 });
    t.equal(s.touch, undefined, 'the store took the note');
    const after = await store.keys.findByKeyHash(k.key_hash);
    t.equal(after?.key.last_used_on, DAY);
    t.equal(after?.account.revision, a.revision, 'no copy is stale for it');
    const refused = spec(a, { limit: 1 });
    refused.touch = k.id;
    t.same(await store.counting.consume(refused, '2026-11-26'), { kind: 'exhausted', used: 1 });
    t.equal((await store.keys.findByKeyHash(k.key_hash))?.key.last_used_on, DAY, 'a refused request is no use');
    await store.keys.markUsed(a.id, k.id, '2026-11-27');
    await store.keys.markUsed(a.id, k.id, '2026-11-20');
    t.equal((await store.keys.findByKeyHash(k.key_hash))?.key.last_used_on, '2026-11-27', 'never goes back');
  });

  t.test('expired keys are forgotten after the retention, never the last one', async (t) => {
    const store = await make();
    t.teardown(() => store.close());
    const old = storedKey({ expires_at: '2026-01-01T00:00:00.000Z' });
    const recent = storedKey({ expires_at: '2026-11-01T00:00:00.000Z' });
    const a = account({ keys: [old, recent, storedKey()] });
    await store.accounts.createAccount(a);
    const forgotten = await store.keys.forgetExpired(a.id, Date.parse('2026-06-01T00:00:00Z'));
    t.same(
      forgotten.map((k) => k.id),
      [old.id],
    );
    t.equal(await store.keys.findByKeyHash(old.key_hash), null);
    t.ok(await store.keys.findByKeyHash(recent.key_hash), 'within the retention it is kept');
    t.same(await store.keys.forgetExpired(a.id, Date.parse('2026-06-01T00:00:00Z')), [], 'nothing twice');
    const lone = account({ keys: [storedKey({ expires_at: '2026-01-01T00:00:00.000Z' })] });
    await store.accounts.createAccount(lone);
    t.same(await store.keys.forgetExpired(lone.id, Date.now()), []);
  });
}
