/**
 * SML lookup: which SMP serves a participant. Peppol uses BDXL / U-NAPTR (PFUOI 4.4 POLICY 7, SML 1.3):
 *
 *   name  = base32(sha256(lower-case participant value)), no padding, lower-cased
 *           + "." + participant scheme + "." + SML zone
 *   NAPTR records of that name with flag "U" and service "Meta:SMP"; the regexp rewrites the name into the SMP URL.
 *
 * The legacy scheme (`B-` + md5 hex + "." + scheme + "." + zone, resolved as a host name) is only tried when asked
 * for: the OpenPeppol-run SML zones publish NAPTR records, and the old EC zones that also had CNAMEs are gone.
 *
 * Failures are told apart because callers act differently: an unregistered participant is final, a DNS outage is
 * retried.
 */
import { createHash } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { formatId, type ParticipantId } from './identifiers';
import { PeppolError } from './peppol-error';

export const SML_ZONES = {
  production: 'participant.sml.prod.tech.peppol.org',
  test: 'participant.sml.test.tech.peppol.org',
} as const;

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (upper case, as the RFC writes it). */
export function base32(data: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** The first label of a participant's NAPTR name. Only the value is hashed (not the scheme), lower-cased first. */
export function naptrHashLabel(participantValue: string): string {
  return base32(createHash('sha256').update(participantValue.toLowerCase(), 'utf8').digest()).toLowerCase();
}

function normaliseZone(zone: string): string {
  const z = zone.trim().replace(/\.$/, '').toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(z)) {
    throw new PeppolError('INTERNAL', 'dns-failure', `"${zone}" is not a valid SML DNS zone`, { retryable: false });
  }
  return z;
}

export function naptrName(participant: ParticipantId, zone: string): string {
  return `${naptrHashLabel(participant.value)}.${participant.scheme.toLowerCase()}.${normaliseZone(zone)}`;
}

/** The pre-2020 host name: `B-<md5 hex of the lower-cased value>.<scheme>.<zone>`. */
export function legacyCnameName(participant: ParticipantId, zone: string): string {
  const md5 = createHash('md5').update(participant.value.toLowerCase(), 'utf8').digest('hex');
  return `B-${md5}.${participant.scheme.toLowerCase()}.${normaliseZone(zone)}`;
}

export interface NaptrRecord {
  flags: string;
  service: string;
  regexp: string;
  replacement: string;
  order: number;
  preference: number;
}

/** What the lookup needs from DNS; node:dns's Resolver fits, tests may pass their own. */
export interface DnsResolverLike {
  resolveNaptr(name: string): Promise<NaptrRecord[]>;
  resolveCname(name: string): Promise<string[]>;
}

export interface DnsResolverOptions {
  /** `host` or `host:port`; default: the system resolvers. Only loopback servers belong in tests. */
  servers?: string[];
  timeoutMs?: number;
  tries?: number;
}

export function createDnsResolver(options: DnsResolverOptions = {}): DnsResolverLike {
  const r = new Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
  if (options.servers?.length) r.setServers(options.servers);
  return r;
}

/**
 * Applies a NAPTR regexp field (`<delim><ERE><delim><replacement><delim><flags>`, RFC 3402 §3.2) to `input`.
 * Undefined when the field is malformed or does not match.
 */
export function applyNaptrRegexp(field: string, input: string): string | undefined {
  const delim = field[0];
  if (!delim || /[\\1-9a-zA-Z]/.test(delim)) return undefined;
  const parts: string[] = [];
  let cur = '';
  for (let i = 1; i < field.length; i++) {
    const c = field[i] as string;
    if (c === '\\' && i + 1 < field.length && field[i + 1] === delim) {
      cur += delim;
      i++;
    } else if (c === delim) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  if (parts.length !== 3) return undefined;
  const [pattern, replacement, flags] = parts as [string, string, string];
  if (flags !== '' && flags !== 'i') return undefined;
  let re: RegExp;
  try {
    re = new RegExp(pattern, flags);
  } catch {
    return undefined;
  }
  const m = re.exec(input);
  if (!m) return undefined;
  // Back-references are \1..\9; everything else is literal (a backslash escapes the next character).
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i] as string;
    if (c === '\\' && i + 1 < replacement.length) {
      const n = replacement[i + 1] as string;
      out += /[1-9]/.test(n) ? (m[Number(n)] ?? '') : n;
      i++;
    } else out += c;
  }
  return input.slice(0, m.index) + out + input.slice(m.index + m[0].length);
}

export interface SmlLookupOptions {
  /** The SML zone, e.g. SML_ZONES.production, or a local zone in tests. */
  zone: string;
  resolver: DnsResolverLike;
  /** Also try the legacy CNAME name when no NAPTR record exists. Default false. */
  legacyCnameFallback?: boolean;
}

export interface SmlLookupResult {
  /** The SMP base URL (no trailing slash), to which the SMP REST paths are appended. */
  smpUrl: string;
  dnsName: string;
  method: 'naptr' | 'cname';
}

const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA']);

function dnsCode(e: unknown): string {
  return (e as { code?: string }).code ?? 'UNKNOWN';
}

function dnsFailure(name: string, e: unknown): PeppolError {
  return new PeppolError(
    'DEPENDENCY_UNAVAILABLE',
    'dns-failure',
    `DNS lookup of ${name} failed (${dnsCode(e)}): ${(e as Error).message}`,
    {
      cause: e,
      details: { dnsName: name, dnsCode: dnsCode(e) },
    },
  );
}

function smpUrlFrom(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  return raw.replace(/\/+$/, '');
}

/** Finds the SMP of `participant` through the SML. */
export async function lookupSmp(participant: ParticipantId, options: SmlLookupOptions): Promise<SmlLookupResult> {
  const name = naptrName(participant, options.zone);
  let records: NaptrRecord[] = [];
  try {
    records = await options.resolver.resolveNaptr(name);
  } catch (e) {
    if (!NOT_FOUND_CODES.has(dnsCode(e))) throw dnsFailure(name, e);
  }

  if (records.length > 0) {
    const candidates = records
      .filter((r) => r.flags.toUpperCase() === 'U' && r.service.toLowerCase() === 'meta:smp')
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    const problems: string[] = [];
    for (const r of candidates) {
      const rewritten = applyNaptrRegexp(r.regexp, name);
      const url = rewritten === undefined ? undefined : smpUrlFrom(rewritten);
      if (url) return { smpUrl: url, dnsName: name, method: 'naptr' };
      problems.push(
        `regexp "${r.regexp}" gives ${rewritten === undefined ? 'no match' : `"${rewritten}", not an http(s) URL`}`,
      );
    }
    throw new PeppolError(
      'UNPROCESSABLE',
      'no-matching-smp-service',
      `${formatId(participant)} has NAPTR records at ${name} but none usable for ` +
        `Meta:SMP${problems.length ? ` (${problems.join('; ')})` : ''}`,
      { details: { dnsName: name, records } },
    );
  }

  if (options.legacyCnameFallback) {
    const legacy = legacyCnameName(participant, options.zone);
    try {
      const targets = await options.resolver.resolveCname(legacy);
      if (targets.length > 0) return { smpUrl: `http://${legacy}`, dnsName: legacy, method: 'cname' };
    } catch (e) {
      if (!NOT_FOUND_CODES.has(dnsCode(e))) throw dnsFailure(legacy, e);
    }
  }

  throw new PeppolError(
    'NOT_FOUND',
    'participant-not-registered',
    `${formatId(participant)} is not registered in the SML (no NAPTR record at ${name})`,
    {
      details: { dnsName: name, zone: options.zone },
    },
  );
}
