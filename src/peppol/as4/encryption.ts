/**
 * WS-Security encryption of AS4 attachments as the Peppol AS4 profile wants it (CEF eDelivery AS4 1.14):
 * every payload part encrypted with AES-128-GCM (12-byte random IV, ciphertext, 16-byte tag; no AAD) under one
 * content key, the key transported with RSA-OAEP (xmlenc11#rsa-oaep, SHA-256 digest, MGF1-SHA256) to the receiver's
 * certificate, which travels in a BinarySecurityToken the EncryptedKey references directly. eb:Messaging and the Body
 * are never encrypted.
 *
 * Node's `oaepHash` sets the OAEP digest and the MGF1 hash together, which is exactly this combination.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  randomUUID,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import type { Document, Element } from '@xmldom/xmldom';
import { childElementsNamed as childElements, escapeXml as esc } from '../../formats/xml/helpers';
import { ALG, NS, WSS } from './constants';
import { EbmsError } from './ebms-error';
import { envelopeParts } from './signature';

const GCM_IV = 12;
const GCM_TAG = 16;

export interface PlainAttachment {
  contentId: string;
  /** Type of the content to encrypt (after compression: application/gzip). */
  mimeType: string;
  data: Buffer;
}

export interface EncryptedAttachments {
  /** BinarySecurityToken (receiver), EncryptedKey and one EncryptedData per attachment, for wsse:Security. */
  securityXml: string;
  attachments: Array<{ contentId: string; data: Buffer }>;
}

/** AES-128-GCM: IV || ciphertext || tag. */
export function gcmEncrypt(key: Buffer, plain: Buffer): Buffer {
  const iv = randomBytes(GCM_IV);
  const c = createCipheriv('aes-128-gcm', key, iv);
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, body, c.getAuthTag()]);
}

export function gcmDecrypt(key: Buffer, data: Buffer): Buffer {
  if (data.length < GCM_IV + GCM_TAG) throw new Error('ciphertext shorter than IV and tag');
  const d = createDecipheriv('aes-128-gcm', key, data.subarray(0, GCM_IV));
  d.setAuthTag(data.subarray(data.length - GCM_TAG));
  return Buffer.concat([d.update(data.subarray(GCM_IV, data.length - GCM_TAG)), d.final()]);
}

export function encryptAttachments(
  attachments: readonly PlainAttachment[],
  recipient: X509Certificate,
): EncryptedAttachments {
  const key = randomBytes(16);
  const tokenId = `X509-${randomUUID()}`;
  const keyId = `EK-${randomUUID()}`;
  const items = attachments.map((a) => ({ ...a, dataId: `ED-${randomUUID()}`, encrypted: gcmEncrypt(key, a.data) }));
  const wrapped = publicEncrypt(
    { key: recipient.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    key,
  );
  const securityXml =
    `<wsse:BinarySecurityToken EncodingType="${WSS.base64Binary}" ValueType="${WSS.x509v3}" ` +
    `wsu:Id="${tokenId}">${recipient.raw.toString('base64')}</wsse:BinarySecurityToken>` +
    `<xenc:EncryptedKey xmlns:xenc="${NS.xenc}" Id="${keyId}">` +
    `<xenc:EncryptionMethod Algorithm="${ALG.rsaOaep}">` +
    `<ds:DigestMethod xmlns:ds="${NS.ds}" Algorithm="${ALG.sha256}"/>` +
    `<xenc11:MGF xmlns:xenc11="${NS.xenc11}" Algorithm="${ALG.mgf1Sha256}"/></xenc:EncryptionMethod>` +
    `<ds:KeyInfo xmlns:ds="${NS.ds}"><wsse:SecurityTokenReference>` +
    `<wsse:Reference URI="#${tokenId}" ValueType="${WSS.x509v3}"/></wsse:SecurityTokenReference></ds:KeyInfo>` +
    `<xenc:CipherData><xenc:CipherValue>${wrapped.toString('base64')}</xenc:CipherValue></xenc:CipherData>` +
    `<xenc:ReferenceList>${items.map((i) => `<xenc:DataReference URI="#${i.dataId}"/>`).join('')}` +
    `</xenc:ReferenceList>` +
    `</xenc:EncryptedKey>` +
    items
      .map(
        (i) =>
          `<xenc:EncryptedData xmlns:xenc="${NS.xenc}" Id="${i.dataId}" MimeType="${esc(i.mimeType)}" ` +
          `Type="${ALG.attachmentContentOnly}">` +
          `<xenc:EncryptionMethod Algorithm="${ALG.aes128Gcm}"/>` +
          `<ds:KeyInfo xmlns:ds="${NS.ds}"><wsse:SecurityTokenReference xmlns:wsse11="${NS.wsse11}" ` +
          `wsse11:TokenType="${WSS.encryptedKeyTokenType}"><wsse:Reference URI="#${keyId}"/>` +
          `</wsse:SecurityTokenReference></ds:KeyInfo>` +
          `<xenc:CipherData><xenc:CipherReference URI="cid:${esc(i.contentId)}"><xenc:Transforms>` +
          `<ds:Transform xmlns:ds="${NS.ds}" Algorithm="${ALG.attachmentCiphertext}"/></xenc:Transforms>` +
          `</xenc:CipherReference></xenc:CipherData>` +
          `</xenc:EncryptedData>`,
      )
      .join('');
  return { securityXml, attachments: items.map((i) => ({ contentId: i.contentId, data: i.encrypted })) };
}

export interface DecryptedAttachment extends PlainAttachment {
  /** The certificate the sender encrypted for (one of ours). */
  recipientCertificate: X509Certificate;
}

function decryptFail(message: string, cause?: unknown): EbmsError {
  return new EbmsError('EBMS:0102', `decryption failed: ${message}`, cause ? { cause } : {});
}
function policyFail(message: string): EbmsError {
  return new EbmsError('EBMS:0103', message);
}

/**
 * Decrypts every encrypted attachment. `keyFor` returns our private key for the certificate the sender encrypted to
 * (undefined when it is not ours, e.g. an old or foreign certificate). With `requireAllEncrypted` (default) an
 * attachment that is not encrypted is refused, as the Peppol profile demands.
 */
export function decryptAttachments(
  doc: Document,
  attachments: ReadonlyArray<{ contentId: string; data: Buffer }>,
  keyFor: (certificate: X509Certificate) => KeyObject | undefined,
  options: { requireAllEncrypted?: boolean } = {},
): DecryptedAttachment[] {
  const { header } = envelopeParts(doc);
  const security = childElements(header, NS.wsse, 'Security')[0];
  if (!security) throw policyFail('the message has no wsse:Security header');
  const byId = (local: string, ns: string, id: string): Element[] =>
    childElements(security, ns, local).filter(
      (e) => e.getAttribute('Id') === id || e.getAttributeNS(NS.wsu, 'Id') === id,
    );

  const keys = childElements(security, NS.xenc, 'EncryptedKey');
  if (keys.length !== 1) throw decryptFail(`expected one xenc:EncryptedKey, found ${keys.length}`);
  const ek = keys[0] as Element;
  const method = childElements(ek, NS.xenc, 'EncryptionMethod')[0];
  const digest = method ? childElements(method, NS.ds, 'DigestMethod')[0]?.getAttribute('Algorithm') : undefined;
  const mgf = method ? childElements(method, NS.xenc11, 'MGF')[0]?.getAttribute('Algorithm') : undefined;
  if (method?.getAttribute('Algorithm') !== ALG.rsaOaep || digest !== ALG.sha256 || mgf !== ALG.mgf1Sha256) {
    throw policyFail('the key must be transported with xmlenc11#rsa-oaep, SHA-256 and MGF1-SHA256');
  }
  const keyInfo = childElements(ek, NS.ds, 'KeyInfo')[0];
  const str = keyInfo ? childElements(keyInfo, NS.wsse, 'SecurityTokenReference')[0] : undefined;
  const tokenUri = (str ? childElements(str, NS.wsse, 'Reference')[0]?.getAttribute('URI') : undefined) ?? '';
  if (!tokenUri.startsWith('#')) throw policyFail('the EncryptedKey must reference a BinarySecurityToken directly');
  const tokens = byId('BinarySecurityToken', NS.wsse, tokenUri.slice(1));
  if (tokens.length !== 1 || tokens[0]?.getAttribute('ValueType') !== WSS.x509v3)
    throw policyFail(`the EncryptedKey token ${tokenUri} is not one X509v3 BinarySecurityToken`);
  let recipientCertificate: X509Certificate;
  try {
    recipientCertificate = new X509Certificate(
      Buffer.from((tokens[0]?.textContent ?? '').replace(/\s+/g, ''), 'base64'),
    );
  } catch (e) {
    throw decryptFail('the recipient token is not a readable certificate', e);
  }
  const privateKey = keyFor(recipientCertificate);
  if (!privateKey) {
    throw decryptFail(
      `the message is encrypted for a certificate that is not ours ` +
        `(${recipientCertificate.subject.split('\n').join(', ')}, serial ${recipientCertificate.serialNumber})`,
    );
  }
  let contentKey: Buffer;
  try {
    const cipherValue =
      childElements(childElements(ek, NS.xenc, 'CipherData')[0] ?? ek, NS.xenc, 'CipherValue')[0]?.textContent ?? '';
    contentKey = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      Buffer.from(cipherValue.replace(/\s+/g, ''), 'base64'),
    );
  } catch (e) {
    throw decryptFail('the content key cannot be unwrapped', e);
  }
  if (contentKey.length !== 16) throw decryptFail(`the content key has ${contentKey.length} bytes, AES-128 needs 16`);

  const refList = childElements(ek, NS.xenc, 'ReferenceList')[0];
  const dataIds = (refList ? childElements(refList, NS.xenc, 'DataReference') : []).map((r) =>
    (r.getAttribute('URI') ?? '').replace(/^#/, ''),
  );
  const out: DecryptedAttachment[] = [];
  const done = new Set<string>();
  for (const id of dataIds) {
    const eds = byId('EncryptedData', NS.xenc, id);
    if (eds.length !== 1) throw decryptFail(`EncryptedData ${id} is not in the Security header (exactly once)`);
    const ed = eds[0] as Element;
    if (ed.getAttribute('Type') !== ALG.attachmentContentOnly)
      throw policyFail(`EncryptedData ${id} must be of type Attachment-Content-Only`);
    if (childElements(ed, NS.xenc, 'EncryptionMethod')[0]?.getAttribute('Algorithm') !== ALG.aes128Gcm)
      throw policyFail(`EncryptedData ${id} must use AES-128-GCM`);
    const cref = childElements(childElements(ed, NS.xenc, 'CipherData')[0] ?? ed, NS.xenc, 'CipherReference')[0];
    const uri = cref?.getAttribute('URI') ?? '';
    if (!uri.startsWith('cid:')) throw decryptFail(`EncryptedData ${id} does not point at an attachment`);
    const cid = uri.slice(4);
    const att = attachments.find((a) => a.contentId === cid);
    if (!att) throw decryptFail(`the encrypted attachment ${uri} is not in the message`);
    if (done.has(cid)) throw decryptFail(`attachment ${uri} is encrypted twice`);
    let plain: Buffer;
    try {
      plain = gcmDecrypt(contentKey, att.data);
    } catch (e) {
      throw decryptFail(`attachment ${uri} does not decrypt (changed in transit or wrong key)`, e);
    }
    done.add(cid);
    out.push({
      contentId: cid,
      mimeType: ed.getAttribute('MimeType') ?? 'application/octet-stream',
      data: plain,
      recipientCertificate,
    });
  }
  if (options.requireAllEncrypted !== false) {
    const clear = attachments.filter((a) => !done.has(a.contentId));
    if (clear.length) throw policyFail(`attachment ${clear.map((a) => a.contentId).join(', ')} is not encrypted`);
  }
  return out;
}
