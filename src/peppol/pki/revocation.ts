/**
 * Revocation of Peppol AP and SMP certificates through OCSP (RFC 6960, ./ocsp.ts) and CRLs (RFC 5280 §5, §6.3).
 *
 * For a certificate and the CA that issued it (taken from the path checkCertificate validated, never from the peer):
 * the OCSP responders the certificate names (Authority Information Access) are asked first — an answer signed by the
 * CA or its authorised responder for exactly this certificate, current, decides. When none decides, the CRL
 * Distribution Points of the certificate are read (http/https URLs only), the first CRL that can be fetched
 * within the timeout and size cap is checked — issuer name equals the CA's subject, signature verifies with the CA's
 * key, thisUpdate is not in the future and nextUpdate not in the past — and the certificate's serial is looked up.
 * OCSP answers (per certificate) and CRLs (per distribution point and CA) are cached until their nextUpdate (bounded,
 * least recently used out), and concurrent checks share one fetch.
 *
 * Outcomes: `good`, `revoked` (date and reason), or `unknown` (nothing to ask, fetch failed, no acceptable answer).
 * What `unknown` means is the policy: hard fail (the default, refuse) or soft fail (accept).
 */
import { webcrypto, type X509Certificate } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import type * as X509 from '@peculiar/x509';
import { buildOcspRequest, readOcspResponse, type OcspAnswer } from './ocsp';
import { x509 } from './x509-lib';

const crypto = webcrypto as unknown as Crypto;

export type RevocationStatus =
  | { status: 'good'; source: 'crl' | 'ocsp'; url: string; thisUpdate: Date; nextUpdate: Date | undefined }
  | { status: 'revoked'; source: 'crl' | 'ocsp'; url: string; revokedAt: Date; reason: string }
  | { status: 'unknown'; message: string };

export interface RevocationVerdict {
  /** False when the certificate must be refused: revoked, or unknown under hard fail. */
  accepted: boolean;
  /** One status per checked certificate of the path (leaf first; the trust anchor is not checked). */
  statuses: Array<{ subject: string; serialNumber: string; result: RevocationStatus }>;
  /** Why it was refused, or (soft fail) why the status could not be determined. */
  message?: string;
}

export interface RevocationCheckerOptions {
  /** `soft`: a certificate whose status cannot be determined is accepted. Default `hard`. */
  failureMode?: 'hard' | 'soft';
  /** Per CRL download or OCSP request (connect, headers and body). Default 5 s. */
  timeoutMs?: number;
  /** Largest CRL accepted. Default 10 MiB. */
  maxCrlBytes?: number;
  /** CRLs and OCSP answers kept in memory. Default 100. */
  maxCacheEntries?: number;
  /** How long a CRL or OCSP answer without nextUpdate is reused. Default 1 hour. */
  defaultCacheMs?: number;
  /** Tolerated clock difference when judging thisUpdate / nextUpdate. Default 5 minutes. */
  clockSkewMs?: number;
  dispatcher?: Dispatcher;
  now?: () => Date;
}

const REASONS: Record<number, string> = {
  0: 'unspecified',
  1: 'keyCompromise',
  2: 'cACompromise',
  3: 'affiliationChanged',
  4: 'superseded',
  5: 'cessationOfOperation',
  6: 'certificateHold',
  8: 'removeFromCRL',
  9: 'privilegeWithdrawn',
  10: 'aACompromise',
};

class CrlProblem extends Error {}

interface CachedCrl {
  crl: X509.X509Crl;
  url: string;
  expires: number;
}

interface CachedOcsp {
  answer: OcspAnswer;
  expires: number;
}

/** Largest OCSP response read (they are a few KB). */
const MAX_OCSP_BYTES = 256 * 1024;

function describe(cert: X509Certificate): string {
  return `"${cert.subject.split('\n').join(', ')}" (serial ${cert.serialNumber})`;
}

/** The http(s) CRL distribution point URLs and OCSP responder URLs a certificate names. */
export function revocationPointsOf(cert: X509Certificate): { crlUrls: string[]; ocspUrls: string[] } {
  const c = new x509.X509Certificate(new Uint8Array(cert.raw));
  const crlUrls: string[] = [];
  const dp = c.getExtension(x509.CRLDistributionPointsExtension);
  for (const point of dp?.distributionPoints ?? []) {
    for (const name of point.distributionPoint?.fullName ?? []) {
      const uri = name.uniformResourceIdentifier;
      if (uri && /^https?:\/\//i.test(uri)) crlUrls.push(uri);
    }
  }
  const aia = c.getExtension(x509.AuthorityInfoAccessExtension);
  const ocspUrls = (aia?.ocsp ?? []).filter((g) => g.type === 'url').map((g) => g.value);
  return { crlUrls, ocspUrls };
}

export class RevocationChecker {
  private readonly cache = new Map<string, CachedCrl | CachedOcsp>();
  private readonly inflight = new Map<string, Promise<CachedCrl | CachedOcsp>>();
  private readonly failureMode: 'hard' | 'soft';
  private readonly timeoutMs: number;
  private readonly maxCrlBytes: number;
  private readonly maxEntries: number;
  private readonly defaultCacheMs: number;
  private readonly skewMs: number;
  private readonly now: () => Date;
  /** CRL downloads and OCSP requests made (not cache hits); for metrics and tests. */
  fetches = 0;

  constructor(private readonly options: RevocationCheckerOptions = {}) {
    this.failureMode = options.failureMode ?? 'hard';
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxCrlBytes = options.maxCrlBytes ?? 10 * 1024 * 1024;
    this.maxEntries = options.maxCacheEntries ?? 100;
    this.defaultCacheMs = options.defaultCacheMs ?? 3_600_000;
    this.skewMs = options.clockSkewMs ?? 300_000;
    this.now = options.now ?? (() => new Date());
  }

  get mode(): 'hard' | 'soft' {
    return this.failureMode;
  }

  /** The revocation status of `cert`, issued by `issuer`, at `at`. Never throws: what cannot be read is `unknown`. */
  async status(cert: X509Certificate, issuer: X509Certificate, at: Date = this.now()): Promise<RevocationStatus> {
    try {
      return await this.determine(cert, issuer, at);
    } catch (e) {
      // Certificates have passed node:crypto's parser, but a malformed extension must not turn into a 500.
      return {
        status: 'unknown',
        message: `the revocation status of ${describe(cert)} cannot be determined: ${(e as Error).message}`,
      };
    }
  }

  private async determine(cert: X509Certificate, issuer: X509Certificate, at: Date): Promise<RevocationStatus> {
    const { crlUrls, ocspUrls } = revocationPointsOf(cert);
    if (crlUrls.length === 0 && ocspUrls.length === 0) {
      return {
        status: 'unknown',
        message: `${describe(cert)} names neither an OCSP responder nor an http(s) CRL distribution point`,
      };
    }
    const problems: string[] = [];
    for (const url of ocspUrls) {
      let answer: OcspAnswer;
      try {
        answer = (
          await this.cached(`ocsp|${issuer.fingerprint256}|${cert.fingerprint256}|${url}`, () =>
            this.askOcsp(url, cert, issuer),
          )
        ).answer;
      } catch (e) {
        problems.push(`OCSP ${url}: ${(e as Error).message}`);
        continue;
      }
      if (answer.status === 'revoked' && answer.revokedAt.getTime() <= at.getTime()) {
        return {
          status: 'revoked',
          source: 'ocsp',
          url,
          revokedAt: answer.revokedAt,
          reason: REASONS[answer.reason ?? 0] ?? `reason ${answer.reason}`,
        };
      }
      if (answer.status === 'unknown') {
        problems.push(`OCSP ${url}: the responder does not know the certificate`);
        continue;
      }
      return { status: 'good', source: 'ocsp', url, thisUpdate: answer.thisUpdate, nextUpdate: answer.nextUpdate };
    }
    for (const url of crlUrls) {
      let entry: CachedCrl;
      try {
        entry = await this.crlFor(url, issuer);
      } catch (e) {
        problems.push(`${url}: ${(e as Error).message}`);
        continue;
      }
      const revoked = entry.crl.findRevoked(new x509.X509Certificate(new Uint8Array(cert.raw)));
      // removeFromCRL only appears in delta CRLs, where it undoes a hold; it is not a revocation.
      if (
        revoked &&
        revoked.revocationDate.getTime() <= at.getTime() &&
        revoked.reason !== x509.X509CrlReason.removeFromCRL
      ) {
        return {
          status: 'revoked',
          source: 'crl',
          url,
          revokedAt: revoked.revocationDate,
          reason: REASONS[revoked.reason ?? 0] ?? `reason ${revoked.reason}`,
        };
      }
      return { status: 'good', source: 'crl', url, thisUpdate: entry.crl.thisUpdate, nextUpdate: entry.crl.nextUpdate };
    }
    return {
      status: 'unknown',
      message: `the revocation status of ${describe(cert)} cannot be determined: ${problems.join('; ')}`,
    };
  }

  /**
   * Checks every certificate of a validated path except its trust anchor (chain = [leaf, …, anchor], as
   * checkCertificate returns it), each against the next one as its issuer.
   */
  async checkChain(chain: readonly X509Certificate[], at: Date = this.now()): Promise<RevocationVerdict> {
    const statuses: RevocationVerdict['statuses'] = [];
    for (let i = 0; i + 1 < chain.length; i++) {
      const cert = chain[i] as X509Certificate;
      const result = await this.status(cert, chain[i + 1] as X509Certificate, at);
      statuses.push({ subject: cert.subject.split('\n').join(', '), serialNumber: cert.serialNumber, result });
      if (result.status === 'revoked') {
        return {
          accepted: false,
          statuses,
          message: `${describe(cert)} was revoked on ${result.revokedAt.toISOString()} (${result.reason})`,
        };
      }
      if (result.status === 'unknown' && this.failureMode === 'hard')
        return { accepted: false, statuses, message: result.message };
    }
    const unknown = statuses.find((s) => s.result.status === 'unknown');
    return unknown && unknown.result.status === 'unknown'
      ? { accepted: true, statuses, message: unknown.result.message }
      : { accepted: true, statuses };
  }

  private crlFor(url: string, issuer: X509Certificate): Promise<CachedCrl> {
    return this.cached(`crl|${issuer.fingerprint256}|${url}`, () => this.download(url, issuer));
  }

  private async askOcsp(url: string, cert: X509Certificate, issuer: X509Certificate): Promise<CachedOcsp> {
    this.fetches++;
    const body = await this.fetchBytes(url, MAX_OCSP_BYTES, buildOcspRequest(cert, issuer));
    const now = this.now();
    const answer = readOcspResponse(body, cert, issuer, now, this.skewMs);
    const next = answer.nextUpdate?.getTime();
    return {
      answer,
      expires: next !== undefined ? Math.max(now.getTime(), next) : now.getTime() + this.defaultCacheMs,
    };
  }

  /** A cached value until its expiry; one load at a time per key; failures are not cached. */
  private async cached<T extends CachedCrl | CachedOcsp>(key: string, load: () => Promise<T>): Promise<T> {
    const now = this.now().getTime();
    const hit = this.cache.get(key);
    if (hit && hit.expires > now) {
      // Re-insert: the map's order is the eviction order (least recently used first).
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit as T;
    }
    if (hit) this.cache.delete(key);
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = load().finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    const entry = (await pending) as T;
    this.cache.set(key, entry);
    while (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return entry;
  }

  private async download(url: string, issuer: X509Certificate): Promise<CachedCrl> {
    this.fetches++;
    const body = await this.fetchBytes(url, this.maxCrlBytes);
    let crl: X509.X509Crl;
    try {
      crl = new x509.X509Crl(new Uint8Array(body));
    } catch (e) {
      throw new CrlProblem(`not a readable CRL (${(e as Error).message})`);
    }
    const ca = new x509.X509Certificate(new Uint8Array(issuer.raw));
    if (crl.issuerName.toString() !== ca.subjectName.toString())
      throw new CrlProblem(`the CRL is issued by "${crl.issuer}", not by "${ca.subject}"`);
    let verified = false;
    try {
      verified = await crl.verify({ publicKey: ca }, crypto);
    } catch {
      verified = false;
    }
    if (!verified) throw new CrlProblem(`the CRL signature does not verify with the key of "${ca.subject}"`);
    const now = this.now().getTime();
    if (crl.thisUpdate.getTime() - this.skewMs > now)
      throw new CrlProblem(`the CRL is not valid before ${crl.thisUpdate.toISOString()}`);
    const next = crl.nextUpdate?.getTime();
    if (next !== undefined && next + this.skewMs < now)
      throw new CrlProblem(`the CRL expired on ${crl.nextUpdate?.toISOString()} (nextUpdate)`);
    // Delta CRLs and indirect CRLs are not used by the Peppol CAs; a critical extension we do not read means the CRL
    // may not say what we would take it to say.
    const unread = crl.extensions.filter((e) => e.critical && e.type !== '2.5.29.28' /* issuingDistributionPoint */);
    if (unread.length)
      throw new CrlProblem(
        `the CRL has critical extensions that are not supported (${unread.map((e) => e.type).join(', ')})`,
      );
    return { crl, url, expires: next !== undefined ? Math.max(now, next) : now + this.defaultCacheMs };
  }

  /** GET `url`, or POST `ocspRequest` to it; the body within `maxBytes`. */
  private async fetchBytes(url: string, maxBytes: number, ocspRequest?: Buffer): Promise<Buffer> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: ocspRequest ? 'POST' : 'GET',
        signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        headers: ocspRequest
          ? { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' }
          : { accept: 'application/pkix-crl, application/x-pkcs7-crl, */*' },
        ...(ocspRequest ? { body: ocspRequest } : {}),
        ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
      });
    } catch (e) {
      const err = e as { code?: string; name?: string; message?: string; cause?: { code?: string } };
      if (signal.aborted) throw new CrlProblem(`no answer within ${this.timeoutMs} ms`);
      throw new CrlProblem(
        `cannot be fetched (${err.code ?? err.cause?.code ?? err.name ?? 'error'}): ${err.message ?? ''}`.trim(),
      );
    }
    if (res.statusCode !== 200) {
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      throw new CrlProblem(`HTTP ${res.statusCode}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new CrlProblem(`the ${ocspRequest ? 'OCSP response' : 'CRL'} exceeds ${maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (e) {
      if (e instanceof CrlProblem) throw e;
      throw new CrlProblem(
        signal.aborted
          ? `no complete answer within ${this.timeoutMs} ms`
          : `the download failed: ${(e as Error).message}`,
      );
    }
    return Buffer.concat(chunks);
  }
}
