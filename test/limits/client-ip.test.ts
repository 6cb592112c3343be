import { describe, expect, test } from 'bun:test';
import { bucketOfAddress, ClientIpResolver, parseIp, parseRange, UNKNOWN_CLIENT } from '../../src/limits/client-ip.ts';

const headers = (xff?: string) => new Headers(xff === undefined ? {} : { 'x-forwarded-for': xff });

describe('parsing and bucketing', () => {
  test('IPv4 is its own bucket; a canonical string comes back unchanged', () => {
    const s = '203.0.113.7';
    expect(bucketOfAddress(s)).toBe(s);
    expect(bucketOfAddress('010.000.000.001')).toBe('10.0.0.1');
    expect(bucketOfAddress('0.0.0.0')).toBe('0.0.0.0');
    expect(bucketOfAddress('255.255.255.255')).toBe('255.255.255.255');
  });

  test('malformed IPv4 is refused', () => {
    for (const bad of ['256.0.0.1', '1.2.3', '1.2.3.4.5', '1..2.3', '1.2.3.4a', '', 'localhost', '1.2.3.1234']) expect(bucketOfAddress(bad)).toBeNull();
  });

  test('IPv4-mapped IPv6 is IPv4', () => {
    expect(bucketOfAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(bucketOfAddress('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(bucketOfAddress('0:0:0:0:0:ffff:cb00:7107')).toBe('203.0.113.7');
    expect(bucketOfAddress('[::ffff:198.51.100.1]:443')).toBe('198.51.100.1');
  });

  test('IPv6 is bucketed by /64', () => {
    const a = bucketOfAddress('2001:db8:1234:5678:aaaa:bbbb:cccc:dddd');
    const b = bucketOfAddress('2001:0db8:1234:5678::1');
    const c = bucketOfAddress('2001:db8:1234:5679::1');
    expect(a).toBe('2001:db8:1234:5678::/64');
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(bucketOfAddress('::1')).toBe('0:0:0:0::/64');
    expect(bucketOfAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(bucketOfAddress('[2001:db8::7]:8080')).toBe('2001:db8:0:0::/64');
  });

  test('malformed IPv6 is refused', () => {
    for (const bad of ['2001:db8::1::2', '2001:db8:1:2:3:4:5:6:7', 'gggg::1', '2001:db8:::1', '1:2:3:4:5:6:7', '::ffff:999.1.1.1']) expect(parseIp(bad)).toBeNull();
  });

  test('IPv4 with a port (as some proxies write it)', () => {
    expect(bucketOfAddress('203.0.113.7:51234')).toBe('203.0.113.7');
  });

  test('ranges', () => {
    expect(parseRange('10.0.0.0/8')).toEqual({ v4: true, base: 10 * 2 ** 24, bits: 8 });
    expect(parseRange('::ffff:10.0.0.0/104')).toEqual({ v4: true, base: 10 * 2 ** 24, bits: 8 });
    expect(parseRange('127.0.0.1')).toMatchObject({ v4: true, bits: 32 });
    expect(parseRange('2001:db8::/32')).toMatchObject({ v4: false, bits: 32 });
    for (const bad of ['10.0.0.0/33', '2001:db8::/129', 'x/8', '10.0.0.0/', '10.0.0.0/a']) expect(parseRange(bad)).toBeNull();
    expect(() => new ClientIpResolver(['nonsense'])).toThrow(/TRUST_PROXY/);
  });
});

describe('ClientIpResolver', () => {
  test('without TRUST_PROXY the socket peer is the client and X-Forwarded-For is ignored', () => {
    const r = new ClientIpResolver([]);
    expect(r.resolve('198.51.100.9', headers('203.0.113.7'))).toBe('198.51.100.9');
    expect(r.resolve('::ffff:198.51.100.9', headers('203.0.113.7'))).toBe('198.51.100.9');
    expect(r.resolve(null, headers('203.0.113.7'))).toBe(UNKNOWN_CLIENT);
  });

  test('a spoofed X-Forwarded-For from an untrusted peer is ignored even when proxies are trusted', () => {
    const r = new ClientIpResolver(['10.0.0.0/8']);
    expect(r.resolve('198.51.100.9', headers('203.0.113.7'))).toBe('198.51.100.9');
  });

  test('from a trusted proxy, the right-most untrusted hop is the client', () => {
    const r = new ClientIpResolver(['10.0.0.0/8', '127.0.0.1']);
    // The client may put anything on the left; the proxy appends what it saw.
    expect(r.resolve('127.0.0.1', headers('1.1.1.1, 203.0.113.7'))).toBe('203.0.113.7');
    expect(r.resolve('10.0.0.2', headers('1.1.1.1, 203.0.113.7, 10.0.0.5'))).toBe('203.0.113.7');
    expect(r.resolve('::ffff:10.0.0.2', headers('203.0.113.7,10.0.0.5'))).toBe('203.0.113.7');
    expect(r.resolve('10.0.0.2', headers(' 2001:db8:1:2::99 '))).toBe('2001:db8:1:2::/64');
    expect(r.resolve('10.0.0.2', headers('[2001:db8:1:2::99]:443'))).toBe('2001:db8:1:2::/64');
  });

  test('STACK §5 example: XFF "203.0.113.7, 10.0.0.2" with only the peer trusted → 10.0.0.2', () => {
    const r = new ClientIpResolver(['127.0.0.1']);
    expect(r.resolve('127.0.0.1', headers('203.0.113.7, 10.0.0.2'))).toBe('10.0.0.2');
  });

  test('trusted peer without X-Forwarded-For is the client; all-trusted chain gives the left-most hop', () => {
    const r = new ClientIpResolver(['10.0.0.0/8']);
    expect(r.resolve('10.1.1.1', headers())).toBe('10.1.1.1');
    expect(r.resolve('10.1.1.1', headers(''))).toBe('10.1.1.1');
    expect(r.resolve('10.1.1.1', headers('10.9.9.9, 10.8.8.8'))).toBe('10.9.9.9');
  });

  test('a garbage hop stops the walk at the last trusted hop', () => {
    const r = new ClientIpResolver(['10.0.0.0/8']);
    expect(r.resolve('10.0.0.2', headers('203.0.113.7, garbage, 10.0.0.5'))).toBe('10.0.0.5');
    expect(r.resolve('10.0.0.2', headers('nonsense'))).toBe('10.0.0.2');
  });

  test('IPv6 trusted ranges', () => {
    const r = new ClientIpResolver(['2001:db8:ffff::/48']);
    expect(r.resolve('2001:db8:ffff:1::1', headers('2001:db8:aaaa:bbbb::1'))).toBe('2001:db8:aaaa:bbbb::/64');
    expect(r.resolve('2001:db8:fffe:1::1', headers('203.0.113.7'))).toBe('2001:db8:fffe:1::/64');
  });

  test('/0 trusts every hop, so the left-most one is the client', () => {
    const r = new ClientIpResolver(['0.0.0.0/0']);
    expect(r.resolve('192.0.2.1', headers('8.8.8.8, 9.9.9.9'))).toBe('8.8.8.8');
  });
});
