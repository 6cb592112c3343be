/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, spec v1): the secret is shown as
 * `whsec_` + base64 of random bytes and the HMAC key is the decoded bytes; each request carries
 * `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256
 * of "{id}.{timestamp}.{body}">`.
 */
import { randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: inside the spec's 24–64 and the same strength as the HMAC's output. */
export const SECRET_BYTES = 32;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a `whsec_…` secret. Throws on a malformed secret (never on a stored one). */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with whsec_');
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error('webhook secret is not base64');
  const key = Buffer.from(b64, 'base64');
  if (key.length < 24 || key.length > 64) throw new Error('webhook secret must decode to 24–64 bytes');
  return key;
}

/** `v1,<base64 signature>` for one attempt. `timestampS` is the attempt time in unix seconds. */
export function signature(key: Uint8Array, msgId: string, timestampS: number, body: string): string {
  const h = new Bun.CryptoHasher('sha256', key);
  h.update(`${msgId}.${timestampS}.`);
  h.update(body);
  return `v1,${h.digest('base64')}`;
}

/** The three Standard Webhooks headers plus content type and user agent, for one attempt. */
export function webhookHeaders(key: Uint8Array, msgId: string, timestampS: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'trafik-webhooks/1.0',
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signature(key, msgId, timestampS, body),
  };
}
