/**
 * Sending one built AS4 user message over HTTP and classifying what came back:
 *
 *   delivered  a signed non-repudiation receipt that answers our MessageId, signed by a valid (and, with a
 *              RevocationChecker, not revoked) AP certificate of the Seat ID we sent to, returning exactly the
 *              references we signed;
 *   retryable  no answer (connection refused or reset, timeout), HTTP 5xx without an ebMS error, HTTP 429 or 408
 *              without an ebMS signal (throttled, or timed out, before the AS4 handler: a proxy or rate limiter in
 *              front of it), or a SOAP 1.2 Fault whose code is env:Receiver on a 5xx (the peer's own trouble);
 *   failed     an ebMS error signal, any other SOAP Fault, HTTP 4xx/3xx, or an answer that is not a valid receipt —
 *              with the peer's reason; a receipt signed by a revoked certificate.
 *
 * A receipt whose signer's revocation status cannot be determined (hard fail) is retryable: the resend is the same
 * message, which the peer answers as a duplicate with its receipt, checked again then.
 *
 * A duplicate refusal (phase4's EBMS:4001, or its EBMS:0004 "already handled") is its own outcome: after an attempt
 * with an unknown outcome it means the peer already has the message, and the caller decides (AS4 §3.2 leaves duplicate
 * handling to the receiver). Retries must resend the same message (same ids and timestamp, see message-ids.ts), never a
 * new one.
 */
import type { X509Certificate } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { firstChildElement as child } from '../../formats/xml/helpers';
import { parseXml } from '../../formats/xml/secure-parser';
import { commonNameOf } from '../pki/certificates';
import type { RevocationChecker } from '../pki/revocation';
import { NS } from './constants';
import { EbmsError } from './ebms-error';
import type { OutgoingPeppolMessage } from './message';
import { parseContentType, parseMultipart, splitSoapAndAttachments } from './mime';
import { readSignal, type EbmsErrorEntry } from './signals';
import type { SignatureReference } from './signature';

export type As4SendOutcome =
  | {
      outcome: 'delivered';
      httpStatus: number;
      receiptMessageId: string;
      references: SignatureReference[];
      receiverCertificate: X509Certificate;
      revocationChecked: boolean;
    }
  | { outcome: 'duplicate'; httpStatus: number; reason: string; errors: EbmsErrorEntry[] }
  | { outcome: 'retryable'; httpStatus?: number; reason: string }
  | { outcome: 'failed'; httpStatus?: number; reason: string; errors?: EbmsErrorEntry[] };

export interface SendAs4Options {
  /** The AP CA certificate(s) the receipt's signer must chain to. */
  apCertificateAuthorities: readonly X509Certificate[];
  /** The receiving AP's certificate from the SMP: the receipt must be signed by the same Seat ID. */
  receiverCertificate: X509Certificate;
  /** Whole exchange, until the signal is read. Default 120 s (the Peppol AS4 response SLA phase4 uses). */
  timeoutMs?: number;
  /** Default 5 s. */
  connectTimeoutMs?: number;
  /** Largest signal accepted. Default 1 MiB (a receipt is a few KB). */
  maxResponseBytes?: number;
  dispatcher?: Dispatcher;
  /** Checks the receipt signer for revocation; without it revocation is not checked (`revocationChecked: false`). */
  revocation?: RevocationChecker;
  now?: Date;
}

/** phase4's non-standard DuplicateDetected code. */
export const EBMS_DUPLICATE = 'EBMS:4001';

/**
 * A refusal because the peer already has this MessageId: EBMS:4001, or (phase4 4.4) EBMS:0004 whose description says
 * the message "was already handled (this is a duplicate)".
 */
export function isDuplicateError(e: EbmsErrorEntry): boolean {
  return (
    e.errorCode === EBMS_DUPLICATE ||
    (e.errorCode === 'EBMS:0004' &&
      /already handled \(this is a duplicate\)/i.test(`${e.description ?? ''} ${e.errorDetail ?? ''}`))
  );
}

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';

interface SoapFault {
  code: string;
  reason: string;
}

/** A SOAP 1.2 (or 1.1) Fault in the Body, if the response is one. */
function soapFaultOf(xml: Buffer): SoapFault | undefined {
  let doc;
  try {
    doc = parseXml(xml);
  } catch {
    return undefined;
  }
  const env = doc.documentElement;
  if (!env || env.localName !== 'Envelope' || (env.namespaceURI !== NS.soap12 && env.namespaceURI !== SOAP11))
    return undefined;
  const ns = env.namespaceURI;
  const fault = child(child(env, ns, 'Body'), ns, 'Fault');
  if (!fault) return undefined;
  if (ns === NS.soap12) {
    const code = (child(child(fault, ns, 'Code'), ns, 'Value')?.textContent ?? '').trim();
    const sub = (child(child(child(fault, ns, 'Code'), ns, 'Subcode'), ns, 'Value')?.textContent ?? '').trim();
    const reason = (child(child(fault, ns, 'Reason'), ns, 'Text')?.textContent ?? '').trim();
    return { code: sub ? `${code} / ${sub}` : code, reason };
  }
  const code = (
    child(fault, '', 'faultcode')?.textContent ??
    fault.getElementsByTagName('faultcode')[0]?.textContent ??
    ''
  ).trim();
  const reason = (fault.getElementsByTagName('faultstring')[0]?.textContent ?? '').trim();
  return { code, reason };
}

/** The SOAP envelope of a response: the body itself, or the root part of a multipart answer. */
function soapOf(contentType: string, body: Buffer): Buffer {
  if (!parseContentType(contentType).type.startsWith('multipart/')) return body;
  return splitSoapAndAttachments(parseMultipart(body, contentType)).soap.body;
}

const snippet = (b: Buffer): string => b.subarray(0, 300).toString('utf8').replace(/\s+/g, ' ').trim();

async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > max) return undefined;
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function describeErrors(errors: readonly EbmsErrorEntry[]): string {
  return errors
    .map(
      (e) =>
        `${e.errorCode} ${e.shortDescription}${e.description ? `: ${e.description}` : ''}` +
        `${e.errorDetail ? ` (${e.errorDetail})` : ''}`,
    )
    .join('; ');
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/** POSTs the message to `url` and classifies the synchronous answer. Never throws for anything the peer does. */
export async function sendAs4Message(
  message: OutgoingPeppolMessage,
  url: string,
  options: SendAs4Options,
): Promise<As4SendOutcome> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const maxResponse = options.maxResponseBytes ?? 1024 * 1024;
  let status: number;
  let contentType: string;
  let body: Buffer | undefined;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': message.contentType, 'mime-version': '1.0' },
      body: message.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    status = res.statusCode;
    const ct = res.headers['content-type'];
    contentType = (Array.isArray(ct) ? ct[0] : ct) ?? '';
    body = await readCapped(res.body as AsyncIterable<Buffer>, maxResponse);
    if (!body) res.body.destroy();
  } catch (e) {
    const err = e as { code?: string; name?: string; message?: string; cause?: { code?: string } };
    const code = err.code ?? err.cause?.code ?? err.name ?? 'error';
    const timedOut = signal.aborted || /Timeout/i.test(code);
    return {
      outcome: 'retryable',
      reason: timedOut
        ? `no answer within ${timeoutMs} ms`
        : `${NETWORK_CODES.has(code) ? 'connection failed' : 'request failed'} (${code}): ${err.message ?? ''}`.trim(),
    };
  }

  if (!body) {
    return status >= 500
      ? { outcome: 'retryable', httpStatus: status, reason: `HTTP ${status} with an answer over ${maxResponse} bytes` }
      : { outcome: 'failed', httpStatus: status, reason: `the answer exceeds ${maxResponse} bytes` };
  }

  let soap: Buffer | undefined;
  try {
    soap = soapOf(contentType, body);
  } catch {
    soap = undefined;
  }

  const fault = soap ? soapFaultOf(soap) : undefined;
  if (fault) {
    const receiverSide = /(^|:)Receiver$/.test(fault.code.split(' / ')[0] ?? '') || /(^|:)Server$/.test(fault.code);
    const reason = `SOAP Fault ${fault.code}: ${fault.reason}`;
    return status >= 500 && receiverSide
      ? { outcome: 'retryable', httpStatus: status, reason }
      : { outcome: 'failed', httpStatus: status, reason };
  }

  if (soap && /xml/.test(parseContentType(contentType).type + (parseContentType(contentType).params.type ?? ''))) {
    try {
      const read = readSignal(soap, {
        sentMessageId: message.messageId,
        sentReferences: message.references,
        apCertificateAuthorities: options.apCertificateAuthorities,
        ...(options.now ? { now: options.now } : {}),
      });
      if (read.kind === 'error') {
        const reason = describeErrors(read.errors);
        if (read.errors.some(isDuplicateError))
          return { outcome: 'duplicate', httpStatus: status, reason, errors: read.errors };
        // Our own receiver answers 503 with EBMS:0202 when it could not store the message: worth another attempt.
        if (status >= 500) return { outcome: 'retryable', httpStatus: status, reason };
        return { outcome: 'failed', httpStatus: status, reason, errors: read.errors };
      }
      const expectedSeat = commonNameOf(options.receiverCertificate);
      const signerSeat = commonNameOf(read.signerCertificate);
      if (signerSeat !== expectedSeat) {
        return {
          outcome: 'failed',
          httpStatus: status,
          reason:
            `the receipt is signed by ${signerSeat ?? 'a certificate without CN'}, not by the receiving ` +
            `access point ${expectedSeat ?? '?'}`,
        };
      }
      if (status < 200 || status >= 300)
        return {
          outcome: status >= 500 ? 'retryable' : 'failed',
          httpStatus: status,
          reason: `a receipt with HTTP ${status}`,
        };
      if (options.revocation) {
        const verdict = await options.revocation.checkChain(read.signerChain, options.now ?? new Date());
        if (!verdict.accepted) {
          const revoked = verdict.statuses.some((s) => s.result.status === 'revoked');
          return {
            outcome: revoked ? 'failed' : 'retryable',
            httpStatus: status,
            reason: `the receipt signer is not accepted: ${verdict.message ?? 'revocation status unknown'}`,
          };
        }
      }
      return {
        outcome: 'delivered',
        httpStatus: status,
        receiptMessageId: read.messageId,
        references: read.references,
        receiverCertificate: read.signerCertificate,
        revocationChecked: !!options.revocation,
      };
    } catch (e) {
      if (status >= 500)
        return { outcome: 'retryable', httpStatus: status, reason: `HTTP ${status}: ${snippet(body)}` };
      const reason =
        e instanceof EbmsError
          ? `${e.ebmsCode} ${e.shortDescription}: ${e.message}`
          : `unreadable answer: ${(e as Error).message}`;
      return { outcome: 'failed', httpStatus: status, reason };
    }
  }

  if (status >= 500 || status === 429 || status === 408)
    return {
      outcome: 'retryable',
      httpStatus: status,
      reason: `HTTP ${status}${status === 429 ? ' (throttled)' : ''}: ${snippet(body)}`,
    };
  if (status >= 200 && status < 300)
    return {
      outcome: 'failed',
      httpStatus: status,
      reason: `HTTP ${status} without a receipt (${contentType || 'no content type'}): ${snippet(body)}`,
    };
  return { outcome: 'failed', httpStatus: status, reason: `HTTP ${status}: ${snippet(body)}` };
}
