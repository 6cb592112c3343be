/**
 * SSRF guard for webhook URLs: only http(s), and no address that reaches inside the operator's
 * network. A hostname is resolved (every address) and refused if ANY address is loopback,
 * private, link-local, unspecified, CGNAT, multicast, reserved or documentation space, or an
 * IPv4-mapped/-embedded form of one of those. Checked when a subscription is added and again
 * before every attempt. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE=true) turns the address check off.
 *
 * Known gap (README): `fetch` resolves the name again, so a DNS answer that changes between our
 * lookup and the connection (DNS rebinding) is not caught.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface LookupAddress {
  address: string;
  family: number;
}
/** Resolves a hostname to every address, as `dns.promises.lookup(host, { all: true })` does. */
export type LookupFn = (hostname: string) => Promise<LookupAddress[]>;

export const systemLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const ALLOW_HINT = ' (WEBHOOK_ALLOW_PRIVATE=true allows it)';

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

function parseIPv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (m === null) return null;
  const o = m.slice(1).map(Number);
  return o.every((n) => n <= 255) ? o : null;
}

/** 16 bytes, or null. Accepts `::`, an embedded dotted quad at the end, and a `%zone`. */
export function parseIPv6(input: string): number[] | null {
  let s = input;
  const pct = s.indexOf('%');
  if (pct !== -1) s = s.slice(0, pct);
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return null;
  const lastColon = s.lastIndexOf(':');
  if (lastColon === -1) return null;
  if (s.slice(lastColon + 1).includes('.')) {
    // An embedded dotted quad (`::ffff:1.2.3.4`) becomes its two hex groups.
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...rest];
  if (all.length !== 8) return null;
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    bytes.push(v >> 8, v & 0xff);
  }
  return bytes;
}

function v4Blocked(o: number[]): string | null {
  const [a, b, c] = o as [number, number, number, number];
  if (a === 0) return 'unspecified/"this network" (0.0.0.0/8)';
  if (a === 10) return 'private (10.0.0.0/8)';
  if (a === 100 && b >= 64 && b <= 127) return 'carrier-grade NAT (100.64.0.0/10)';
  if (a === 127) return 'loopback (127.0.0.0/8)';
  if (a === 169 && b === 254) return 'link-local (169.254.0.0/16)';
  if (a === 172 && b >= 16 && b <= 31) return 'private (172.16.0.0/12)';
  if (a === 192 && b === 168) return 'private (192.168.0.0/16)';
  if (a === 192 && b === 0 && c === 0) return 'IETF protocol assignments (192.0.0.0/24)';
  if (a === 192 && b === 0 && c === 2) return 'documentation (192.0.2.0/24)';
  if (a === 198 && (b === 18 || b === 19)) return 'benchmarking (198.18.0.0/15)';
  if (a === 198 && b === 51 && c === 100) return 'documentation (198.51.100.0/24)';
  if (a === 203 && b === 0 && c === 113) return 'documentation (203.0.113.0/24)';
  if (a >= 224 && a <= 239) return 'multicast (224.0.0.0/4)';
  if (a >= 240) return 'reserved (240.0.0.0/4)';
  return null;
}

function v6Blocked(x: number[]): string | null {
  const zero = (from: number, to: number) => x.slice(from, to).every((v) => v === 0);
  if (zero(0, 16)) return 'unspecified (::)';
  if (zero(0, 15) && x[15] === 1) return 'loopback (::1)';
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d: judge the IPv4 inside.
  const embedded = x.slice(12, 16);
  if (zero(0, 10) && x[10] === 0xff && x[11] === 0xff) return v4Blocked(embedded) && `IPv4-mapped ${v4Blocked(embedded)}`;
  if (zero(0, 12)) return `IPv4-compatible ${v4Blocked(embedded) ?? 'address (::/96)'}`;
  if (x[0] === 0x00 && x[1] === 0x64 && x[2] === 0xff && x[3] === 0x9b && zero(4, 12)) return v4Blocked(embedded) && `NAT64 ${v4Blocked(embedded)}`;
  if (x[0] === 0x20 && x[1] === 0x02) {
    const inner = v4Blocked(x.slice(2, 6));
    if (inner) return `6to4 ${inner}`;
  }
  if ((x[0]! & 0xfe) === 0xfc) return 'unique local (fc00::/7)';
  if (x[0] === 0xfe && (x[1]! & 0xc0) === 0x80) return 'link-local (fe80::/10)';
  if (x[0] === 0xfe && (x[1]! & 0xc0) === 0xc0) return 'site-local (fec0::/10)';
  if (x[0] === 0xff) return 'multicast (ff00::/8)';
  if (x[0] === 0x20 && x[1] === 0x01 && x[2] === 0x0d && x[3] === 0xb8) return 'documentation (2001:db8::/32)';
  if (x[0] === 0x01 && zero(1, 8)) return 'discard-only (100::/64)';
  return null;
}

/** Why an IP address must not be a webhook target, or null when it is a public unicast address. */
export function blockedAddressReason(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4 !== null) return v4Blocked(v4);
  const v6 = parseIPv6(address.replace(/^\[|\]$/g, ''));
  if (v6 !== null) return v6Blocked(v6);
  return 'not an IP address';
}

/** Scheme and shape only (no DNS): http(s), a host, no credentials. */
export function checkUrlShape(raw: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `'${raw}' is not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: `only http and https URLs are allowed (got ${url.protocol.replace(/:$/, '')})` };
  if (url.hostname === '') return { ok: false, reason: 'the URL has no host' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'the URL must not carry credentials (user:password@)' };
  return { ok: true, url };
}

/**
 * The full check: shape, then (unless `allowPrivate`) every address the host resolves to.
 * Literal IPs are judged as they are; the WHATWG parser has already normalised forms like
 * `0x7f.1` or `2130706433` into dotted quads.
 */
export async function checkWebhookUrl(raw: string, opts: { allowPrivate: boolean; lookup?: LookupFn }): Promise<UrlCheck> {
  const shape = checkUrlShape(raw);
  if (!shape.ok || opts.allowPrivate) return shape;
  const host = shape.url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    const why = blockedAddressReason(host);
    return why === null ? shape : { ok: false, reason: `${host} is not a public address: ${why}${ALLOW_HINT}` };
  }
  let addresses: LookupAddress[];
  try {
    addresses = await (opts.lookup ?? systemLookup)(host);
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { ok: false, reason: `cannot resolve ${host}${code ? ` (${code})` : ''}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${host} (no addresses)` };
  for (const a of addresses) {
    const why = blockedAddressReason(a.address);
    if (why !== null) return { ok: false, reason: `${host} resolves to ${a.address}, not a public address: ${why}${ALLOW_HINT}` };
  }
  return shape;
}
