/**
 * Who is the client (CONTRACT §4): the socket peer, unless that peer is a proxy the operator
 * trusts (TRUST_PROXY, IPs or CIDRs); then `X-Forwarded-For` is read from the right and the first
 * hop that is not itself a trusted proxy is the client. IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is
 * IPv4; IPv6 clients are bucketed by their /64, the smallest block a host usually controls.
 *
 * The result is a bucket key: a canonical dotted quad, `<first four groups>::/64`, or `unknown`.
 * A canonical IPv4 input is returned as is (no allocation on the hot path).
 */

/** A parsed address: an IPv4 as an unsigned 32-bit number, or IPv6 as 8 groups (never mapped). */
export type ParsedIp = number | number[];

export const UNKNOWN_CLIENT = 'unknown';

let v4Canonical = false;

/** Dotted-quad IPv4 → uint32, or -1. Sets `v4Canonical` (no leading zeros) as a side result. */
function parseV4(s: string, start: number, end: number): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  let canonical = true;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits === 1 && octet === 0) canonical = false;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  v4Canonical = canonical;
  return value * 256 + octet;
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV6Half(h: string, allowV4: boolean): number[] | null {
  if (h === '') return [];
  const parts = h.split(':');
  const out: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (allowV4 && i === parts.length - 1 && p.includes('.')) {
      const v4 = parseV4(p, 0, p.length);
      if (v4 < 0) return null;
      out.push(Math.floor(v4 / 65536), v4 % 65536);
    } else if (HEX_GROUP.test(p)) out.push(parseInt(p, 16));
    else return null;
  }
  return out;
}

function parseV6(s: string): number[] | null {
  const pct = s.indexOf('%');
  if (pct !== -1) s = s.slice(0, pct);
  if (s.length < 2 || s.length > 45) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = parseV6Half(halves[0]!, halves.length === 1);
  if (head === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const tail = parseV6Half(halves[1]!, true);
  if (tail === null || head.length + tail.length > 7) return null;
  const groups = head.slice();
  for (let i = head.length + tail.length; i < 8; i++) groups.push(0);
  groups.push(...tail);
  return groups;
}

/**
 * Parses an address as it appears in a socket peer or an X-Forwarded-For hop: IPv4, IPv6, a
 * bracketed IPv6 with optional port (`[2001:db8::1]:443`), or IPv4 with a port. IPv4-mapped IPv6
 * comes back as IPv4. Null for anything else.
 */
export function parseIp(s: string): ParsedIp | null {
  if (s.length === 0 || s.length > 64) return null;
  if (s.charCodeAt(0) === 91 /* [ */) {
    const close = s.indexOf(']');
    if (close === -1) return null;
    return parseIp(s.slice(1, close));
  }
  const colon = s.indexOf(':');
  if (colon === -1) {
    const v4 = parseV4(s, 0, s.length);
    return v4 < 0 ? null : v4;
  }
  if (s.indexOf(':', colon + 1) === -1 && s.includes('.')) {
    const v4 = parseV4(s, 0, colon); // 203.0.113.7:51234
    return v4 < 0 ? null : v4;
  }
  const g = parseV6(s);
  if (g === null) return null;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) return g[6]! * 65536 + g[7]!;
  return g;
}

function v4String(n: number): string {
  return `${Math.floor(n / 16777216)}.${Math.floor(n / 65536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

/** The bucket key of a parsed address: the IPv4 itself, or the IPv6 /64. */
export function bucketOf(ip: ParsedIp): string {
  if (typeof ip === 'number') return v4String(ip);
  return `${ip[0]!.toString(16)}:${ip[1]!.toString(16)}:${ip[2]!.toString(16)}:${ip[3]!.toString(16)}::/64`;
}

/** Bucket key of an address string; a canonical IPv4 string is returned unchanged. */
export function bucketOfAddress(s: string): string | null {
  if (s.indexOf(':') === -1) {
    const v4 = parseV4(s, 0, s.length);
    if (v4 < 0) return null;
    return v4Canonical ? s : v4String(v4);
  }
  const ip = parseIp(s);
  return ip === null ? null : bucketOf(ip);
}

interface Range {
  v4: boolean;
  base: number | number[];
  bits: number;
}

/** An IP or CIDR range; IPv4-mapped IPv6 ranges (`::ffff:10.0.0.0/104`) become IPv4 ranges. */
export function parseRange(entry: string): Range | null {
  const slash = entry.indexOf('/');
  const addr = slash === -1 ? entry : entry.slice(0, slash);
  const bitsText = slash === -1 ? null : entry.slice(slash + 1);
  if (bitsText !== null && !/^\d{1,3}$/.test(bitsText)) return null;
  const isV6Text = addr.includes(':');
  const ip = parseIp(addr);
  if (ip === null) return null;
  let bits = bitsText === null ? (typeof ip === 'number' && !isV6Text ? 32 : 128) : Number(bitsText);
  if (typeof ip === 'number') {
    if (isV6Text) {
      if (bits < 96) return null; // wider than the mapped block: not meaningful
      bits -= 96;
    }
    if (bits > 32) return null;
    return { v4: true, base: ip, bits };
  }
  if (bits > 128) return null;
  return { v4: false, base: ip, bits };
}

function inRange(ip: ParsedIp, r: Range): boolean {
  if (typeof ip === 'number') {
    if (!r.v4) return false;
    if (r.bits === 0) return true;
    const shift = 32 - r.bits;
    return Math.floor(ip / 2 ** shift) === Math.floor((r.base as number) / 2 ** shift);
  }
  if (r.v4) return false;
  const base = r.base as number[];
  let bits = r.bits;
  for (let i = 0; i < 8 && bits > 0; i++) {
    const take = bits >= 16 ? 16 : bits;
    const shift = 16 - take;
    if (ip[i]! >> shift !== base[i]! >> shift) return false;
    bits -= take;
  }
  return true;
}

export interface HeaderSource {
  get(name: string): string | null;
}

/** Resolves a request's client bucket from its socket peer and, behind trusted proxies, X-Forwarded-For. */
export class ClientIpResolver {
  private readonly ranges: Range[];
  private lastPeer: string | null = null;
  private lastPeerTrusted = false;

  constructor(trustProxy: readonly string[] = []) {
    this.ranges = trustProxy.map((entry) => {
      const r = parseRange(entry.trim());
      if (r === null) throw new Error(`TRUST_PROXY: '${entry}' is not an IP address or CIDR range`);
      return r;
    });
  }

  get trustsAnyProxy(): boolean {
    return this.ranges.length > 0;
  }

  isTrusted(ip: ParsedIp): boolean {
    for (const r of this.ranges) if (inRange(ip, r)) return true;
    return false;
  }

  private peerTrusted(peer: string): boolean {
    if (peer === this.lastPeer) return this.lastPeerTrusted;
    const ip = parseIp(peer);
    const trusted = ip !== null && this.isTrusted(ip);
    this.lastPeer = peer;
    this.lastPeerTrusted = trusted;
    return trusted;
  }

  /**
   * The client bucket. `peer` is the socket address (null when unknown, e.g. under `app.handle`);
   * `headers` is read only when the peer is a trusted proxy.
   */
  resolve(peer: string | null, headers: HeaderSource): string {
    if (peer === null || peer === '') return UNKNOWN_CLIENT;
    if (this.ranges.length === 0 || !this.peerTrusted(peer)) return bucketOfAddress(peer) ?? UNKNOWN_CLIENT;
    const xff = headers.get('x-forwarded-for');
    if (xff === null || xff === '') return bucketOfAddress(peer) ?? UNKNOWN_CLIENT;
    return this.fromForwarded(peer, xff);
  }

  /**
   * Right to left through X-Forwarded-For: skip hops that are trusted proxies; the first that is
   * not is the client. If a hop cannot be parsed, the last good hop (a trusted proxy that passed
   * it on) is used; if every hop is trusted, the left-most one.
   */
  fromForwarded(peer: string, xff: string): string {
    let last = peer;
    let end = xff.length;
    while (end > 0) {
      const comma = xff.lastIndexOf(',', end - 1);
      let hop = comma === -1 && end === xff.length ? xff : xff.slice(comma + 1, end);
      if (hop.charCodeAt(0) === 32 || hop.charCodeAt(hop.length - 1) === 32 || hop.charCodeAt(0) === 9) hop = hop.trim();
      end = comma === -1 ? 0 : comma;
      if (hop === '') continue;
      if (hop.indexOf(':') === -1 && hop.charCodeAt(0) !== 91) {
        const v4 = parseV4(hop, 0, hop.length);
        if (v4 < 0) break;
        if (!this.isTrusted(v4)) return v4Canonical ? hop : v4String(v4);
        last = hop;
        continue;
      }
      const ip = parseIp(hop);
      if (ip === null) break;
      if (!this.isTrusted(ip)) return bucketOf(ip);
      last = hop;
    }
    return bucketOfAddress(last) ?? UNKNOWN_CLIENT;
  }
}
