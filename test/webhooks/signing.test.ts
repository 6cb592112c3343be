import { describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { generateSecret, secretKey, signature, webhookHeaders } from '../../src/webhooks/signing.ts';
import { MAX_ATTEMPTS, parseRetryAfter, RETRY_SCHEDULE_MS, retryDelay } from '../../src/webhooks/policy.ts';

describe('secrets and signatures', () => {
  test('a secret is whsec_ + base64 of 32 random bytes, different every time', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(secretKey(a).length).toBe(32);
  });

  test('malformed secrets are refused', () => {
    expect(() => secretKey('abc')).toThrow();
    expect(() => secretKey('whsec_!!!')).toThrow();
    expect(() => secretKey(`whsec_${Buffer.alloc(8).toString('base64')}`)).toThrow();
  });

  test('the signature is what the official standardwebhooks library computes and accepts', () => {
    const secret = generateSecret();
    const body = '{"type":"traffic_event.created","timestamp":"2026-11-21T10:00:00Z","data":{"id":"evt_1","city":{"name":"İstanbul"}}}';
    const ts = Math.floor(Date.now() / 1000);
    const wh = new Webhook(secret);
    expect(signature(secretKey(secret), 'msg_1', ts, body)).toBe(wh.sign('msg_1', new Date(ts * 1000), body));
    const headers = webhookHeaders(secretKey(secret), 'msg_1', ts, body);
    expect(headers['content-type']).toBe('application/json');
    expect(wh.verify(body, headers)).toEqual(JSON.parse(body));
    // A different secret, id or body does not verify.
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    expect(() => wh.verify(`${body} `, headers)).toThrow();
  });
});

describe('retry policy', () => {
  test('schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h; 8 attempts in all', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000]);
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelay(8, () => 0.5)).toBeNull();
    expect(retryDelay(0, () => 0.5)).toBeNull();
  });

  test('jitter stays within ±10 %', () => {
    for (let n = 1; n <= 7; n++) {
      const step = RETRY_SCHEDULE_MS[n - 1]!;
      expect(retryDelay(n, () => 0)).toBe(Math.round(step * 0.9));
      expect(retryDelay(n, () => 0.5)).toBe(step);
      expect(retryDelay(n, () => 0.999999)).toBeLessThanOrEqual(Math.round(step * 1.1));
      for (let i = 0; i < 50; i++) {
        const d = retryDelay(n, Math.random)!;
        expect(d).toBeGreaterThanOrEqual(step * 0.9 - 1);
        expect(d).toBeLessThanOrEqual(step * 1.1 + 1);
      }
    }
  });

  test('Retry-After lengthens a step, never shortens it, and is capped at 24 h', () => {
    expect(retryDelay(1, () => 0.5, 120_000)).toBe(120_000);
    expect(retryDelay(1, () => 0.5, 1_000)).toBe(5_000);
    expect(retryDelay(1, () => 0.5, 3 * 86_400_000)).toBe(86_400_000);
  });

  test('Retry-After: delta-seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('99999999', now)).toBe(86_400_000);
  });
});
