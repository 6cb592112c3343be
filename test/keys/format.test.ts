import { expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { crc32, displayPrefix, generateApiKey, hashApiKey, isWellFormedKey, KEY_ID_PATTERN, KEY_LENGTH, newKeyId } from '../../src/keys/format.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

test('keys look like trk_live_ + 32 random + 6 checksum base62 characters', () => {
  const keys = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const k = generateApiKey();
    expect(k).toMatch(/^trk_live_[0-9A-Za-z]{38}$/);
    expect(k.length).toBe(KEY_LENGTH);
    expect(isWellFormedKey(k)).toBe(true);
    keys.add(k);
  }
  expect(keys.size).toBe(2000);
});

test('the random part uses the whole alphabet without bias toward its start', () => {
  const counts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) for (const ch of generateApiKey().slice(9, 41)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  expect(counts.size).toBe(62);
  const expected = (2000 * 32) / 62;
  for (const n of counts.values()) {
    expect(n).toBeGreaterThan(expected * 0.8);
    expect(n).toBeLessThan(expected * 1.2);
  }
});

test('CRC-32 is the IEEE/zlib one', () => {
  expect(crc32('123456789')).toBe(0xcbf43926);
  expect(crc32('')).toBe(0);
});

test('any single changed character fails the checksum (no database lookup needed)', () => {
  const k = generateApiKey();
  for (let i = 9; i < k.length; i++) {
    const c = k[i]!;
    const other = BASE62[(BASE62.indexOf(c) + 1 + (i % 61)) % 62]!;
    expect(isWellFormedKey(k.slice(0, i) + other + k.slice(i + 1))).toBe(false);
  }
  // Two swapped neighbours (a common typo) too, unless they happen to be equal.
  const swapped = k.slice(0, 20) + k[21] + k[20] + k.slice(22);
  if (k[20] !== k[21]) expect(isWellFormedKey(swapped)).toBe(false);
});

test('wrong prefix, length or alphabet is malformed', () => {
  const k = generateApiKey();
  expect(isWellFormedKey(k.replace('trk_live_', 'trk_test_'))).toBe(false);
  expect(isWellFormedKey(k.slice(0, -1))).toBe(false);
  expect(isWellFormedKey(`${k}x`)).toBe(false);
  expect(isWellFormedKey(`${k.slice(0, 20)}-${k.slice(21)}`)).toBe(false);
  expect(isWellFormedKey('')).toBe(false);
  expect(isWellFormedKey('Bearer')).toBe(false);
});

test('only a SHA-256 hex is stored; the display prefix shows 4 random characters', () => {
  const k = generateApiKey();
  expect(hashApiKey(k)).toBe(createHash('sha256').update(k).digest('hex'));
  expect(hashApiKey(k)).toMatch(/^[0-9a-f]{64}$/);
  expect(displayPrefix(k)).toBe(`${k.slice(0, 13)}…`);
  expect(displayPrefix(k)).toMatch(/^trk_live_[0-9A-Za-z]{4}…$/);
});

test('key ids', () => {
  const id = newKeyId();
  expect(id).toMatch(KEY_ID_PATTERN);
  expect(newKeyId()).not.toBe(id);
});
