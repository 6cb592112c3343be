import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { generateApiKey, hashApiKey } from '../../src/keys/format.ts';
import { KeyResolver } from '../../src/keys/resolver.ts';
import { KeyStore, type ActiveKey } from '../../src/keys/store.ts';
import { tempDb, type TempDb } from '../helpers/db.ts';

const NOW = Date.parse('2026-11-21T10:00:00Z');

let db: TempDb;
let store: KeyStore;
beforeEach(() => {
  db = tempDb();
  store = new KeyStore(db.sqlite);
});
afterEach(() => db.cleanup());

describe('KeyStore', () => {
  test('create stores the hash and a display prefix, never the key', () => {
    const { key, record } = store.create({ plan: 'free', name: 'mobile app', now: NOW });
    expect(record).toMatchObject({ plan: 'free', name: 'mobile app', createdAt: NOW, lastUsedAt: null, revokedAt: null });
    expect(record.prefix).toBe(`${key.slice(0, 13)}…`);
    const raw = db.sqlite.query('SELECT * FROM api_keys').all() as Record<string, unknown>[];
    expect(raw).toHaveLength(1);
    expect(raw[0]!.hash).toBe(hashApiKey(key));
    expect(JSON.stringify(raw)).not.toContain(key.slice(9));
    expect(store.findActiveByHash(hashApiKey(key))).toEqual({ id: record.id, keyId: record.id, plan: 'free' });
  });

  test('revoke is final and idempotent; unknown ids are null', () => {
    const { key, record } = store.create({ plan: 'enterprise', name: 'partner', now: NOW });
    const r1 = store.revoke(record.id, NOW + 1000);
    expect(r1).toMatchObject({ already: false, record: { revokedAt: NOW + 1000 } });
    expect(store.findActiveByHash(hashApiKey(key))).toBeNull();
    expect(store.revoke(record.id, NOW + 5000)).toMatchObject({ already: true, record: { revokedAt: NOW + 1000 } });
    expect(store.revoke('key_0000000000000000', NOW)).toBeNull();
  });

  test('list in creation order', () => {
    const a = store.create({ plan: 'free', name: 'a', now: NOW }).record;
    const b = store.create({ plan: 'enterprise', name: 'b', now: NOW + 1 }).record;
    expect(store.list().map((r) => r.id)).toEqual([a.id, b.id]);
  });
});

describe('KeyResolver', () => {
  function counted(lookup: (h: string) => ActiveKey | null) {
    const calls = { n: 0 };
    return { calls, lookup: (h: string) => (calls.n++, lookup(h)) };
  }

  test('malformed keys are refused without a lookup', () => {
    const { calls, lookup } = counted(() => null);
    const r = new KeyResolver({ lookup });
    expect(r.resolve('trk_live_nope', NOW)).toBeNull();
    const k = generateApiKey();
    expect(r.resolve(k.slice(0, -1) + (k.endsWith('A') ? 'B' : 'A'), NOW)).toBeNull();
    expect(calls.n).toBe(0);
  });

  test('a key is looked up at most once per TTL; revocation shows after the TTL', () => {
    const { key, record } = store.create({ plan: 'free', name: 'x', now: NOW });
    const { calls, lookup } = counted((h) => store.findActiveByHash(h));
    const r = new KeyResolver({ lookup, ttlMs: 2000 });
    for (let i = 0; i < 100; i++) expect(r.resolve(key, NOW + i)).toMatchObject({ id: record.id, plan: 'free' });
    expect(calls.n).toBe(1);
    store.revoke(record.id, NOW + 500);
    expect(r.resolve(key, NOW + 1999)).not.toBeNull(); // cached
    expect(r.resolve(key, NOW + 2000)).toBeNull(); // TTL passed
    expect(calls.n).toBe(2);
  });

  test('unknown keys are cached too (a replayed bad key does not hit the database)', () => {
    const { calls, lookup } = counted(() => null);
    const r = new KeyResolver({ lookup, ttlMs: 2000 });
    const k = generateApiKey();
    for (let i = 0; i < 50; i++) expect(r.resolve(k, NOW + i)).toBeNull();
    expect(calls.n).toBe(1);
  });

  test('a negative answer is also refreshed after the TTL (a key restored in the database is seen again)', () => {
    const { key, record } = store.create({ plan: 'free', name: 'x', now: NOW });
    db.sqlite.run('UPDATE api_keys SET revoked_at = 1 WHERE id = ?', [record.id]);
    const r = new KeyResolver({ lookup: (h) => store.findActiveByHash(h), ttlMs: 2000 });
    expect(r.resolve(key, NOW)).toBeNull();
    db.sqlite.run('UPDATE api_keys SET revoked_at = NULL WHERE id = ?', [record.id]);
    expect(r.resolve(key, NOW + 1999)).toBeNull();
    expect(r.resolve(key, NOW + 2000)?.id).toBe(record.id);
  });

  test('the cache is bounded', () => {
    const r = new KeyResolver({ lookup: () => null, maxEntries: 100 });
    for (let i = 0; i < 1000; i++) r.resolve(generateApiKey(), NOW);
    expect(r.size).toBe(100);
  });

  test('a failing lookup throws (the gate answers 503), a cached key keeps working', () => {
    const { key, record } = store.create({ plan: 'free', name: 'x', now: NOW });
    let down = false;
    const r = new KeyResolver({ lookup: (h) => (down ? (() => { throw new Error('closed'); })() : store.findActiveByHash(h)), ttlMs: 2000 });
    expect(r.resolve(key, NOW)?.id).toBe(record.id);
    down = true;
    expect(r.resolve(key, NOW + 100)?.id).toBe(record.id);
    expect(() => r.resolve(generateApiKey(), NOW + 100)).toThrow('closed');
  });

  test('last-used times are collected for the write-behind', () => {
    const r = new KeyResolver({ lookup: () => null });
    r.markUsed('key_a', 1);
    r.markUsed('key_a', 5);
    r.markUsed('key_b', 3);
    const taken = r.takeUsed();
    expect([...taken]).toEqual([
      ['key_a', 5],
      ['key_b', 3],
    ]);
    r.markUsed('key_a', 9);
    r.restoreUsed(taken); // a failed write puts them back without moving newer ones back
    expect([...r.takeUsed()]).toEqual([
      ['key_a', 9],
      ['key_b', 3],
    ]);
  });
});
