import * as dns from 'node:dns';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import {
  cidrContains,
  formatIPv6,
  parseCidr,
  parseIPv4Literal,
  parseIPv6,
  parseIpLiteral,
} from '../../../src/webhooks/ip-address';
import {
  EMPTY_ALLOW_LIST,
  SsrfBlockedError,
  checkTargetUrl,
  classifyAddress,
  createGuardedLookup,
  isForbiddenAddress,
  isSsrfBlockedError,
  normalizeHost,
  parseAllowList,
} from '../../../src/webhooks/ssrf-guard';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.99', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.0.0.170', 'ietfProtocol'],
    ['192.88.99.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fec0::1', 'siteLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'reserved'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    ['5f00::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['::2', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ])('%s → %s', (ip, range) => {
    expect(classifyAddress(ip).range).toBe(range);
  });

  it('sees through IPv4-mapped, NAT64 and other embedding forms', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({
      range: 'loopback',
      family: 6,
      address: '::ffff:7f00:1',
      embedded: { via: 'ipv4-mapped', ipv4: '127.0.0.1' },
    });
    expect(classifyAddress('::ffff:7f00:1').range).toBe('loopback');
    expect(classifyAddress('::ffff:169.254.169.254').range).toBe('linkLocal');
    expect(classifyAddress('::ffff:8.8.8.8').range).toBe('public');
    expect(classifyAddress('64:ff9b::127.0.0.1')).toMatchObject({
      range: 'loopback',
      embedded: { via: 'nat64', ipv4: '127.0.0.1' },
    });
    expect(classifyAddress('64:ff9b::a00:1').range).toBe('private');
    expect(classifyAddress('64:ff9b::8.8.8.8').range).toBe('public');
    expect(classifyAddress('::127.0.0.1')).toMatchObject({ range: 'loopback', embedded: { via: 'ipv4-compatible' } });
    expect(classifyAddress('::8.8.8.8').range).toBe('reserved');
    expect(classifyAddress('2002:7f00:1::1')).toMatchObject({
      range: 'loopback',
      embedded: { via: '6to4', ipv4: '127.0.0.1' },
    });
    expect(classifyAddress('2002:808:808::1').range).toBe('transition');
    // Teredo carries the client address inverted.
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:80ff:fffe')).toMatchObject({
      range: 'loopback',
      embedded: { via: 'teredo', ipv4: '127.0.0.1' },
    });
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:f7f7:f7f7').range).toBe('transition');
  });

  it('accepts every literal spelling and canonicalises', () => {
    expect(classifyAddress('2130706433')).toMatchObject({ range: 'loopback', address: '127.0.0.1', family: 4 });
    expect(classifyAddress('[::1]')).toMatchObject({ range: 'loopback', address: '::1' });
    expect(classifyAddress('0:0:0:0:0:0:0:1').address).toBe('::1');
    expect(classifyAddress('FE80::1%eth0')).toMatchObject({ range: 'linkLocal', address: 'fe80::1' });
  });

  it.each([
    '',
    'example.com',
    '1.2.3.4.5',
    '::g',
    '1::2::3',
    '[1.2.3.4]',
    '12345::',
    ':::',
    'fe80::1%',
    '1:2:3:4:5:6:7:8:9',
  ])('%j is invalid', (ip) => {
    expect(classifyAddress(ip)).toEqual({ range: 'invalid', family: null, address: '' });
  });
});

describe('address parsing and formatting', () => {
  it.each([
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['1:0:0:4:0:0:0:8', '1:0:0:4::8'],
    ['1:0:0:4:5:0:0:8', '1::4:5:0:0:8'],
    ['1:0:3:4:5:6:7:8', '1:0:3:4:5:6:7:8'],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['::', '::'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['2001:DB8::A', '2001:db8::a'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['::ffff:1.2.3.4', '::ffff:102:304'],
  ])('%s → %s (RFC 5952)', (text, canonical) => {
    const ip = parseIPv6(text);
    expect(ip).not.toBeNull();
    expect(formatIPv6((ip as NonNullable<typeof ip>).bytes)).toBe(canonical);
  });

  it.each([
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    ':1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:',
    '12345::1',
    '::1.2.3',
    '::1.2.3.256',
    '::01.2.3.4',
    'x::1',
  ])('%s is no IPv6 address', (text) => {
    expect(parseIPv6(text)).toBeNull();
  });

  it('reads IPv4 literals like inet_aton and URL parsers', () => {
    const v4 = (t: string) => {
      const r = parseIPv4Literal(t);
      return typeof r === 'object' ? Array.from(r.bytes).join('.') : r;
    };
    expect(v4('127.1')).toBe('127.0.0.1');
    expect(v4('127.0.1')).toBe('127.0.0.1');
    expect(v4('10.65535')).toBe('10.0.255.255');
    expect(v4('10.65536')).toBe('10.1.0.0');
    expect(v4('10.16777216')).toBe('invalid');
    expect(v4('1.2.65536')).toBe('invalid');
    expect(v4('0x7F.1')).toBe('127.0.0.1');
    expect(v4('0x' + '0'.repeat(50) + '7f.1')).toBe('127.0.0.1');
    expect(v4('017700000001')).toBe('127.0.0.1');
    expect(v4('08.1')).toBe('invalid');
    expect(v4('1..1')).toBe('invalid');
    expect(v4('example.com')).toBe('not-ipv4');
    expect(v4('1.2.3.com')).toBe('not-ipv4');
    expect(v4('example.0x1')).toBe('invalid');
    expect(v4('99999999999999999999')).toBe('invalid');
    expect(parseIpLiteral(42 as unknown as string)).toBeNull();
  });

  it('parses and matches CIDRs', () => {
    const c = parseCidr('10.0.0.0/8');
    expect(c).toMatchObject({ family: 4, prefix: 8 });
    const ten = parseIpLiteral('10.200.1.1');
    const eleven = parseIpLiteral('11.0.0.1');
    expect(cidrContains(c!, ten!)).toBe(true);
    expect(cidrContains(c!, eleven!)).toBe(false);
    expect(cidrContains(parseCidr('10.1.2.3/8')!, ten!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, eleven!)).toBe(true);
    expect(cidrContains(parseCidr('172.16.0.0/12')!, parseIpLiteral('172.31.0.1')!)).toBe(true);
    expect(cidrContains(parseCidr('172.16.0.0/12')!, parseIpLiteral('172.32.0.1')!)).toBe(false);
    expect(cidrContains(parseCidr('fd00::/8')!, parseIpLiteral('fd12::1')!)).toBe(true);
    expect(cidrContains(parseCidr('[::1]/128')!, parseIpLiteral('::1')!)).toBe(true);
    expect(cidrContains(parseCidr('::1')!, ten!)).toBe(false);
    expect(parseCidr('127.0.0.1')).toMatchObject({ prefix: 32 });
    for (const bad of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0/8',
      '127.1',
      'fe80::1%eth0/64',
      'x/8',
      '10.0.0.0/',
      '10.0.0.0/-1',
      '',
    ]) {
      expect(parseCidr(bad)).toBeNull();
    }
  });
});

describe('normalizeHost', () => {
  const loopbackSpellings = [
    '127.0.0.1',
    '127.1',
    '127.0.1',
    '2130706433',
    '0x7f.0.0.1',
    '0x7f000001',
    '0177.0.0.1',
    '0177.1',
    '017700000001',
    '127.0.0.1.',
    '127.000.000.001',
    '%31%32%37.0.0.1',
    '\uff11\uff12\uff17.\uff10.\uff10.\uff11',
    '127\u30020\u30020\u30021',
  ];

  it.each(loopbackSpellings)('%j is 127.0.0.1, as new URL reads it', (host) => {
    expect(normalizeHost(host)).toEqual({ kind: 'ip', family: 4, address: '127.0.0.1' });
    expect(new URL(`http://${host}/`).hostname).toBe('127.0.0.1');
  });

  it.each([
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['[::1]', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['[::127.0.0.1]', '::7f00:1'],
    ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
    ['[FD00:EC2::254]', 'fd00:ec2::254'],
  ])('%s is IPv6 %s, as new URL reads it', (host, address) => {
    expect(normalizeHost(host)).toEqual({ kind: 'ip', family: 6, address });
    expect(new URL(`http://${host}/`).hostname).toBe(`[${address}]`);
  });

  it('accepts unbracketed IPv6 and zones, as getaddrinfo does', () => {
    expect(normalizeHost('::ffff:127.0.0.1')).toEqual({ kind: 'ip', family: 6, address: '::ffff:7f00:1' });
    expect(normalizeHost('[fe80::1%25eth0]')).toEqual({ kind: 'ip', family: 6, address: 'fe80::1' });
    expect(normalizeHost('fe80::1%eth0')).toEqual({ kind: 'ip', family: 6, address: 'fe80::1' });
  });

  it('gives lowercase ASCII names for domains', () => {
    expect(normalizeHost('Hooks.Example.COM')).toEqual({ kind: 'domain', name: 'hooks.example.com' });
    expect(normalizeHost('hooks.example.com.')).toEqual({ kind: 'domain', name: 'hooks.example.com' });
    expect(normalizeHost('bücher.de')).toEqual({ kind: 'domain', name: 'xn--bcher-kva.de' });
    expect(normalizeHost(' example.com ')).toEqual({ kind: 'domain', name: 'example.com' });
    expect(normalizeHost('1.2.3.com')).toEqual({ kind: 'domain', name: '1.2.3.com' });
  });

  it.each([
    '',
    '1.2.3.4.5',
    '256.0.0.1',
    '4294967296',
    '08.0.0.1',
    '[1.2.3.4]',
    '[::1',
    '[:::]',
    'a b',
    'a/b',
    'a@b',
    '%zz',
    '%00x',
    '::g',
    'example.0x1',
  ])('%j is invalid', (host) => {
    expect(normalizeHost(host).kind).toBe('invalid');
  });

  it('never throws', () => {
    expect(normalizeHost(undefined as unknown as string).kind).toBe('invalid');
    expect(normalizeHost({} as unknown as string).kind).toBe('invalid');
  });
});

describe('isForbiddenAddress and the allow-list', () => {
  it('forbids everything but public addresses by default', () => {
    expect(isForbiddenAddress('8.8.8.8')).toBe(false);
    expect(isForbiddenAddress('2606:4700:4700::1111')).toBe(false);
    expect(isForbiddenAddress('::ffff:8.8.8.8')).toBe(false);
    for (const ip of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '169.254.169.254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::7f00:1',
      'fd00::1',
      'fe80::1',
      '0.0.0.0',
      '::',
      '255.255.255.255',
      '224.0.0.1',
      'garbage',
      '',
    ]) {
      expect(isForbiddenAddress(ip)).toBe(true);
    }
  });

  it('lets allow-listed ranges through, including through IPv4-mapped and NAT64 forms', () => {
    const allow = parseAllowList(['127.0.0.0/8', 'fd00::/8', ' 10.1.0.0/16 ']);
    expect(isForbiddenAddress('127.0.0.1', allow)).toBe(false);
    expect(isForbiddenAddress('::ffff:127.0.0.1', allow)).toBe(false);
    expect(isForbiddenAddress('64:ff9b::127.0.0.1', allow)).toBe(false);
    expect(isForbiddenAddress('::127.0.0.1', allow)).toBe(true); // IPv4-compatible is not a way to reach it
    expect(isForbiddenAddress('fd12::1', allow)).toBe(false);
    expect(isForbiddenAddress('10.1.200.3', allow)).toBe(false);
    expect(isForbiddenAddress('10.2.0.1', allow)).toBe(true);
    expect(isForbiddenAddress('::1', allow)).toBe(true);
    expect(isForbiddenAddress('garbage', parseAllowList(['0.0.0.0/0', '::/0']))).toBe(true);
    expect(isForbiddenAddress('127.0.0.1', ['127.0.0.1/32'])).toBe(false);
  });

  it('reads a comma-separated config value and refuses bad entries', () => {
    expect(parseAllowList('127.0.0.0/8, ::1/128,').cidrs).toHaveLength(2);
    expect(parseAllowList(undefined)).toEqual(EMPTY_ALLOW_LIST);
    expect(() => parseAllowList(['10.0.0.0/8', 'localhost', '10.0.0.0/40'])).toThrow(/localhost, 10\.0\.0\.0\/40/);
  });
});

describe('checkTargetUrl', () => {
  it('allows public https targets and domain names (checked at connect time)', () => {
    expect(checkTargetUrl('https://hooks.example.com/in')).toBeNull();
    expect(checkTargetUrl('https://8.8.8.8/in')).toBeNull();
    expect(checkTargetUrl(new URL('https://[2606:4700:4700::1111]:8443/'))).toBeNull();
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.1/',
    'https://2130706433/',
    'https://0x7f.0.0.1/',
    'https://0177.0.0.1/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::1]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/',
    'https://10.0.0.1/',
    'https://0.0.0.0/',
    'https://%31%32%37.0.0.1/',
    'https://localhost/',
    'https://api.localhost/',
    'https://user:pw@127.0.0.1:8443/x',
  ])('refuses %s', (url) => {
    expect(checkTargetUrl(url)).toMatch(/may not reach/);
  });

  it('names the range in the reason', () => {
    expect(checkTargetUrl('https://[::ffff:127.0.0.1]/')).toBe(
      'address ::ffff:7f00:1 is loopback (ipv4-mapped 127.0.0.1), which hooks may not reach',
    );
    expect(checkTargetUrl('https://169.254.169.254/')).toMatch(/link-local/);
  });

  it('requires https unless http is allowed', () => {
    expect(checkTargetUrl('http://hooks.example.com/')).toBe('the URL must use https');
    expect(checkTargetUrl('http://hooks.example.com/', undefined, { allowHttp: true })).toBeNull();
    expect(checkTargetUrl('ftp://hooks.example.com/', undefined, { allowHttp: true })).toMatch(/https or http/);
    expect(checkTargetUrl('file:///etc/passwd')).toMatch(/https/);
    expect(checkTargetUrl('not a url')).toBe('not a valid URL');
  });

  it('allows loopback when configured, as tests do', () => {
    const allow = ['127.0.0.0/8', '::1/128'];
    expect(checkTargetUrl('http://127.0.0.1:8080/', allow, { allowHttp: true })).toBeNull();
    expect(checkTargetUrl('http://localhost:8080/', allow, { allowHttp: true })).toBeNull();
    expect(checkTargetUrl('http://[::1]:8080/', allow, { allowHttp: true })).toBeNull();
  });
});

type Answer = dns.LookupAddress[] | NodeJS.ErrnoException;

function fakeResolver(answers: Record<string, Answer | Answer[]>) {
  const calls: string[] = [];
  const counters: Record<string, number> = {};
  const resolve = (
    host: string,
    _o: dns.LookupAllOptions,
    cb: (e: NodeJS.ErrnoException | null, a: dns.LookupAddress[]) => void,
  ) => {
    calls.push(host);
    const entry = answers[host];
    const list =
      Array.isArray(entry) && entry.length > 0 && Array.isArray(entry[0]) ? (entry as Answer[]) : [entry as Answer];
    const i = counters[host] ?? 0;
    counters[host] = i + 1;
    const a = list[Math.min(i, list.length - 1)];
    setImmediate(() =>
      a instanceof Error || a === undefined
        ? cb(a ?? Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), [])
        : cb(null, a),
    );
  };
  return { resolve, calls };
}

function lookupAsync(
  lookup: ReturnType<typeof createGuardedLookup>,
  host: string,
  options: dns.LookupOptions,
): Promise<{ address: unknown; family?: number }> {
  return new Promise((resolve, reject) => {
    (
      lookup as unknown as (
        h: string,
        o: dns.LookupOptions,
        cb: (e: Error | null, a: unknown, f?: number) => void,
      ) => void
    )(host, options, (e, address, family) => (e ? reject(e) : resolve({ address, family })));
  });
}

describe('createGuardedLookup', () => {
  const pub = { address: '93.184.215.14', family: 4 };
  const pub6 = { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 };
  const meta = { address: '169.254.169.254', family: 4 };
  const loop6 = { address: '::1', family: 6 };

  it('passes public answers through in the form asked for', async () => {
    const { resolve } = fakeResolver({ 'ok.test': [pub, pub6] });
    const lookup = createGuardedLookup(undefined, { resolve });
    await expect(lookupAsync(lookup, 'ok.test', { all: true })).resolves.toEqual({
      address: [pub, pub6],
      family: undefined,
    });
    await expect(lookupAsync(lookup, 'ok.test', {})).resolves.toEqual({ address: pub.address, family: 4 });
  });

  it('refuses a name that resolves only to forbidden addresses', async () => {
    const { resolve } = fakeResolver({ 'evil.test': [meta, loop6] });
    const lookup = createGuardedLookup(undefined, { resolve });
    const err = await lookupAsync(lookup, 'evil.test', { all: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SsrfBlockedError);
    expect(err).toMatchObject({ code: 'ESSRFBLOCKED', hostname: 'evil.test', addresses: ['169.254.169.254', '::1'] });
    expect(isSsrfBlockedError(err)).toBe(true);
  });

  it('drops forbidden addresses from a mixed answer', async () => {
    const { resolve } = fakeResolver({ 'mixed.test': [meta, pub] });
    const lookup = createGuardedLookup(undefined, { resolve });
    await expect(lookupAsync(lookup, 'mixed.test', {})).resolves.toEqual({ address: pub.address, family: 4 });
  });

  it('checks every resolution, so a rebinding answer is refused at connect time', async () => {
    const { resolve, calls } = fakeResolver({ 'rebind.test': [[pub], [{ address: '127.0.0.1', family: 4 }]] });
    const lookup = createGuardedLookup(undefined, { resolve });
    await expect(lookupAsync(lookup, 'rebind.test', {})).resolves.toMatchObject({ address: pub.address });
    await expect(lookupAsync(lookup, 'rebind.test', {})).rejects.toBeInstanceOf(SsrfBlockedError);
    expect(calls).toEqual(['rebind.test', 'rebind.test']);
  });

  it('passes resolver errors on', async () => {
    const { resolve } = fakeResolver({});
    const lookup = createGuardedLookup(undefined, { resolve });
    await expect(lookupAsync(lookup, 'nx.test', {})).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('accepts the legacy numeric family argument', async () => {
    const { resolve } = fakeResolver({ 'ok.test': [pub] });
    const lookup = createGuardedLookup(undefined, { resolve }) as unknown as (
      h: string,
      f: number,
      cb: (e: Error | null, a: string, f: number) => void,
    ) => void;
    await new Promise<void>((done) =>
      lookup('ok.test', 4, (e, a) => {
        expect(e).toBeNull();
        expect(a).toBe(pub.address);
        done();
      }),
    );
  });

  describe('with undici and a real receiver on 127.0.0.1', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_req, res) => res.end('reached'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise<void>((r) => server.close(() => r()));
    });

    it('refuses localhost by default (the check is on the address connected)', async () => {
      const agent = new Agent({ connect: { lookup: createGuardedLookup() } });
      try {
        const err = await request(`http://localhost:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
        expect(isSsrfBlockedError(err) || isSsrfBlockedError((err as { cause?: unknown }).cause)).toBe(true);
      } finally {
        await agent.close();
      }
    });

    it('connects when the allow-list covers loopback', async () => {
      const agent = new Agent({ connect: { lookup: createGuardedLookup(['127.0.0.0/8', '::1/128']) } });
      try {
        const res = await request(`http://localhost:${port}/`, { dispatcher: agent });
        expect(await res.body.text()).toBe('reached');
      } finally {
        await agent.close();
      }
    });
  });
});
