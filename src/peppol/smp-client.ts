/**
 * Peppol SMP 1.x client: where and with which certificate a participant receives a document type.
 *
 *   GET {smp}/{participant}                       → ServiceGroup (unsigned): the document types
 *   GET {smp}/{participant}/services/{doctype}    → SignedServiceMetadata: processes and endpoints, or a Redirect
 *
 * Every SignedServiceMetadata must carry a valid enveloped signature over the whole document by a certificate that
 * chains to a configured SMP CA; the data is then read from what the signature covers (xml-crypto's signed
 * references), never from the received tree, so nothing unsigned can be slipped in. At most one redirect is followed,
 * and the target's signing certificate must be the one the redirect names (CertificateUID). The endpoint must use the
 * requested transport profile, be active now, and — when an AP CA is configured — carry a valid AP certificate. With a
 * RevocationChecker, the SMP signer and the endpoint certificate must not be revoked (a revoked one is refused, one
 * whose status cannot be determined under hard fail too, as retryable); results say `revocationChecked`.
 *
 * Failure reasons (PeppolError.reason): participant-unknown, document-type-not-supported, process-not-supported,
 * transport-profile-not-supported, endpoint-not-active, smp-unreachable (retryable), smp-response-invalid,
 * smp-redirect-invalid, smp-signature-invalid, smp-certificate-untrusted, endpoint-certificate-invalid.
 */
import type { X509Certificate } from 'node:crypto';
import type { Document, Element, Node } from '@xmldom/xmldom';
import { request } from 'undici';
import { SignedXml } from 'xml-crypto';
import { isGatewayError, type GatewayErrorCode } from '../core/gateway-error';
import { decodeXml, parseXml, select, text } from '../formats/xml/secure-parser';
import {
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeIdProblem,
  documentTypeIdEquals,
  encodeIdForUrl,
  formatId,
  participantIdEquals,
  participantIdProblem,
  processIdProblem,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from './identifiers';
import { useCorrectC14n } from './c14n';
import { PeppolError, type PeppolErrorReason } from './peppol-error';
import { AP_KEY_USAGES, SMP_KEY_USAGES, checkCertificate } from './pki/cert-validation';
import { parseCertificate, subjectMatches } from './pki/certificates';
import type { RevocationChecker } from './pki/revocation';
import { DSIG_NS, SMP_IDS_NS, SMP_NS, WSA_NS } from './smp-documents';

const NS = { smp: SMP_NS, ids: SMP_IDS_NS, wsa: WSA_NS, ds: DSIG_NS } as const;

export interface SmpClientOptions {
  /** CA certificates an SMP's signing certificate must chain to (the Peppol SMP CA). */
  smpCertificateAuthorities: readonly X509Certificate[];
  /** When set, the endpoint certificate must chain to one of these (the Peppol AP CA). */
  apCertificateAuthorities?: readonly X509Certificate[];
  /**
   * Checks the SMP signer and endpoint certificates for revocation; without it they are not (`revocationChecked:
   * false`).
   */
  revocation?: RevocationChecker;
  /** Per request (connect, headers and body). Default 10 s. */
  timeoutMs?: number;
  /** Largest response accepted. Default 4 MiB. */
  maxResponseBytes?: number;
  now?: () => Date;
  /** Refuse every SMP URL that is not https (production: Peppol SMPs are HTTPS-only); plain http is for local tests. */
  httpsOnly?: boolean;
}

export interface SmpEndpoint {
  transportProfile: string;
  url: string;
  /** The receiving access point's certificate: the encryption certificate, its CN the To PartyId. */
  certificate: X509Certificate;
  requireBusinessLevelSignature: boolean;
  minimumAuthenticationLevel?: string;
  serviceActivationDate?: Date;
  serviceExpirationDate?: Date;
  serviceDescription?: string;
  technicalContactUrl?: string;
  technicalInformationUrl?: string;
}

export interface SmpProcess {
  process: ProcessId;
  endpoints: Array<Omit<SmpEndpoint, 'certificate'> & { certificateBase64: string }>;
}

export interface SignedServiceMetadata {
  participant: ParticipantId;
  documentType: DocumentTypeId;
  processes: SmpProcess[];
  /** The certificate that signed the metadata (after a redirect: the target SMP's). */
  signer: X509Certificate;
  /** Whether the signer (and a redirecting SMP's signer) was checked for revocation. */
  signerRevocationChecked: boolean;
  /** The URL the metadata came from (after a redirect: the target's). */
  url: string;
  redirected: boolean;
}

export interface EndpointLookupResult {
  participant: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  endpoint: SmpEndpoint;
  metadata: SignedServiceMetadata;
  /** Whether the SMP signer and the endpoint certificate were checked for revocation. */
  revocationChecked: boolean;
}

export interface ServiceGroup {
  participant: ParticipantId;
  documentTypes: DocumentTypeId[];
  /** Reference hrefs that did not name a valid document type (reported, not fatal). */
  unreadableReferences: string[];
}

function fail(
  code: GatewayErrorCode,
  reason: PeppolErrorReason,
  message: string,
  details: Record<string, unknown> = {},
  retryable?: boolean,
  cause?: unknown,
): PeppolError {
  return new PeppolError(code, reason, message, {
    details,
    ...(retryable === undefined ? {} : { retryable }),
    ...(cause ? { cause } : {}),
  });
}

const invalidResponse = (message: string, details: Record<string, unknown> = {}, cause?: unknown): PeppolError =>
  fail('DEPENDENCY_UNAVAILABLE', 'smp-response-invalid', message, details, false, cause);

function el(n: Node | undefined): Element | undefined {
  return n && n.nodeType === 1 ? (n as Element) : undefined;
}

function readId(node: Node, path: string): { scheme: string; value: string } | undefined {
  const e = el(select(node, path, NS)[0]);
  if (!e) return undefined;
  return { scheme: (e.getAttribute('scheme') ?? '').trim(), value: (e.textContent ?? '').trim() };
}

function optionalText(node: Node, path: string): string | undefined {
  const t = text(node, path, NS);
  return t === undefined || t === '' ? undefined : t;
}

function optionalDate(node: Node, path: string, what: string): Date | undefined {
  const t = optionalText(node, path);
  if (t === undefined) return undefined;
  const d = new Date(/[zZ]|[+-]\d{2}:\d{2}$/.test(t) ? t : `${t}Z`);
  if (Number.isNaN(d.getTime())) throw invalidResponse(`the SMP returned an invalid ${what} "${t}"`);
  return d;
}

export class SmpClient {
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly now: () => Date;

  constructor(private readonly options: SmpClientOptions) {
    if (options.smpCertificateAuthorities.length === 0)
      throw new Error('SmpClient needs at least one SMP CA certificate');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxBytes = options.maxResponseBytes ?? 4 * 1024 * 1024;
    this.now = options.now ?? (() => new Date());
  }

  /** The document types a participant can receive, as listed by its SMP. */
  async getServiceGroup(smpUrl: string, participant: ParticipantId): Promise<ServiceGroup> {
    const url = `${smpUrl.replace(/\/+$/, '')}/${encodeIdForUrl(participant)}`;
    const res = await this.get(url);
    if (res.status === 404)
      throw fail('NOT_FOUND', 'participant-unknown', `the SMP at ${smpUrl} does not know ${formatId(participant)}`, {
        url,
      });
    const doc = this.parse(res.body, url);
    const root = doc.documentElement as Element;
    if (root.namespaceURI !== SMP_NS || root.localName !== 'ServiceGroup') {
      throw invalidResponse(
        `the SMP answered ${url} with {${root.namespaceURI ?? ''}}${root.localName ?? ''} instead of a ServiceGroup`,
        { url },
      );
    }
    const returned = readId(root, 'ids:ParticipantIdentifier');
    if (!returned || !participantIdEquals(returned, participant)) {
      throw invalidResponse(
        `the SMP answered for ${returned ? formatId(returned) : 'no participant'} instead of ${formatId(participant)}`,
        { url },
      );
    }
    const documentTypes: DocumentTypeId[] = [];
    const unreadableReferences: string[] = [];
    for (const ref of select(root, 'smp:ServiceMetadataReferenceCollection/smp:ServiceMetadataReference/@href', NS)) {
      const href = ref.nodeValue ?? '';
      const d = documentTypeFromHref(href);
      if (d) documentTypes.push(d);
      else unreadableReferences.push(href);
    }
    return { participant, documentTypes, unreadableReferences };
  }

  /** The signed service metadata of a participant for a document type, following at most one redirect. */
  async getServiceMetadata(
    smpUrl: string,
    participant: ParticipantId,
    documentType: DocumentTypeId,
  ): Promise<SignedServiceMetadata> {
    const groupUrl = `${smpUrl.replace(/\/+$/, '')}/${encodeIdForUrl(participant)}`;
    const url = `${groupUrl}/services/${encodeIdForUrl(documentType)}`;
    let first: Awaited<ReturnType<SmpClient['fetchSigned']>>;
    try {
      first = await this.fetchSigned(url, participant, documentType);
    } catch (e) {
      // A 404 says "not here" for either the participant or its document type; the service group tells which.
      if (e instanceof PeppolError && e.reason === 'document-type-not-supported') {
        const group = await this.get(groupUrl).catch(() => undefined);
        if (group?.status === 404)
          throw fail(
            'NOT_FOUND',
            'participant-unknown',
            `the SMP at ${smpUrl} does not know ${formatId(participant)}`,
            { url: groupUrl },
          );
      }
      throw e;
    }
    if (first.kind === 'metadata') return { ...first.metadata, url, redirected: false };

    const { href, certificateUid } = first;
    let target: URL;
    try {
      target = new URL(href);
    } catch {
      throw fail(
        'DEPENDENCY_UNAVAILABLE',
        'smp-redirect-invalid',
        `the SMP redirect target "${href}" is not a URL`,
        { url },
        false,
      );
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw fail(
        'DEPENDENCY_UNAVAILABLE',
        'smp-redirect-invalid',
        `the SMP redirect target "${href}" is not http(s)`,
        { url },
        false,
      );
    }
    const second = await this.fetchSigned(target.toString(), participant, documentType);
    if (second.kind === 'redirect') {
      throw fail(
        'DEPENDENCY_UNAVAILABLE',
        'smp-redirect-invalid',
        `the SMP at ${href} redirects again (to ${second.href}); only one redirect is followed`,
        { url, href },
        false,
      );
    }
    if (!subjectMatches(second.metadata.signer, certificateUid)) {
      throw fail(
        'UNPROCESSABLE',
        'smp-redirect-invalid',
        `the redirect named the SMP certificate "${certificateUid}" but ${href} was signed by ` +
          `"${second.metadata.signer.subject.split('\n').join(', ')}"`,
        { url, href },
        false,
      );
    }
    return {
      ...second.metadata,
      signerRevocationChecked: second.metadata.signerRevocationChecked && first.signerRevocationChecked,
      url: target.toString(),
      redirected: true,
    };
  }

  /**
   * The endpoint that receives `documentType` / `process` for `participant` over `transportProfile` (default Peppol
   * AS4 v2), checked as described at the top of this module.
   */
  async lookupEndpoint(
    smpUrl: string,
    participant: ParticipantId,
    documentType: DocumentTypeId,
    process: ProcessId,
    transportProfile: string = TRANSPORT_PROFILE_AS4_V2,
  ): Promise<EndpointLookupResult> {
    const metadata = await this.getServiceMetadata(smpUrl, participant, documentType);
    return await this.selectEndpoint(metadata, process, transportProfile);
  }

  /** The checked endpoint for `process` / `transportProfile` out of metadata already fetched and verified. */
  async selectEndpoint(
    metadata: SignedServiceMetadata,
    process: ProcessId,
    transportProfile: string = TRANSPORT_PROFILE_AS4_V2,
  ): Promise<EndpointLookupResult> {
    const { participant, documentType } = metadata;
    const proc = metadata.processes.find(
      (p) => p.process.scheme === process.scheme && p.process.value === process.value,
    );
    if (!proc) {
      throw fail(
        'UNPROCESSABLE',
        'process-not-supported',
        `${formatId(participant)} does not receive ${formatId(documentType)} in process ${formatId(process)}`,
        {
          available: metadata.processes.map((p) => formatId(p.process)),
        },
        false,
      );
    }
    const raw = proc.endpoints.find((e) => e.transportProfile === transportProfile);
    if (!raw) {
      throw fail(
        'UNPROCESSABLE',
        'transport-profile-not-supported',
        `${formatId(participant)} has no ${transportProfile} endpoint for ${formatId(process)}`,
        {
          available: proc.endpoints.map((e) => e.transportProfile),
        },
        false,
      );
    }
    const now = this.now();
    if (
      (raw.serviceActivationDate && now < raw.serviceActivationDate) ||
      (raw.serviceExpirationDate && now > raw.serviceExpirationDate)
    ) {
      throw fail(
        'UNPROCESSABLE',
        'endpoint-not-active',
        `the ${transportProfile} endpoint of ${formatId(participant)} is active ` +
          `from ${raw.serviceActivationDate?.toISOString() ?? '-'} ` +
          `to ${raw.serviceExpirationDate?.toISOString() ?? '-'}`,
        {},
        false,
      );
    }
    let certificate: X509Certificate;
    try {
      certificate = parseCertificate(raw.certificateBase64);
    } catch (e) {
      throw fail(
        'UNPROCESSABLE',
        'endpoint-certificate-invalid',
        `the endpoint certificate of ${formatId(participant)} cannot be read`,
        {},
        false,
        e,
      );
    }
    let endpointChecked = false;
    if (this.options.apCertificateAuthorities) {
      const check = checkCertificate(
        certificate,
        {
          anchors: this.options.apCertificateAuthorities,
          requiredKeyUsages: AP_KEY_USAGES,
          role: 'receiving access point',
        },
        now,
      );
      if (!check.valid)
        throw fail('UNPROCESSABLE', 'endpoint-certificate-invalid', check.message, { problem: check.problem }, false);
      endpointChecked = await this.checkRevocation(
        check.chain,
        'endpoint-certificate-invalid',
        `the endpoint certificate of ${formatId(participant)}`,
        {},
      );
    }
    const { certificateBase64: _unused, ...rest } = raw;
    return {
      participant,
      documentType,
      process: proc.process,
      endpoint: { ...rest, certificate },
      metadata,
      revocationChecked: endpointChecked && metadata.signerRevocationChecked,
    };
  }

  /**
   * True when checked and accepted; throws `reason` when revoked (or unknown under hard fail); false without a checker.
   */
  private async checkRevocation(
    chain: readonly X509Certificate[],
    reason: PeppolErrorReason,
    what: string,
    details: Record<string, unknown>,
  ): Promise<boolean> {
    const checker = this.options.revocation;
    if (!checker) return false;
    const verdict = await checker.checkChain(chain, this.now());
    if (verdict.accepted) return true;
    const revoked = verdict.statuses.some((s) => s.result.status === 'revoked');
    // Revoked is final; an undeterminable status (CRL server down) may clear up, so that one is retryable.
    throw fail(
      revoked ? 'UNPROCESSABLE' : 'DEPENDENCY_UNAVAILABLE',
      reason,
      `${what}: ${verdict.message ?? 'revocation status not accepted'}`,
      { ...details, problem: revoked ? 'revoked' : 'revocation-unknown' },
      !revoked,
    );
  }

  // -------------------------------------------------------------------------------------------------------------------

  private async get(url: string): Promise<{ status: number; body: Buffer }> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidResponse(`"${url}" is not a valid SMP URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw invalidResponse(`"${url}" is not an http(s) SMP URL`);
    if (this.options.httpsOnly && parsed.protocol !== 'https:')
      throw fail(
        'DEPENDENCY_UNAVAILABLE',
        'smp-not-https',
        `the SMP URL ${url} is not https; Peppol SMPs are HTTPS-only and plain http is refused in production mode`,
        { url },
        false,
      );
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await request(parsed, {
        method: 'GET',
        signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        headers: { accept: 'application/xml, text/xml' },
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          res.body.destroy();
          throw invalidResponse(`the SMP response from ${url} exceeds ${this.maxBytes} bytes`, { url });
        }
        chunks.push(chunk as Buffer);
      }
      const status = res.statusCode;
      if (status >= 500)
        throw fail(
          'DEPENDENCY_UNAVAILABLE',
          'smp-unreachable',
          `the SMP answered ${url} with HTTP ${status}`,
          { url, status },
          true,
        );
      if (status !== 200 && status !== 404) {
        throw invalidResponse(
          `the SMP answered ${url} with ` +
            `HTTP ${status}${status >= 300 && status < 400 ? ' (HTTP redirects are not followed)' : ''}`,
          { url, status },
        );
      }
      return { status, body: Buffer.concat(chunks) };
    } catch (e) {
      if (e instanceof PeppolError) throw e;
      const code = (e as { code?: string }).code ?? (e as Error).name;
      throw fail(
        'DEPENDENCY_UNAVAILABLE',
        'smp-unreachable',
        `the SMP at ${parsed.origin} cannot be reached (${code}): ${(e as Error).message}`,
        { url, cause: code },
        true,
        e,
      );
    }
  }

  private parse(body: Buffer, url: string): Document {
    try {
      return parseXml(body, { maxBytes: this.maxBytes });
    } catch (e) {
      if (isGatewayError(e))
        throw invalidResponse(`the SMP response from ${url} is not acceptable XML: ${e.message}`, { url }, e);
      throw e;
    }
  }

  /** Fetches, verifies and reads one SignedServiceMetadata resource. */
  private async fetchSigned(
    url: string,
    participant: ParticipantId,
    documentType: DocumentTypeId,
  ): Promise<
    | { kind: 'metadata'; metadata: Omit<SignedServiceMetadata, 'url' | 'redirected'> }
    | {
        kind: 'redirect';
        href: string;
        certificateUid: string;
        signer: X509Certificate;
        signerRevocationChecked: boolean;
      }
  > {
    const res = await this.get(url);
    if (res.status === 404) {
      throw fail(
        'UNPROCESSABLE',
        'document-type-not-supported',
        `${formatId(participant)} does not receive ${formatId(documentType)} (HTTP 404 from ${url})`,
        { url },
        false,
      );
    }
    const doc = this.parse(res.body, url);
    const { signed, signer, chain } = this.verify(doc, res.body, url);
    const signerRevocationChecked = await this.checkRevocation(
      chain,
      'smp-certificate-untrusted',
      `the SMP certificate (signature of ${url})`,
      { url },
    );
    const root = signed.documentElement as Element;

    const redirect = el(select(root, 'smp:ServiceMetadata/smp:Redirect', NS)[0]);
    if (redirect) {
      const href = (redirect.getAttribute('href') ?? '').trim();
      const certificateUid = text(redirect, 'smp:CertificateUID', NS) ?? '';
      if (!href || !certificateUid)
        throw fail(
          'DEPENDENCY_UNAVAILABLE',
          'smp-redirect-invalid',
          `the SMP redirect at ${url} lacks href or CertificateUID`,
          { url },
          false,
        );
      return { kind: 'redirect', href, certificateUid, signer, signerRevocationChecked };
    }

    const info = select(root, 'smp:ServiceMetadata/smp:ServiceInformation', NS)[0];
    if (!info)
      throw invalidResponse(`the SMP response from ${url} has neither ServiceInformation nor Redirect`, { url });
    const p = readId(info, 'ids:ParticipantIdentifier');
    const d = readId(info, 'ids:DocumentIdentifier');
    // The signed answer must be about what was asked (participant values compare case-insensitively, document types
    // not).
    if (!p || participantIdProblem(p.scheme, p.value) || !participantIdEquals(p, participant)) {
      throw invalidResponse(
        `the SMP at ${url} answered for participant ${p ? formatId(p) : '(none)'} instead of ${formatId(participant)}`,
        { url },
      );
    }
    if (!d || documentTypeIdProblem(d.scheme, d.value) || !documentTypeIdEquals(d, documentType)) {
      throw invalidResponse(
        `the SMP at ${url} answered for document type ${d ? formatId(d) : '(none)'} instead ` +
          `of ${formatId(documentType)}`,
        { url },
      );
    }
    const processes: SmpProcess[] = select(info, 'smp:ProcessList/smp:Process', NS).map((procNode) => {
      const pid = readId(procNode, 'ids:ProcessIdentifier');
      if (!pid || processIdProblem(pid.scheme, pid.value))
        throw invalidResponse(`the SMP at ${url} lists a process without a valid identifier`, { url });
      const endpoints = select(procNode, 'smp:ServiceEndpointList/smp:Endpoint', NS).map((epNode) => {
        const ep = epNode as Element;
        const address = text(ep, 'wsa:EndpointReference/wsa:Address', NS) ?? '';
        let ok = false;
        try {
          ok = ['http:', 'https:'].includes(new URL(address).protocol);
        } catch {
          ok = false;
        }
        if (!ok)
          throw invalidResponse(`the SMP at ${url} lists an endpoint address "${address}" that is not an http(s) URL`, {
            url,
          });
        const certificateBase64 = (text(ep, 'smp:Certificate', NS) ?? '').replace(/\s+/g, '');
        const minimumAuthenticationLevel = optionalText(ep, 'smp:MinimumAuthenticationLevel');
        const serviceActivationDate = optionalDate(ep, 'smp:ServiceActivationDate', 'ServiceActivationDate');
        const serviceExpirationDate = optionalDate(ep, 'smp:ServiceExpirationDate', 'ServiceExpirationDate');
        const serviceDescription = optionalText(ep, 'smp:ServiceDescription');
        const technicalContactUrl = optionalText(ep, 'smp:TechnicalContactUrl');
        const technicalInformationUrl = optionalText(ep, 'smp:TechnicalInformationUrl');
        return {
          transportProfile: (ep.getAttribute('transportProfile') ?? '').trim(),
          url: address,
          certificateBase64,
          requireBusinessLevelSignature: text(ep, 'smp:RequireBusinessLevelSignature', NS) === 'true',
          ...(minimumAuthenticationLevel !== undefined ? { minimumAuthenticationLevel } : {}),
          ...(serviceActivationDate ? { serviceActivationDate } : {}),
          ...(serviceExpirationDate ? { serviceExpirationDate } : {}),
          ...(serviceDescription !== undefined ? { serviceDescription } : {}),
          ...(technicalContactUrl !== undefined ? { technicalContactUrl } : {}),
          ...(technicalInformationUrl !== undefined ? { technicalInformationUrl } : {}),
        };
      });
      return { process: Object.freeze({ scheme: pid.scheme, value: pid.value }), endpoints };
    });
    return { kind: 'metadata', metadata: { participant, documentType, processes, signer, signerRevocationChecked } };
  }

  /**
   * Checks the enveloped signature and its certificate; returns the signed content re-parsed (what the signature
   * covers, without the signature) and the signing certificate.
   */
  private verify(
    doc: Document,
    body: Buffer,
    url: string,
  ): { signed: Document; signer: X509Certificate; chain: X509Certificate[] } {
    const root = doc.documentElement as Element;
    if (root.namespaceURI !== SMP_NS || root.localName !== 'SignedServiceMetadata') {
      throw invalidResponse(
        `the SMP answered ${url} with {${root.namespaceURI ?? ''}}${root.localName ?? ''} instead of ` +
          `SignedServiceMetadata`,
        { url },
      );
    }
    const signatures = select(root, 'ds:Signature', NS);
    if (signatures.length !== 1) {
      throw fail(
        'UNPROCESSABLE',
        'smp-signature-invalid',
        `the SMP response from ${url} has ${signatures.length} signatures, expected exactly one`,
        { url },
        false,
      );
    }
    const sigNode = signatures[0] as Element;
    const certTexts = select(sigNode, 'ds:KeyInfo/ds:X509Data/ds:X509Certificate', NS).map((n) =>
      (n.textContent ?? '').replace(/\s+/g, ''),
    );
    let certs: X509Certificate[];
    try {
      certs = certTexts.map((t) => parseCertificate(t));
    } catch (e) {
      throw fail(
        'UNPROCESSABLE',
        'smp-signature-invalid',
        `the SMP signature at ${url} carries an unreadable certificate`,
        { url },
        false,
        e,
      );
    }
    const signer = certs.find((c) => !c.ca) ?? certs[0];
    if (!signer)
      throw fail(
        'UNPROCESSABLE',
        'smp-signature-invalid',
        `the SMP signature at ${url} carries no X509Certificate`,
        { url },
        false,
      );

    const check = checkCertificate(
      signer,
      { anchors: this.options.smpCertificateAuthorities, requiredKeyUsages: SMP_KEY_USAGES, role: 'SMP' },
      this.now(),
      certs.filter((c) => c !== signer),
    );
    if (!check.valid)
      throw fail(
        'UNPROCESSABLE',
        'smp-certificate-untrusted',
        `${check.message} (signature of ${url})`,
        { url, problem: check.problem },
        false,
      );

    const sig = useCorrectC14n(new SignedXml({ publicCert: signer.toString() }));
    let valid = false;
    let why = '';
    try {
      sig.loadSignature(sigNode as unknown as Parameters<SignedXml['loadSignature']>[0]);
      const refs = sig.getReferences();
      // Only a signature over the whole document counts: one reference, URI "" (enveloped).
      if (refs.length !== 1 || (refs[0]?.uri ?? '') !== '')
        why = 'the signature must have exactly one reference, to the whole document (URI "")';
      else valid = sig.checkSignature(decodeXml(body, Number.MAX_SAFE_INTEGER).text);
    } catch (e) {
      why = (e as Error).message;
    }
    const signedXml = valid ? sig.getSignedReferences()[0] : undefined;
    if (!valid || signedXml === undefined) {
      throw fail(
        'UNPROCESSABLE',
        'smp-signature-invalid',
        `the SMP signature of ${url} does not verify${why ? `: ${why}` : ''}`,
        { url },
        false,
      );
    }
    return { signed: parseXml(signedXml, { maxBytes: this.maxBytes }), signer, chain: check.chain };
  }
}

/** The document type a ServiceMetadataReference href points at: the percent-decoded path segment after `/services/`. */
export function documentTypeFromHref(href: string): DocumentTypeId | undefined {
  let path: string;
  try {
    path = new URL(href).pathname;
  } catch {
    return undefined;
  }
  const i = path.lastIndexOf('/services/');
  if (i < 0) return undefined;
  let segment = path.slice(i + '/services/'.length);
  try {
    segment = decodeURIComponent(segment);
    // Some SMPs encode twice; a still-encoded "::" shows it.
    if (!segment.includes('::') && /%3A%3A/i.test(segment)) segment = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  const sep = segment.indexOf('::');
  if (sep <= 0) return undefined;
  const scheme = segment.slice(0, sep);
  const value = segment.slice(sep + 2);
  return documentTypeIdProblem(scheme, value) ? undefined : Object.freeze({ scheme, value });
}
