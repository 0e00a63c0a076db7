/**
 * IP address maths for the SSRF guard: parsing every literal spelling, canonical text, range classification and CIDR
 * matching. Kept in one file, with no dependencies, so it can be replaced by a library (ipaddr.js) without touching the
 * guard.
 */

export type AddressFamily = 4 | 6;

export interface IpAddress {
  readonly family: AddressFamily;
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array;
}

/**
 * - `public`: globally reachable unicast; the only range deliveries may reach without an allow-list entry.
 * - `transition`: 6to4 (2002::/16) and Teredo (2001::/32), deprecated tunnels that embed an IPv4 address.
 * - `reserved`: everything else that is not global unicast (240/4, IPv4-compatible ::/96, 100::/64, outside 2000::/3…).
 */
export type AddressRange =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'linkLocal'
  | 'uniqueLocal'
  | 'siteLocal'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'ietfProtocol'
  | 'transition'
  | 'reserved'
  | 'invalid';

export interface AddressClass {
  readonly range: AddressRange;
  readonly family: AddressFamily | null;
  /** Canonical text (dotted decimal; RFC 5952 for IPv6); "" when invalid. */
  readonly address: string;
  /** For IPv6 forms that carry an IPv4 address, the form and that address; `range` is then the IPv4 address's range. */
  readonly embedded?: {
    readonly via: 'ipv4-mapped' | 'ipv4-compatible' | 'nat64' | '6to4' | 'teredo';
    readonly ipv4: string;
  };
}

// ---------------------------------------------------------------------------------------------------- parsing

const DEC_OCTET = /^(?:0|[1-9]\d{0,2})$/;

/** Strict dotted decimal, as resolvers return it: four parts, no leading zeros. */
export function parseIPv4Dotted(text: string): IpAddress | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] as string;
    if (!DEC_OCTET.test(p) || Number(p) > 255) return null;
    bytes[i] = Number(p);
  }
  return { family: 4, bytes };
}

/** One part of a URL-style IPv4 literal: decimal, 0x-hex or 0-octal (WHATWG "IPv4 number parser", inet_aton). */
function ipv4Number(part: string): number | null {
  let s = part;
  let radix = 10;
  if (s.length >= 2 && (s.startsWith('0x') || s.startsWith('0X'))) {
    s = s.slice(2);
    radix = 16;
  } else if (s.length >= 2 && s.startsWith('0')) {
    s = s.slice(1);
    radix = 8;
  }
  if (s === '') return radix === 10 ? null : 0;
  const valid = radix === 16 ? /^[0-9a-fA-F]+$/ : radix === 8 ? /^[0-7]+$/ : /^\d+$/;
  if (!valid.test(s)) return null;
  // Leading zeros do not change the value; past that, long parts are out of range and would lose precision.
  s = s.replace(/^0+(?=.)/, '');
  if (s.length > 12) return Number.POSITIVE_INFINITY;
  return parseInt(s, radix);
}

export type Ipv4LiteralResult = IpAddress | 'not-ipv4' | 'invalid';

/**
 * The WHATWG URL host rules for IPv4 (which follow inet_aton): 1 to 4 parts separated by dots, an optional trailing
 * dot, each part decimal, 0x-hex or 0-octal, the last part filling the remaining bytes: `127.1`, `2130706433`,
 * `0x7f.0.0.1`, `0177.0.0.1` are all 127.0.0.1. A host whose last part is numeric but that is no valid IPv4 address
 * (`1.2.3.4.5`, `256.0.0.1`) is `invalid`: URL parsers refuse it rather than treating it as a domain name.
 */
export function parseIPv4Literal(host: string): Ipv4LiteralResult {
  let parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
  const last = parts[parts.length - 1] ?? '';
  const endsInNumber = /^\d+$/.test(last) || ipv4Number(last) !== null;
  if (!endsInNumber) return 'not-ipv4';
  if (parts.length > 4) return 'invalid';
  const numbers: number[] = [];
  for (const p of parts) {
    const n = ipv4Number(p);
    if (n === null) return 'invalid';
    numbers.push(n);
  }
  const head = numbers.slice(0, -1);
  if (head.some((n) => n > 255)) return 'invalid';
  const tail = numbers[numbers.length - 1] as number;
  if (tail >= Math.pow(256, 5 - numbers.length)) return 'invalid';
  let value = tail;
  head.forEach((n, i) => {
    value += n * Math.pow(256, 3 - i);
  });
  const bytes = new Uint8Array([(value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
  return { family: 4, bytes };
}

/** IPv6 text (RFC 4291 2.2), with an optional dotted IPv4 tail; a zone (`%eth0`) is ignored. No brackets. */
export function parseIPv6(text: string): IpAddress | null {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(s.slice(zone + 1))) return null;
    s = s.slice(0, zone);
  }
  if (s.length === 0 || s.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(s)) return null;

  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    const v4 = parseIPv4Dotted(s.slice(lastColon + 1));
    if (!v4) return null;
    tail = [(v4.bytes[0]! << 8) | v4.bytes[1]!, (v4.bytes[2]! << 8) | v4.bytes[3]!];
    s = s.slice(0, lastColon + 1);
    // "::1.2.3.4" leaves "::", "1:2:3:4:5:6:1.2.3.4" leaves "…:6:"; a lone trailing ":" is the separator.
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
  }

  const halves = s.split('::');
  if (halves.length > 2) return null;
  const group = (g: string): number | null => (/^[0-9A-Fa-f]{1,4}$/.test(g) ? parseInt(g, 16) : null);
  const side = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      const n = group(g);
      if (n === null) return null;
      out.push(n);
    }
    return out;
  };
  const left = side(halves[0] as string);
  const right = halves.length === 2 ? side(halves[1] as string) : [];
  if (!left || !right) return null;
  const given = left.length + right.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return null;
    groups = [...left, ...new Array<number>(8 - given).fill(0), ...right, ...tail];
  } else {
    if (given !== 8) return null;
    groups = [...left, ...tail];
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 255;
  });
  return { family: 6, bytes };
}

/**
 * Any IP literal: IPv6 with or without brackets, or IPv4 in any URL/inet_aton spelling. null when the text is no IP
 * literal (a domain name, or garbage).
 */
export function parseIpLiteral(text: string): IpAddress | null {
  if (typeof text !== 'string') return null;
  // Brackets hold IPv6 only, as in URLs: "[127.0.0.1]" is no address.
  if (text.startsWith('[') && text.endsWith(']')) return parseIPv6(text.slice(1, -1));
  if (text.includes(':')) return parseIPv6(text);
  const v4 = parseIPv4Literal(text);
  return typeof v4 === 'object' ? v4 : null;
}

// ---------------------------------------------------------------------------------------------------- formatting

export function formatIPv4(bytes: Uint8Array): string {
  return Array.from(bytes.subarray(0, 4)).join('.');
}

/** RFC 5952: lowercase, no leading zeros, the longest run (2+ groups) of zeros as "::", the first on a tie. */
export function formatIPv6(bytes: Uint8Array): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export function formatAddress(ip: IpAddress): string {
  return ip.family === 4 ? formatIPv4(ip.bytes) : formatIPv6(ip.bytes);
}

// ---------------------------------------------------------------------------------------------------- CIDR

export interface Cidr {
  readonly family: AddressFamily;
  readonly bytes: Uint8Array;
  readonly prefix: number;
  /** The entry as written, for messages. */
  readonly text: string;
}

/** `10.0.0.0/8`, `::1/128`, `[fd00::]/8`, or a single address. Host bits beyond the prefix are ignored. */
export function parseCidr(text: string): Cidr | null {
  if (typeof text !== 'string') return null;
  const t = text.trim();
  const slash = t.lastIndexOf('/');
  let addrText = slash >= 0 ? t.slice(0, slash) : t;
  if (addrText.startsWith('[') && addrText.endsWith(']')) addrText = addrText.slice(1, -1);
  const ip = addrText.includes(':') ? parseIPv6(addrText) : parseIPv4Dotted(addrText);
  if (!ip || addrText.includes('%')) return null;
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = t.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return null;
    prefix = Number(p);
  }
  return { family: ip.family, bytes: ip.bytes, prefix, text: t };
}

export function cidrContains(cidr: Cidr, ip: IpAddress): boolean {
  if (cidr.family !== ip.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((cidr.bytes[i] as number) & mask) !== ((ip.bytes[i] as number) & mask)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------- classification

type RangeTable = ReadonlyArray<readonly [Cidr, AddressRange]>;

function table(entries: ReadonlyArray<readonly [string, AddressRange]>): RangeTable {
  return entries.map(([text, range]) => {
    const c = parseCidr(text);
    if (!c) throw new Error(`bad built-in range ${text}`);
    return [c, range] as const;
  });
}

// IANA special-purpose registries; the first match wins, so narrower entries come first.
const IPV4_RANGES = table([
  ['255.255.255.255/32', 'broadcast'],
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'linkLocal'], // includes the cloud metadata address 169.254.169.254
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'ietfProtocol'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // former 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
]);

const IPV6_RANGES = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215)
  ['100::/64', 'reserved'], // discard-only
  ['2001::/32', 'transition'], // Teredo
  ['2001:2::/48', 'benchmarking'],
  ['2001:10::/28', 'reserved'], // ORCHID
  ['2001:20::/28', 'reserved'], // ORCHIDv2
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', 'transition'], // 6to4
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'reserved'], // SRv6 SIDs
  ['fc00::/7', 'uniqueLocal'], // includes fd00:ec2::254, the AWS metadata address over IPv6
  ['fe80::/10', 'linkLocal'],
  ['fec0::/10', 'siteLocal'],
  ['ff00::/8', 'multicast'],
]);

const GLOBAL_UNICAST_V6 = parseCidr('2000::/3') as Cidr;

function lookup(tableOf: RangeTable, ip: IpAddress): AddressRange | null {
  for (const [cidr, range] of tableOf) if (cidrContains(cidr, ip)) return range;
  return null;
}

function classifyIPv4(ip: IpAddress): AddressRange {
  return lookup(IPV4_RANGES, ip) ?? 'public';
}

const zeros = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address carries, and how, when it is one of the embedding forms. */
export function embeddedIPv4(
  ip: IpAddress,
): { via: NonNullable<AddressClass['embedded']>['via']; v4: IpAddress } | null {
  if (ip.family !== 6) return null;
  const b = ip.bytes;
  const v4 = (from: number, xor = 0): IpAddress => ({ family: 4, bytes: b.slice(from, from + 4).map((x) => x ^ xor) });
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return { via: 'ipv4-mapped', v4: v4(12) };
  if (zeros(b, 0, 12) && !zeros(b, 12, 15)) return { via: 'ipv4-compatible', v4: v4(12) };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12))
    return { via: 'nat64', v4: v4(12) };
  if (b[0] === 0x20 && b[1] === 0x02) return { via: '6to4', v4: v4(2) };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return { via: 'teredo', v4: v4(12, 0xff) };
  return null;
}

/**
 * Range of an address. Accepts any literal parseIpLiteral accepts. An IPv4-mapped or NAT64 (64:ff9b::/96) address is
 * the IPv4 address it carries, so it gets that address's range (`::ffff:127.0.0.1` is loopback, `64:ff9b::8.8.8.8`
 * public). IPv4-compatible addresses are deprecated and never public; 6to4 and Teredo are `transition` unless the
 * carried address is itself forbidden, which is then reported.
 */
export function classifyAddress(ipText: string): AddressClass {
  const ip = parseIpLiteral(ipText);
  if (!ip) return { range: 'invalid', family: null, address: '' };
  const address = formatAddress(ip);
  if (ip.family === 4) return { range: classifyIPv4(ip), family: 4, address };

  const special = lookup(IPV6_RANGES, ip);
  if (special === 'unspecified' || special === 'loopback') return { range: special, family: 6, address };
  const emb = embeddedIPv4(ip);
  if (emb) {
    const inner = classifyIPv4(emb.v4);
    const embedded = { via: emb.via, ipv4: formatIPv4(emb.v4.bytes) };
    if (emb.via === 'ipv4-mapped' || emb.via === 'nat64') return { range: inner, family: 6, address, embedded };
    if (emb.via === 'ipv4-compatible')
      return { range: inner === 'public' ? 'reserved' : inner, family: 6, address, embedded };
    return { range: inner === 'public' ? 'transition' : inner, family: 6, address, embedded };
  }
  if (special) return { range: special, family: 6, address };
  return { range: cidrContains(GLOBAL_UNICAST_V6, ip) ? 'public' : 'reserved', family: 6, address };
}
