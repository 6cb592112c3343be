import { describe, expect, test } from 'bun:test';
import { blockedAddressReason, checkWebhookUrl, type LookupFn } from '../../src/webhooks/ssrf.ts';

/** Made-up names and what they "resolve" to. */
const fakeDns: Record<string, string[]> = {
  'loopback.test': ['127.0.0.1'],
  'loopback-high.test': ['127.255.0.9'],
  'private10.test': ['10.1.2.3'],
  'private172.test': ['172.20.0.4'],
  'private192.test': ['192.168.1.10'],
  'v6-loopback.test': ['::1'],
  'metadata.test': ['169.254.169.254'],
  'v6-linklocal.test': ['fe80::1'],
  'v6-ula.test': ['fd12:3456::1'],
  'cgnat.test': ['100.64.1.1'],
  'zero.test': ['0.0.0.0'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'multicast.test': ['239.1.1.1'],
  // One public and one private address: refused (any address counts).
  'mixed.test': ['93.184.215.14', '10.0.0.7'],
  'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
};

const lookup: LookupFn = async (host) => {
  const a = fakeDns[host];
  if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('addresses', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::abcd', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fdff::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['64:ff9b::a00:1', 'NAT64 private'],
  ])('%s is refused (%s)', (addr, kind) => {
    expect(blockedAddressReason(addr)).toContain(kind);
  });

  test.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::6810:84e5', '::ffff:8.8.8.8'])('%s is public', (addr) => {
    expect(blockedAddressReason(addr)).toBeNull();
  });
});

describe('URLs', () => {
  const opts = { allowPrivate: false, lookup };

  test.each(Object.keys(fakeDns).filter((h) => h !== 'public.test'))('a name resolving to a private address is refused: %s', async (host) => {
    const r = await checkWebhookUrl(`https://${host}/hook`, opts);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(`${host} resolves to`);
  });

  test('a name resolving only to public addresses passes', async () => {
    const r = await checkWebhookUrl('https://public.test/hook?x=1', opts);
    expect(r.ok).toBe(true);
  });

  test('the real localhost is refused (system resolver)', async () => {
    const r = await checkWebhookUrl('http://localhost:8080/hook', { allowPrivate: false });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
  });

  test.each([
    'http://127.0.0.1/hook',
    'http://10.0.0.1:8080/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:3000/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fe80::1]/',
    'http://0x7f000001/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://0/',
  ])('a literal private address is refused without DNS: %s', async (url) => {
    const r = await checkWebhookUrl(url, { allowPrivate: false, lookup: async () => { throw new Error('no DNS expected'); } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('not a public address');
  });

  test.each(['ftp://example.com/x', 'file:///etc/passwd', 'gopher://x', 'not a url', 'https://user:pw@example.com/'])('%s is refused', async (url) => {
    expect((await checkWebhookUrl(url, opts)).ok).toBe(false);
  });

  test('a name that does not resolve is refused', async () => {
    const r = await checkWebhookUrl('https://nowhere.test/', opts);
    expect(r).toEqual({ ok: false, reason: 'cannot resolve nowhere.test (ENOTFOUND)' });
  });

  test('WEBHOOK_ALLOW_PRIVATE lets private targets through, but never other schemes', async () => {
    expect((await checkWebhookUrl('http://127.0.0.1:3000/hook', { allowPrivate: true })).ok).toBe(true);
    expect((await checkWebhookUrl('https://private10.test/', { allowPrivate: true, lookup })).ok).toBe(true);
    expect((await checkWebhookUrl('ftp://127.0.0.1/', { allowPrivate: true })).ok).toBe(false);
  });
});
