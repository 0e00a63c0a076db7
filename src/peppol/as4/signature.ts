/**
 * WS-Security signatures of AS4 messages as the Peppol AS4 profile wants them (CEF eDelivery AS4 1.14):
 * a detached XMLDSig in wsse:Security over the eb:Messaging header, the SOAP Body and every attachment; RSA-SHA256,
 * SHA-256 digests, exclusive C14N; the key referenced through a BinarySecurityToken (direct reference, X509v3).
 *
 * xml-crypto cannot dereference `cid:` attachments, so SignedInfo is assembled and checked here; xml-crypto supplies
 * the exclusive canonicalization. Signing works on text: the Security header is inserted into the envelope text and
 * nothing signed is ever re-serialised. Verification resolves `#id` references to exactly one element and requires
 * those to be THE eb:Messaging header and THE Body the message is read from (no signature wrapping).
 */
import { createHash, createSign, createVerify, randomUUID, timingSafeEqual, X509Certificate } from 'node:crypto';
import type { Document, Element, Node } from '@xmldom/xmldom';
import { parseXml } from '../../formats/xml/secure-parser';
import { childElementsNamed as childElements, escapeXml as esc, isElement } from '../../formats/xml/helpers';
import type { KeyMaterial } from '../pki/key-material';
import { excC14n } from '../c14n';
import { ALG, NS, WSS } from './constants';
import { EbmsError } from './ebms-error';
import { parseContentType } from './mime';

export interface SignatureReference {
  uri: string;
  transforms: string[];
  /** PrefixList of the exclusive C14N transform, if any. */
  inclusivePrefixes: string[];
  digestMethod: string;
  digestValue: string;
}

export interface AttachmentForSignature {
  contentId: string;
  /** The attachment's own type (for an encrypted part: the type of the decrypted content). */
  mimeType: string;
  /** The signed content: after compression, before encryption. */
  data: Buffer;
}

function wsuId(e: Element): string | null {
  return e.getAttributeNS(NS.wsu, 'Id') || e.getAttribute('Id') || null;
}

/**
 * The bytes the Attachment-Content-Signature-Transform digests (SwA profile 1.1 §5.3.2, as WSS4J implements it):
 * XML types canonicalized with exclusive C14N, other text with CRLF line ends, anything else (gzip) as it is.
 */
export function attachmentDigestInput(mimeType: string, data: Buffer): Buffer {
  const type = parseContentType(mimeType).type;
  if (type === 'text/xml' || type === 'application/xml' || type.endsWith('+xml')) {
    const doc = parseXml(data);
    return Buffer.from(excC14n(doc.documentElement as Element), 'utf8');
  }
  if (type.startsWith('text/')) return Buffer.from(data.toString('utf8').replace(/\r?\n/g, '\r\n'), 'utf8');
  return data;
}

const sha256b64 = (data: Buffer | string): string => createHash('sha256').update(data).digest('base64');

function referenceXml(r: SignatureReference): string {
  const transforms = r.transforms
    .map((t) =>
      t === ALG.excC14n && r.inclusivePrefixes.length
        ? `<ds:Transform Algorithm="${t}">` +
          `<ec:InclusiveNamespaces xmlns:ec="${NS.ec}" PrefixList="${esc(r.inclusivePrefixes.join(' '))}"/>` +
          `</ds:Transform>`
        : `<ds:Transform Algorithm="${t}"/>`,
    )
    .join('');
  return (
    `<ds:Reference URI="${esc(r.uri)}"><ds:Transforms>${transforms}</ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${r.digestMethod}"/><ds:DigestValue>${r.digestValue}</ds:DigestValue></ds:Reference>`
  );
}

export interface EnvelopeParts {
  envelope: Element;
  header: Element;
  body: Element;
  messaging: Element;
}

/** The SOAP 1.2 envelope parts every AS4 message has; EBMS:0009 when the structure is wrong. */
export function envelopeParts(doc: Document): EnvelopeParts {
  const envelope = doc.documentElement;
  if (!envelope || envelope.namespaceURI !== NS.soap12 || envelope.localName !== 'Envelope') {
    throw new EbmsError('EBMS:0009', `the root element is not a SOAP 1.2 Envelope`);
  }
  const headers = childElements(envelope, NS.soap12, 'Header');
  const bodies = childElements(envelope, NS.soap12, 'Body');
  if (headers.length !== 1 || bodies.length !== 1)
    throw new EbmsError('EBMS:0009', 'the SOAP envelope must have exactly one Header and one Body');
  const header = headers[0] as Element;
  const messaging = childElements(header, NS.eb, 'Messaging');
  if (messaging.length !== 1)
    throw new EbmsError('EBMS:0009', `the SOAP header has ${messaging.length} eb:Messaging elements, expected one`);
  return { envelope, header, body: bodies[0] as Element, messaging: messaging[0] as Element };
}

// ---------------------------------------------------------------------------------------------------------------------
// Signing

export interface SignOptions {
  /** Inserted into wsse:Security before the signer's token (the encryption elements, when encrypting). */
  securityPrefixXml?: string;
  /** PrefixList for the Messaging reference and SignedInfo (phase4 uses the SOAP prefix). Default ["S12"]. */
  inclusivePrefixes?: string[];
}

export interface SignedEnvelope {
  xml: string;
  references: SignatureReference[];
}

/**
 * Signs an envelope built by this module family (prefix S12 for SOAP 1.2, wsu:Id on eb:Messaging and Body) and returns
 * the envelope text with the wsse:Security header as the first header block.
 */
export function signEnvelope(
  envelopeXml: string,
  signer: KeyMaterial,
  attachments: readonly AttachmentForSignature[],
  options: SignOptions = {},
): SignedEnvelope {
  const prefixes = options.inclusivePrefixes ?? ['S12'];
  const doc = parseXml(envelopeXml);
  const { messaging, body } = envelopeParts(doc);
  const messagingId = wsuId(messaging);
  const bodyId = wsuId(body);
  if (!messagingId || !bodyId) throw new Error('eb:Messaging and the SOAP Body need a wsu:Id to be signed');

  const references: SignatureReference[] = [
    {
      uri: `#${messagingId}`,
      transforms: [ALG.excC14n],
      inclusivePrefixes: prefixes,
      digestMethod: ALG.sha256,
      digestValue: sha256b64(excC14n(messaging, prefixes)),
    },
    {
      uri: `#${bodyId}`,
      transforms: [ALG.excC14n],
      inclusivePrefixes: [],
      digestMethod: ALG.sha256,
      digestValue: sha256b64(excC14n(body)),
    },
    ...attachments.map((a) => ({
      uri: `cid:${a.contentId}`,
      transforms: [ALG.attachmentContentSignature],
      inclusivePrefixes: [],
      digestMethod: ALG.sha256,
      digestValue: sha256b64(attachmentDigestInput(a.mimeType, a.data)),
    })),
  ];

  const tokenId = `X509-${randomUUID()}`;
  const signedInfo =
    `<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${ALG.excC14n}">` +
    `<ec:InclusiveNamespaces xmlns:ec="${NS.ec}" PrefixList="${esc(prefixes.join(' '))}"/>` +
    `</ds:CanonicalizationMethod>` +
    `<ds:SignatureMethod Algorithm="${ALG.rsaSha256}"/>${references.map(referenceXml).join('')}</ds:SignedInfo>`;
  const placeholder = `SIGNATURE-VALUE-${randomUUID()}`;
  const security =
    `<wsse:Security xmlns:wsse="${NS.wsse}" xmlns:wsu="${NS.wsu}" ` +
    `S12:mustUnderstand="true">${options.securityPrefixXml ?? ''}` +
    `<wsse:BinarySecurityToken EncodingType="${WSS.base64Binary}" ValueType="${WSS.x509v3}" ` +
    `wsu:Id="${tokenId}">${signer.certificate.raw.toString('base64')}</wsse:BinarySecurityToken>` +
    `<ds:Signature xmlns:ds="${NS.ds}" Id="SIG-${randomUUID()}">${signedInfo}<ds:SignatureValue>${placeholder}` +
    `</ds:SignatureValue>` +
    `<ds:KeyInfo Id="KI-${randomUUID()}"><wsse:SecurityTokenReference wsu:Id="STR-${randomUUID()}">` +
    `<wsse:Reference URI="#${tokenId}" ValueType="${WSS.x509v3}"/></wsse:SecurityTokenReference></ds:KeyInfo>` +
    `</ds:Signature></wsse:Security>`;

  const headerOpen = envelopeXml.indexOf('<S12:Header>');
  if (headerOpen < 0) throw new Error('the envelope text must contain <S12:Header>');
  const at = headerOpen + '<S12:Header>'.length;
  const withSecurity = envelopeXml.slice(0, at) + security + envelopeXml.slice(at);

  // SignedInfo is canonicalized where it now sits (the PrefixList pulls S12 from the Envelope).
  const placed = parseXml(withSecurity);
  const signedInfoEl = placed.getElementsByTagNameNS(NS.ds, 'SignedInfo')[0];
  if (!signedInfoEl) throw new Error('SignedInfo not found after insertion');
  const signature = createSign('sha256')
    .update(excC14n(signedInfoEl, prefixes))
    .sign(signer.privateKey)
    .toString('base64');
  return { xml: withSecurity.replace(placeholder, signature), references };
}

// ---------------------------------------------------------------------------------------------------------------------
// Verification

export interface VerifiedSignature {
  /** The certificate from the BinarySecurityToken; the caller checks it against the AP CA. */
  certificate: X509Certificate;
  references: SignatureReference[];
  /** The signed eb:Messaging and Body (the very elements the message must be read from). */
  messaging: Element;
  body: Element;
  /** Content-IDs of the attachments the signature covers. */
  signedAttachments: string[];
}

export interface VerifyOptions {
  /** Every attachment of the message must be signed (user messages). Default true. */
  requireAllAttachments?: boolean;
}

function authFail(message: string): EbmsError {
  return new EbmsError('EBMS:0101', `signature check failed: ${message}`);
}

function policyFail(message: string): EbmsError {
  return new EbmsError('EBMS:0103', message);
}

function readReference(ref: Element): SignatureReference {
  const transforms: string[] = [];
  let inclusivePrefixes: string[] = [];
  const tr = childElements(ref, NS.ds, 'Transforms')[0];
  for (const t of tr ? childElements(tr, NS.ds, 'Transform') : []) {
    transforms.push(t.getAttribute('Algorithm') ?? '');
    const inc = childElements(t, NS.ec, 'InclusiveNamespaces')[0];
    if (inc) inclusivePrefixes = (inc.getAttribute('PrefixList') ?? '').split(/\s+/).filter(Boolean);
  }
  const dm = childElements(ref, NS.ds, 'DigestMethod')[0];
  const dv = childElements(ref, NS.ds, 'DigestValue')[0];
  return {
    uri: ref.getAttribute('URI') ?? '',
    transforms,
    inclusivePrefixes,
    digestMethod: dm?.getAttribute('Algorithm') ?? '',
    digestValue: (dv?.textContent ?? '').replace(/\s+/g, ''),
  };
}

function digestMatches(expected: string, data: Buffer | string): boolean {
  const a = Buffer.from(expected, 'base64');
  const b = createHash('sha256').update(data).digest();
  return a.length === b.length && timingSafeEqual(a, b);
}

/** All elements of `doc` carrying `id` as wsu:Id or Id. */
function elementsWithId(doc: Document, id: string): Element[] {
  const out: Element[] = [];
  const walk = (n: Node): void => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (!isElement(c)) continue;
      if (c.getAttributeNS(NS.wsu, 'Id') === id || c.getAttribute('Id') === id || c.getAttribute('ID') === id)
        out.push(c);
      walk(c);
    }
  };
  walk(doc);
  return out;
}

export interface ParsedSignature {
  parts: EnvelopeParts;
  certificate: X509Certificate;
  references: SignatureReference[];
  signedInfo: Element;
  signedInfoPrefixes: string[];
  signatureValue: Buffer;
}

/**
 * Reads the WS-Security signature and checks it follows the profile (exclusive C14N, RSA-SHA256, SHA-256 digests,
 * key by direct BinarySecurityToken reference). No cryptography yet. EBMS:0101 / EBMS:0103 otherwise.
 */
export function readSignature(doc: Document): ParsedSignature {
  const parts = envelopeParts(doc);
  const securities = childElements(parts.header, NS.wsse, 'Security');
  if (securities.length !== 1) throw authFail(`expected one wsse:Security header, found ${securities.length}`);
  const security = securities[0] as Element;
  const signatures = childElements(security, NS.ds, 'Signature');
  if (signatures.length !== 1) throw authFail(`expected one ds:Signature in wsse:Security, found ${signatures.length}`);
  const sig = signatures[0] as Element;
  const signedInfo = childElements(sig, NS.ds, 'SignedInfo')[0];
  if (!signedInfo) throw authFail('ds:SignedInfo is missing');

  const c14nEl = childElements(signedInfo, NS.ds, 'CanonicalizationMethod')[0];
  if (!c14nEl || c14nEl.getAttribute('Algorithm') !== ALG.excC14n)
    throw policyFail(`SignedInfo must use exclusive C14N, not ${c14nEl?.getAttribute('Algorithm') ?? 'nothing'}`);
  const signedInfoPrefixes = (childElements(c14nEl, NS.ec, 'InclusiveNamespaces')[0]?.getAttribute('PrefixList') ?? '')
    .split(/\s+/)
    .filter(Boolean);
  const method = childElements(signedInfo, NS.ds, 'SignatureMethod')[0]?.getAttribute('Algorithm');
  if (method !== ALG.rsaSha256)
    throw policyFail(`the signature algorithm must be RSA-SHA256, not ${method ?? 'missing'}`);

  // Key: a direct reference to a BinarySecurityToken (X509v3) in this Security header; nothing else is accepted.
  const keyInfo = childElements(sig, NS.ds, 'KeyInfo')[0];
  const str = keyInfo ? childElements(keyInfo, NS.wsse, 'SecurityTokenReference')[0] : undefined;
  const ref = str ? childElements(str, NS.wsse, 'Reference')[0] : undefined;
  const tokenUri = ref?.getAttribute('URI') ?? '';
  if (!ref || !tokenUri.startsWith('#'))
    throw policyFail(
      'the signing key must be referenced directly to a BinarySecurityToken (KeyInfo/SecurityTokenReference/Reference)',
    );
  const tokens = childElements(security, NS.wsse, 'BinarySecurityToken').filter((t) => wsuId(t) === tokenUri.slice(1));
  if (tokens.length !== 1)
    throw policyFail(`the BinarySecurityToken ${tokenUri} is not in the Security header (exactly once)`);
  const token = tokens[0] as Element;
  if (token.getAttribute('ValueType') !== WSS.x509v3) throw policyFail(`the BinarySecurityToken must be ${WSS.x509v3}`);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from((token.textContent ?? '').replace(/\s+/g, ''), 'base64'));
  } catch (e) {
    throw new EbmsError('EBMS:0101', 'the BinarySecurityToken is not a readable X.509 certificate', { cause: e });
  }
  const references = childElements(signedInfo, NS.ds, 'Reference').map(readReference);
  for (const r of references) {
    if (r.digestMethod !== ALG.sha256)
      throw policyFail(`reference ${r.uri} uses digest ${r.digestMethod}, SHA-256 is required`);
    if (r.uri.startsWith('#')) {
      if (r.transforms.length !== 1 || r.transforms[0] !== ALG.excC14n)
        throw policyFail(`reference ${r.uri} must use exactly the exclusive C14N transform`);
    } else if (r.uri.startsWith('cid:')) {
      if (r.transforms.length !== 1 || r.transforms[0] !== ALG.attachmentContentSignature)
        throw policyFail(`attachment reference ${r.uri} must use the Attachment-Content-Signature-Transform`);
    } else throw policyFail(`unsupported reference URI "${r.uri}"`);
  }
  const signatureValue = Buffer.from(
    (childElements(sig, NS.ds, 'SignatureValue')[0]?.textContent ?? '').replace(/\s+/g, ''),
    'base64',
  );
  return { parts, certificate, references, signedInfo, signedInfoPrefixes, signatureValue };
}

/** True when the SignatureValue is the BinarySecurityToken key's signature of the canonical SignedInfo. */
export function signatureValueVerifies(sig: ParsedSignature): boolean {
  return createVerify('sha256')
    .update(excC14n(sig.signedInfo, sig.signedInfoPrefixes))
    .verify(sig.certificate.publicKey, sig.signatureValue);
}

/** The single element a `#id` reference names and whether its digest matches; throws when it is not exactly one. */
export function checkXmlReference(doc: Document, r: SignatureReference): { target: Element; matches: boolean } {
  const targets = elementsWithId(doc, r.uri.slice(1));
  if (targets.length !== 1) throw authFail(`reference ${r.uri} resolves to ${targets.length} elements`);
  const target = targets[0] as Element;
  return { target, matches: digestMatches(r.digestValue, excC14n(target, r.inclusivePrefixes)) };
}

/**
 * Verifies the WS-Security signature of an AS4 message (user message or signal): every reference digest, coverage of
 * eb:Messaging, Body and (by default) all attachments, then the signature value. Throws EbmsError EBMS:0101 when it
 * does not verify and EBMS:0103 when it does not follow the profile.
 */
export function verifyEnvelopeSignature(
  doc: Document,
  attachments: readonly AttachmentForSignature[],
  options: VerifyOptions = {},
): VerifiedSignature {
  const sig = readSignature(doc);
  const { parts } = sig;
  const covered = new Set<Element>();
  const signedAttachments: string[] = [];
  for (const r of sig.references) {
    if (r.uri.startsWith('#')) {
      const { target, matches } = checkXmlReference(doc, r);
      if (!matches) throw authFail(`the digest of ${r.uri} does not match (the element was changed)`);
      covered.add(target);
    } else {
      const cid = r.uri.slice(4);
      const att = attachments.find((a) => a.contentId === cid);
      if (!att) throw authFail(`the signed attachment ${r.uri} is not in the message`);
      if (!digestMatches(r.digestValue, attachmentDigestInput(att.mimeType, att.data)))
        throw authFail(`the digest of attachment ${r.uri} does not match (the payload was changed)`);
      signedAttachments.push(cid);
    }
  }
  if (!covered.has(parts.messaging)) throw authFail('the eb:Messaging header is not covered by the signature');
  if (!covered.has(parts.body)) throw authFail('the SOAP Body is not covered by the signature');
  if (options.requireAllAttachments !== false) {
    const unsigned = attachments.filter((a) => !signedAttachments.includes(a.contentId));
    if (unsigned.length) throw authFail(`attachment ${unsigned.map((a) => a.contentId).join(', ')} is not signed`);
  }
  if (!signatureValueVerifies(sig))
    throw authFail('the signature value does not verify with the BinarySecurityToken certificate');
  return {
    certificate: sig.certificate,
    references: sig.references,
    messaging: parts.messaging,
    body: parts.body,
    signedAttachments,
  };
}
