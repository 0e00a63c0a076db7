import * as dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { domainToASCII } from 'node:url';
import {
  AddressFamily,
  Cidr,
  IpAddress,
  cidrContains,
  classifyAddress,
  embeddedIPv4,
  formatAddress,
  parseCidr,
  parseIPv4Literal,
  parseIPv6,
  parseIpLiteral,
} from './ip-address';

export { classifyAddress } from './ip-address';
export type { AddressClass, AddressRange } from './ip-address';

/**
 * SSRF guard for hook deliveries (decisions.md: on by default, operator-configurable allow-list):
 * - `checkTargetUrl` before each attempt and at hook creation: scheme, and IP literals in every spelling, because a
 *   connection to an IP literal never goes through DNS lookup (Node skips `lookup` for IP hosts);
 * - `createGuardedLookup` as undici's `connect.lookup`: resolves names and drops forbidden addresses, so the check is
 *   on the address actually connected (a DNS answer that changes between check and use gains nothing);
 * - redirects are not followed (undici's default; the delivery code must not enable them).
 * Only `public` addresses are reachable unless an allow-list CIDR covers the address.
 */

export interface AllowList {
  readonly cidrs: readonly Cidr[];
}

export const EMPTY_ALLOW_LIST: AllowList = Object.freeze({ cidrs: Object.freeze([]) });

/**
 * CIDR entries (`10.0.0.0/8`, `::1/128`, `127.0.0.1`) from config; a string is split on commas. Throws on a bad entry.
 */
export function parseAllowList(entries: readonly string[] | string | undefined): AllowList {
  const list = typeof entries === 'string' ? entries.split(',') : (entries ?? []);
  const cidrs: Cidr[] = [];
  const bad: string[] = [];
  for (const raw of list) {
    const e = String(raw).trim();
    if (e === '') continue;
    const c = parseCidr(e);
    if (c) cidrs.push(c);
    else bad.push(e);
  }
  if (bad.length > 0)
    throw new Error(`Invalid SSRF allow-list entries (want CIDR such as 10.0.0.0/8 or ::1/128): ${bad.join(', ')}`);
  return Object.freeze({ cidrs: Object.freeze(cidrs) });
}

function asAllowList(allowList: AllowList | readonly string[] | undefined): AllowList {
  if (allowList === undefined) return EMPTY_ALLOW_LIST;
  return Array.isArray(allowList) ? parseAllowList(allowList as readonly string[]) : (allowList as AllowList);
}

function allowListed(ip: IpAddress, allowList: AllowList): boolean {
  if (allowList.cidrs.some((c) => cidrContains(c, ip))) return true;
  // An IPv4-mapped or NAT64 address reaches the IPv4 address it carries; an IPv4 entry covers it.
  const emb = embeddedIPv4(ip);
  return (
    !!emb && (emb.via === 'ipv4-mapped' || emb.via === 'nat64') && allowList.cidrs.some((c) => cidrContains(c, emb.v4))
  );
}

/** True unless the address is public or covered by the allow-list. Anything unparseable is forbidden. */
export function isForbiddenAddress(ip: string, allowList?: AllowList | readonly string[]): boolean {
  const parsed = parseIpLiteral(ip);
  if (!parsed) return true;
  if (allowListed(parsed, asAllowList(allowList))) return false;
  return classifyAddress(ip).range !== 'public';
}

export type NormalizedHost =
  | { readonly kind: 'ip'; readonly family: AddressFamily; readonly address: string }
  | { readonly kind: 'domain'; readonly name: string }
  | { readonly kind: 'invalid'; readonly reason: string };

const FORBIDDEN_DOMAIN_CHARS = /[\u0000-\u0020#%/:<>?@[\\\]^|\u007f]/;

function ipv6Host(text: string): NormalizedHost {
  const v6 = parseIPv6(text);
  return v6
    ? { kind: 'ip', family: 6, address: formatAddress(v6) }
    : { kind: 'invalid', reason: 'invalid IPv6 literal' };
}

/**
 * A URL host as a URL parser (WHATWG, as Node's `URL`) and getaddrinfo would read it: IPv6 literals with or without
 * brackets; IPv4 literals in any inet_aton spelling (`127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1`, a trailing
 * dot); percent-encoding and Unicode (fullwidth digits and dots) mapped first, as URL parsing does. Gives the canonical
 * address for IP literals and the lowercase ASCII name otherwise. A host that looks like an IPv4 literal but is none
 * (`1.2.3.4.5`, `256.1.1.1`) is invalid, as for a URL parser.
 */
export function normalizeHost(host: string): NormalizedHost {
  if (typeof host !== 'string') return { kind: 'invalid', reason: 'host must be a string' };
  let h = host.trim();
  if (h === '') return { kind: 'invalid', reason: 'empty host' };

  if (h.startsWith('[')) {
    if (!h.endsWith(']')) return { kind: 'invalid', reason: 'unclosed IPv6 bracket' };
    let inner = h.slice(1, -1);
    if (inner.includes('%')) {
      try {
        inner = decodeURIComponent(inner);
      } catch {
        return { kind: 'invalid', reason: 'bad percent-encoding' };
      }
    }
    return ipv6Host(inner);
  }

  // Unbracketed IPv6, as getaddrinfo accepts it (a URL would need brackets), possibly with a zone.
  if (h.includes(':')) return ipv6Host(h);

  if (h.includes('%')) {
    try {
      h = decodeURIComponent(h);
    } catch {
      return { kind: 'invalid', reason: 'bad percent-encoding' };
    }
    if (h.includes(':')) return ipv6Host(h);
  }

  // Checked before the mapping below, which would silently cut "a/b" down to "a".
  if (FORBIDDEN_DOMAIN_CHARS.test(h)) return { kind: 'invalid', reason: 'invalid character in host' };

  // UTS #46 mapping, as URL host parsing does: lowercases, maps fullwidth digits and ideographic full stops.
  const ascii = domainToASCII(h);
  if (ascii === '') return { kind: 'invalid', reason: 'invalid domain name' };

  const v4 = parseIPv4Literal(ascii);
  if (v4 === 'invalid') return { kind: 'invalid', reason: 'invalid IPv4 literal' };
  if (v4 !== 'not-ipv4') return { kind: 'ip', family: 4, address: formatAddress(v4) };

  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (name === '' || FORBIDDEN_DOMAIN_CHARS.test(name)) return { kind: 'invalid', reason: 'invalid domain name' };
  return { kind: 'domain', name };
}

export interface CheckTargetOptions {
  /** Plain http (tests, on-premise receivers); https only by default. */
  allowHttp?: boolean;
}

/**
 * Checks a hook URL before a delivery attempt or at hook creation. Returns null when the URL may be tried, else the
 * reason. A domain name passes here; its addresses are checked at connect time by the guarded lookup.
 */
export function checkTargetUrl(
  url: string | URL,
  allowList?: AllowList | readonly string[],
  options: CheckTargetOptions = {},
): string | null {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return 'not a valid URL';
  }
  if (u.protocol !== 'https:' && !(options.allowHttp && u.protocol === 'http:')) {
    return options.allowHttp ? 'the URL must use https or http' : 'the URL must use https';
  }
  const list = asAllowList(allowList);
  const host = normalizeHost(u.hostname);
  if (host.kind === 'invalid') return `invalid host: ${host.reason}`;
  if (host.kind === 'ip') {
    if (isForbiddenAddress(host.address, list)) {
      return `address ${host.address} is ${describeRange(host.address)}, which hooks may not reach`;
    }
    return null;
  }
  // Resolvers answer "localhost" from their own configuration; refuse it early rather than at the first attempt.
  if ((host.name === 'localhost' || host.name.endsWith('.localhost')) && isForbiddenAddress('127.0.0.1', list)) {
    return `host ${host.name} is loopback, which hooks may not reach`;
  }
  return null;
}

function describeRange(ip: string): string {
  const c = classifyAddress(ip);
  const names: Record<string, string> = {
    unspecified: 'unspecified',
    loopback: 'loopback',
    private: 'private',
    cgnat: 'shared (CGNAT)',
    linkLocal: 'link-local',
    uniqueLocal: 'unique-local',
    siteLocal: 'site-local',
    multicast: 'multicast',
    broadcast: 'broadcast',
    documentation: 'a documentation range',
    benchmarking: 'a benchmarking range',
    ietfProtocol: 'an IETF protocol range',
    transition: 'a tunnelling (6to4/Teredo) range',
    reserved: 'reserved',
    invalid: 'invalid',
  };
  const via = c.embedded ? ` (${c.embedded.via} ${c.embedded.ipv4})` : '';
  return `${names[c.range] ?? c.range}${via}`;
}

/** Raised by the guarded lookup; undici reports it as the connection error of the attempt. */
export class SsrfBlockedError extends Error {
  readonly code = 'ESSRFBLOCKED';
  constructor(
    readonly hostname: string,
    readonly addresses: readonly string[],
  ) {
    super(
      `Refused to connect to ${hostname}: ` +
        `${addresses.length ? addresses.join(', ') : 'no address'} not allowed for hooks`,
    );
    this.name = 'SsrfBlockedError';
  }
}

export function isSsrfBlockedError(e: unknown): e is SsrfBlockedError {
  return (
    e instanceof SsrfBlockedError ||
    (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ESSRFBLOCKED')
  );
}

type Resolver = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface GuardedLookupOptions {
  /** The resolver to wrap; node:dns `lookup` by default (tests pass a fake one). */
  resolve?: Resolver;
}

/**
 * A `dns.lookup`-compatible function for undici's `connect: { lookup }` (and net/tls `lookup`). Resolves every address
 * and keeps only the allowed ones; fails with SsrfBlockedError when none is left. Answers in the form asked for
 * (`all: true` → a list, as Node's happy-eyeballs connect asks; else one address and its family).
 */
export function createGuardedLookup(
  allowList?: AllowList | readonly string[],
  options: GuardedLookupOptions = {},
): LookupFunction {
  const list = asAllowList(allowList);
  const resolve: Resolver = options.resolve ?? ((h, o, cb) => dns.lookup(h, o, cb));
  const guarded = (
    hostname: string,
    opts: dns.LookupOptions | number | undefined,
    callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
  ): void => {
    const o: dns.LookupOptions = typeof opts === 'number' ? { family: opts } : { ...(opts ?? {}) };
    const wantAll = o.all === true;
    resolve(hostname, { ...o, all: true }, (err, addresses) => {
      if (err) return callback(err, wantAll ? [] : '', undefined);
      const all = Array.isArray(addresses) ? addresses : [];
      const allowed = all.filter((a) => !isForbiddenAddress(a.address, list));
      if (allowed.length === 0)
        return callback(
          new SsrfBlockedError(
            hostname,
            all.map((a) => a.address),
          ),
          wantAll ? [] : '',
          undefined,
        );
      if (wantAll) return callback(null, allowed);
      const first = allowed[0] as dns.LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
  return guarded;
}
