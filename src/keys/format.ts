/**
 * API key format (CONTRACT §4, API-ANCHORS §5): `trk_live_` + 32 random base62 characters + a
 * 6-character base62 CRC32 of everything before it, as GitHub's tokens do. The checksum lets the
 * server refuse a mistyped or truncated key without touching the database, and lets secret
 * scanners recognise a real key offline. Only the SHA-256 of a key is ever stored.
 */
import { createHash } from 'node:crypto';

export const KEY_PREFIX = 'trk_live_';
export const KEY_RANDOM_LENGTH = 32;
export const KEY_CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `n` characters drawn uniformly from base62 (rejection sampling: no modulo bias). */
export function randomBase62(n: number): string {
  let out = '';
  const buf = new Uint8Array(n * 2);
  while (out.length < n) {
    crypto.getRandomValues(buf);
    for (let i = 0; i < buf.length && out.length < n; i++) {
      const b = buf[i]! & 63;
      if (b < 62) out += BASE62[b];
    }
  }
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as zlib) of an ASCII string. */
export function crc32(s: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < s.length; i++) c = CRC_TABLE[(c ^ s.charCodeAt(i)) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A 32-bit number as exactly 6 base62 digits (62^6 > 2^32), most significant first. */
function base62Checksum(n: number): string {
  let out = '';
  for (let i = 0; i < KEY_CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A fresh key. Shown to the operator once; never stored or logged. */
export function generateApiKey(): string {
  const body = KEY_PREFIX + randomBase62(KEY_RANDOM_LENGTH);
  return body + base62Checksum(crc32(body));
}

function isBase62Code(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Right prefix, length, alphabet and checksum: a key worth a database lookup. */
export function isWellFormedKey(s: string): boolean {
  if (s.length !== KEY_LENGTH || !s.startsWith(KEY_PREFIX)) return false;
  for (let i = KEY_PREFIX.length; i < KEY_LENGTH; i++) if (!isBase62Code(s.charCodeAt(i))) return false;
  const body = s.slice(0, KEY_LENGTH - KEY_CHECKSUM_LENGTH);
  return s.slice(KEY_LENGTH - KEY_CHECKSUM_LENGTH) === base62Checksum(crc32(body));
}

/** What is stored and looked up: SHA-256 of the whole key, lowercase hex. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What a human may see again (`keys list`): the prefix and the first 4 random characters. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…`;
}

/** A key's public id, used by the CLI (`keys revoke ID`) and as its quota subject. */
export function newKeyId(): string {
  return `key_${randomBase62(16)}`;
}

export const KEY_ID_PATTERN = /^key_[0-9A-Za-z]{16}$/;
