/**
 * ebMS signal messages: the signed non-repudiation receipt a receiver returns for a user message (AS4 §5.1.8: one
 * ebbp:MessagePartNRInformation per signed part, each a copy of the ds:Reference it received), ebMS errors, and
 * reading either kind from a response. Signals go back non-MIME as application/soap+xml.
 */
import { randomUUID, type X509Certificate } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import { parseXml } from '../../formats/xml/secure-parser';
import { childElementsNamed as kids, escapeXml as esc } from '../../formats/xml/helpers';
import { AP_KEY_USAGES, checkCertificate } from '../pki/cert-validation';
import type { KeyMaterial } from '../pki/key-material';
import { ALG, NS } from './constants';
import { EBMS_ERRORS, EbmsError, type EbmsErrorCode } from './ebms-error';
import { envelopeParts, signEnvelope, verifyEnvelopeSignature, type SignatureReference } from './signature';

const textOf = (e: Element | undefined): string => (e?.textContent ?? '').trim();

function referenceXml(r: SignatureReference): string {
  const transforms = r.transforms
    .map((t) =>
      t === ALG.excC14n && r.inclusivePrefixes.length
        ? `<ds:Transform Algorithm="${esc(t)}">` +
          `<ec:InclusiveNamespaces xmlns:ec="${NS.ec}" PrefixList="${esc(r.inclusivePrefixes.join(' '))}"/>` +
          `</ds:Transform>`
        : `<ds:Transform Algorithm="${esc(t)}"/>`,
    )
    .join('');
  return (
    `<ds:Reference xmlns:ds="${NS.ds}" URI="${esc(r.uri)}"><ds:Transforms>${transforms}</ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${esc(r.digestMethod)}"/><ds:DigestValue>${esc(r.digestValue)}</ds:DigestValue>` +
    `</ds:Reference>`
  );
}

function signalEnvelope(inner: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><S12:Envelope xmlns:S12="${NS.soap12}"><S12:Header>` +
    `<eb:Messaging xmlns:eb="${NS.eb}" xmlns:wsu="${NS.wsu}" S12:mustUnderstand="true" ` +
    `wsu:Id="msg-${randomUUID()}">${inner}</eb:Messaging>` +
    `</S12:Header><S12:Body xmlns:wsu="${NS.wsu}" wsu:Id="id-${randomUUID()}"/></S12:Envelope>`
  );
}

function messageInfo(refToMessageId: string, now: Date, messageId?: string): string {
  return (
    `<eb:MessageInfo><eb:Timestamp>${now.toISOString()}</eb:Timestamp>` +
    `<eb:MessageId>${esc(messageId ?? `${randomUUID()}@invoice-gateway`)}</eb:MessageId>` +
    `<eb:RefToMessageId>${esc(refToMessageId)}</eb:RefToMessageId></eb:MessageInfo>`
  );
}

/** The signed receipt for a user message whose signature carried `references` (returned as received). */
export function buildReceipt(
  refToMessageId: string,
  references: readonly SignatureReference[],
  signer: KeyMaterial,
  now: Date = new Date(),
): string {
  const nrr = references
    .map((r) => `<ebbp:MessagePartNRInformation>${referenceXml(r)}</ebbp:MessagePartNRInformation>`)
    .join('');
  const inner =
    `<eb:SignalMessage>${messageInfo(refToMessageId, now)}<eb:Receipt>` +
    `<ebbp:NonRepudiationInformation xmlns:ebbp="${NS.ebbp}">${nrr}</ebbp:NonRepudiationInformation></eb:Receipt>` +
    `</eb:SignalMessage>`;
  return signEnvelope(signalEnvelope(inner), signer, []).xml;
}

export interface EbmsErrorEntry {
  errorCode: string;
  severity: string;
  shortDescription: string;
  category?: string;
  description?: string;
  errorDetail?: string;
  refToMessageInError?: string;
}

/**
 * A signed ebMS error signal answering `refToMessageId` (signed when a key is given, as phase4 does for known P-Modes).
 */
export function buildErrorSignal(
  refToMessageId: string | undefined,
  error: EbmsError,
  signer?: KeyMaterial,
  now: Date = new Date(),
): string {
  const def = EBMS_ERRORS[error.ebmsCode];
  const inner =
    `<eb:SignalMessage>${messageInfo(refToMessageId ?? '', now)}` +
    `<eb:Error category="${def.category}" errorCode="${error.ebmsCode}" severity="${def.severity}" ` +
    `shortDescription="${def.shortDescription}"` +
    `${refToMessageId ? ` refToMessageInError="${esc(refToMessageId)}"` : ''}>` +
    `<eb:Description xml:lang="en">${esc(error.message)}</eb:Description>` +
    `${error.errorDetail ? `<eb:ErrorDetail>${esc(error.errorDetail)}</eb:ErrorDetail>` : ''}</eb:Error>` +
    `</eb:SignalMessage>`;
  const xml = signalEnvelope(inner);
  return signer ? signEnvelope(xml, signer, []).xml : xml;
}

export type SignalResult =
  | {
      kind: 'receipt';
      messageId: string;
      refToMessageId: string;
      references: SignatureReference[];
      signerCertificate: X509Certificate;
      signerChain: X509Certificate[];
    }
  | { kind: 'error'; refToMessageId: string | undefined; errors: EbmsErrorEntry[]; signed: boolean };

function readNrrReference(ref: Element): SignatureReference {
  const transforms: string[] = [];
  let inclusivePrefixes: string[] = [];
  for (const t of kids(kids(ref, NS.ds, 'Transforms')[0] ?? ref, NS.ds, 'Transform')) {
    transforms.push(t.getAttribute('Algorithm') ?? '');
    const inc = kids(t, NS.ec, 'InclusiveNamespaces')[0];
    if (inc) inclusivePrefixes = (inc.getAttribute('PrefixList') ?? '').split(/\s+/).filter(Boolean);
  }
  return {
    uri: ref.getAttribute('URI') ?? '',
    transforms,
    inclusivePrefixes,
    digestMethod: kids(ref, NS.ds, 'DigestMethod')[0]?.getAttribute('Algorithm') ?? '',
    digestValue: textOf(kids(ref, NS.ds, 'DigestValue')[0]).replace(/\s+/g, ''),
  };
}

export interface ReadSignalOptions {
  /** The user message the signal answers. */
  sentMessageId: string;
  /** What we signed; a receipt must return exactly these (compared by URI, transforms, digest method and value). */
  sentReferences: readonly SignatureReference[];
  apCertificateAuthorities: readonly X509Certificate[];
  now?: Date;
}

/**
 * Reads the synchronous answer to a user message. A receipt must be signed by a valid AP certificate, answer our
 * message id and return our references (EBMS:0302 InvalidReceipt otherwise). An error signal is returned as data
 * (its signature, if any, is not required: the outcome is a failure either way).
 */
export function readSignal(xml: Buffer | string, options: ReadSignalOptions): SignalResult {
  let doc;
  try {
    doc = parseXml(xml);
  } catch (e) {
    throw new EbmsError('EBMS:0302', `the response is not acceptable XML: ${(e as Error).message}`, { cause: e });
  }
  const { messaging, header } = envelopeParts(doc);
  const signals = kids(messaging, NS.eb, 'SignalMessage');
  if (signals.length === 0) throw new EbmsError('EBMS:0302', 'the response holds no eb:SignalMessage');
  const signal = signals[0] as Element;
  const info = kids(signal, NS.eb, 'MessageInfo')[0];
  const refTo = textOf(info ? kids(info, NS.eb, 'RefToMessageId')[0] : undefined) || undefined;

  const errors = signals.flatMap((s) => kids(s, NS.eb, 'Error'));
  if (errors.length > 0) {
    return {
      kind: 'error',
      refToMessageId: refTo,
      signed: kids(header, NS.wsse, 'Security').length > 0,
      errors: errors.map((e) => {
        const category = e.getAttribute('category') ?? undefined;
        const description = textOf(kids(e, NS.eb, 'Description')[0]) || undefined;
        const errorDetail = textOf(kids(e, NS.eb, 'ErrorDetail')[0]) || undefined;
        const refToMessageInError = e.getAttribute('refToMessageInError') || undefined;
        return {
          errorCode: e.getAttribute('errorCode') ?? '',
          severity: e.getAttribute('severity') ?? '',
          shortDescription: e.getAttribute('shortDescription') ?? '',
          ...(category ? { category } : {}),
          ...(description ? { description } : {}),
          ...(errorDetail ? { errorDetail } : {}),
          ...(refToMessageInError ? { refToMessageInError } : {}),
        };
      }),
    };
  }

  const receipt = kids(signal, NS.eb, 'Receipt')[0];
  if (!receipt) throw new EbmsError('EBMS:0302', 'the signal is neither a receipt nor an error');
  if (refTo !== options.sentMessageId)
    throw new EbmsError('EBMS:0302', `the receipt answers ${refTo ?? 'no message'}, not ${options.sentMessageId}`);
  let verified;
  try {
    verified = verifyEnvelopeSignature(doc, []);
  } catch (e) {
    throw new EbmsError('EBMS:0302', `the receipt signature is not valid: ${(e as Error).message}`, { cause: e });
  }
  const cert = checkCertificate(
    verified.certificate,
    { anchors: options.apCertificateAuthorities, requiredKeyUsages: AP_KEY_USAGES, role: 'receiving access point' },
    options.now ?? new Date(),
  );
  if (!cert.valid) throw new EbmsError('EBMS:0302', `the receipt signer is not accepted: ${cert.message}`);

  const nri = kids(receipt, NS.ebbp, 'NonRepudiationInformation')[0];
  if (!nri)
    throw new EbmsError(
      'EBMS:0302',
      'the receipt has no NonRepudiationInformation (a signed message needs a non-repudiation receipt)',
    );
  const returned = kids(nri, NS.ebbp, 'MessagePartNRInformation').map((p) => {
    const ref = kids(p, NS.ds, 'Reference')[0];
    if (!ref) throw new EbmsError('EBMS:0302', 'a MessagePartNRInformation holds no ds:Reference');
    return readNrrReference(ref);
  });
  // Compared "semantically" as phase4 does: some receivers drop InclusiveNamespaces, so those are not compared.
  const key = (r: SignatureReference): string =>
    [r.uri, r.transforms.join(' '), r.digestMethod, r.digestValue].join('|');
  const sent = new Set(options.sentReferences.map(key));
  const got = new Set(returned.map(key));
  const missing = options.sentReferences.filter((r) => !got.has(key(r))).map((r) => r.uri);
  const extra = returned.filter((r) => !sent.has(key(r))).map((r) => r.uri);
  if (missing.length || extra.length) {
    throw new EbmsError(
      'EBMS:0302',
      `the receipt does not return what was signed (missing: ${missing.join(', ') || '-'}; ` +
        `unexpected: ${extra.join(', ') || '-'})`,
    );
  }
  return {
    kind: 'receipt',
    messageId: textOf(info ? kids(info, NS.eb, 'MessageId')[0] : undefined),
    refToMessageId: refTo,
    references: returned,
    signerCertificate: verified.certificate,
    signerChain: cert.chain,
  };
}

/** For callers that map an error signal to their own outcome: is this ebMS code known, and what is its meaning? */
export function describeEbmsCode(code: string): (typeof EBMS_ERRORS)[EbmsErrorCode] | undefined {
  return (EBMS_ERRORS as Record<string, (typeof EBMS_ERRORS)[EbmsErrorCode]>)[code];
}
