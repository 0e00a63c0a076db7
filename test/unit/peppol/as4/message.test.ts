import { X509Certificate, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { parseXml } from '../../../../src/formats/xml/secure-parser';
import { EbmsError } from '../../../../src/peppol/as4/ebms-error';
import { decryptAttachments, encryptAttachments, gcmDecrypt, gcmEncrypt } from '../../../../src/peppol/as4/encryption';
import { buildPeppolMessage, openPeppolMessage, type OutgoingPeppolMessage } from '../../../../src/peppol/as4/message';
import { buildMultipart, parseMultipart, splitSoapAndAttachments } from '../../../../src/peppol/as4/mime';
import { signEnvelope, verifyEnvelopeSignature } from '../../../../src/peppol/as4/signature';
import {
  buildUserMessageEnvelope,
  checkPeppolUserMessage,
  peppolUserMessage,
  readUserMessage,
  type UserMessage,
} from '../../../../src/peppol/as4/user-message';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../../src/peppol/identifiers';
import { ApKeyRing } from '../../../../src/peppol/pki/key-ring';
import type { KeyMaterial } from '../../../../src/peppol/pki/key-material';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  type TestPki,
} from '../../../support/peppol/test-pki';
import { buildSbd } from '../../../../src/peppol/sbdh';
import { SAMPLE_UBL_INVOICE, corpusFile } from '../../../support/corpus';
import { testPki } from '../../../support/peppol/pki-fixture';

const DAY = 86_400_000;
const INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const BILLING = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
const SENDER = peppolParticipant('0088:7315458756324');
const RECEIVER = peppolParticipant('0088:4562458856624');

let pki: TestPki;
let foreign: KeyMaterial;
let expired: KeyMaterial;
beforeAll(async () => {
  pki = await testPki();
  const root = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  const ca = await createIntermediateCa(root, { subject: 'C=NL, O=Elsewhere, CN=Foreign AP CA' });
  [foreign, expired] = await Promise.all([
    issueCertificate(ca, { subject: apSubject('POP000001') }),
    issueCertificate(pki.apCa, {
      subject: apSubject('POP000001'),
      notBefore: new Date(Date.now() - 900 * DAY),
      notAfter: new Date(Date.now() - DAY),
    }),
  ]);
}, 120_000);

function ebms(fn: () => unknown): EbmsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EbmsError) return e;
    throw e;
  }
  throw new Error('expected an ebMS error');
}

function sbd(over: Partial<Parameters<typeof buildSbd>[0]> = {}): Buffer {
  return buildSbd({
    sender: SENDER,
    receiver: RECEIVER,
    documentType: INVOICE,
    process: BILLING,
    countryC1: 'NL',
    payload: { xml: corpusFile(SAMPLE_UBL_INVOICE) },
    ...over,
  }).xml;
}

function send(over: Partial<Parameters<typeof buildPeppolMessage>[0]> = {}): OutgoingPeppolMessage {
  return buildPeppolMessage({
    sbd: sbd(),
    header: { sender: SENDER, receiver: RECEIVER, documentType: INVOICE, process: BILLING },
    signer: pki.apSender,
    receiverCertificate: pki.apReceiver.certificate,
    ...over,
  });
}

/** A message put together by hand, for payloads and headers buildPeppolMessage would never produce. */
function manual(opts: { fromSeatId?: string; signer?: KeyMaterial; data: Buffer }): {
  contentType: string;
  body: Buffer;
} {
  const um = peppolUserMessage({
    fromSeatId: opts.fromSeatId ?? 'POP000001',
    toSeatId: 'POP000002',
    sender: SENDER,
    receiver: RECEIVER,
    documentType: INVOICE,
    process: BILLING,
    contentId: 'p@x',
  });
  const payload = { contentId: 'p@x', mimeType: 'application/gzip', data: opts.data };
  const enc = encryptAttachments([payload], pki.apReceiver.certificate);
  const signed = signEnvelope(buildUserMessageEnvelope(um), opts.signer ?? pki.apSender, [payload], {
    securityPrefixXml: enc.securityXml,
  });
  return buildMultipart(
    [
      { contentType: 'application/soap+xml', body: Buffer.from(signed.xml) },
      { contentType: 'application/octet-stream', contentId: 'p@x', body: enc.attachments[0]?.data as Buffer },
    ],
    'manual-boundary',
  );
}

const receiverRing = () => new ApKeyRing([pki.apReceiver]);
const openOpts = (over: Partial<Parameters<typeof openPeppolMessage>[2]> = {}) => ({
  keyFor: (c: X509Certificate) => receiverRing().forCertificate(c)?.privateKey,
  apCertificateAuthorities: [pki.apCa.certificate],
  ...over,
});

/** Rebuilds the MIME body with changed SOAP text and/or attachment bytes. */
function rewrap(
  msg: OutgoingPeppolMessage,
  edit: { soap?: (xml: string) => string; attachment?: (b: Buffer) => Buffer },
): Buffer {
  const { soap, attachments } = splitSoapAndAttachments(parseMultipart(msg.body, msg.contentType));
  const boundary = /boundary="([^"]+)"/.exec(msg.contentType)?.[1] as string;
  return buildMultipart(
    [
      {
        contentType: soap.contentType,
        body: Buffer.from((edit.soap ?? ((x) => x))(soap.body.toString('utf8')), 'utf8'),
      },
      ...attachments.map((a) => ({
        contentType: a.contentType,
        contentId: a.contentId as string,
        body: (edit.attachment ?? ((b) => b))(a.body),
      })),
    ],
    boundary,
  ).body;
}

describe('Peppol AS4 message: build and open', () => {
  it('round-trips: compressed, signed, encrypted, and the SBD arrives unchanged', () => {
    const doc = sbd();
    const msg = send({ sbd: doc, messageId: 'fixed-id@invoice-gateway' });
    expect(msg.contentType).toMatch(
      /^multipart\/related; boundary="----=_Part_[0-9a-f-]+"; type="application\/soap\+xml"$/,
    );
    const wire = msg.body.toString('latin1');
    expect(wire.indexOf('application/soap+xml')).toBeLessThan(wire.indexOf('application/octet-stream'));
    expect(msg.references.map((r) => r.uri.split(/[-:]/)[0])).toEqual(['#msg', '#id', 'cid']);

    const got = openPeppolMessage(msg.contentType, msg.body, openOpts());
    expect(got.sbd.equals(doc)).toBe(true);
    expect(got.userMessage.messageId).toBe('fixed-id@invoice-gateway');
    expect(got.userMessage.from.partyId).toBe('POP000001');
    expect(got.userMessage.to.partyId).toBe('POP000002');
    expect(got.parsedSbd.header.receiver).toEqual(RECEIVER);
    expect(got.signerCertificate.fingerprint256).toBe(pki.apSender.certificate.fingerprint256);
    expect(got.references).toEqual(msg.references);
  });

  it('keeps the payload confidential on the wire', () => {
    const msg = send();
    expect(msg.body.includes(Buffer.from('AccountingSupplierParty'))).toBe(false);
    expect(msg.body.includes(gzipSync(sbd()).subarray(0, 10))).toBe(false);
  });

  it('decrypts with either key of a rollover pair', () => {
    const ring = new ApKeyRing([pki.apSender, pki.apSenderNext]);
    for (const target of [pki.apSender, pki.apSenderNext]) {
      const msg = send({
        signer: pki.apReceiver,
        receiverCertificate: target.certificate,
        header: { sender: SENDER, receiver: RECEIVER, documentType: INVOICE, process: BILLING },
      });
      const got = openPeppolMessage(
        msg.contentType,
        msg.body,
        openOpts({ keyFor: (c) => ring.forCertificate(c)?.privateKey }),
      );
      expect(got.recipientCertificate.fingerprint256).toBe(target.certificate.fingerprint256);
    }
  });

  it('refuses a message encrypted for someone else (EBMS:0102)', () => {
    const msg = send({ receiverCertificate: pki.apSender.certificate });
    const e = ebms(() => openPeppolMessage(msg.contentType, msg.body, openOpts()));
    expect(e.ebmsCode).toBe('EBMS:0102');
    expect(e.message).toMatch(/not ours.*POP000001/);
  });

  it('refuses a changed attachment (EBMS:0102: the GCM tag fails)', () => {
    const msg = send();
    const body = rewrap(msg, {
      attachment: (b) => Buffer.concat([b.subarray(0, 40), Buffer.from([(b[40] as number) ^ 1]), b.subarray(41)]),
    });
    expect(ebms(() => openPeppolMessage(msg.contentType, body, openOpts())).ebmsCode).toBe('EBMS:0102');
  });

  it('refuses a changed header (EBMS:0101)', () => {
    const msg = send();
    const body = rewrap(msg, { soap: (x) => x.replace('>0088:4562458856624<', '>0088:4562458856625<') });
    const e = ebms(() => openPeppolMessage(msg.contentType, body, openOpts()));
    expect(e.ebmsCode).toBe('EBMS:0101');
    expect(e.message).toMatch(/digest of #msg-.* does not match/);
  });

  it('refuses a wrapped signature: the signed header moved aside, a forged one processed (EBMS:0101)', () => {
    const msg = send();
    const body = rewrap(msg, {
      soap: (x) => {
        const start = x.indexOf('<eb:Messaging');
        const end = x.indexOf('</eb:Messaging>') + '</eb:Messaging>'.length;
        const signed = x.slice(start, end);
        const forged = signed
          .replace(/wsu:Id="[^"]+"/, 'wsu:Id="forged"')
          .replace('>0088:4562458856624<', '>0088:666<');
        // The original travels inside an unknown header block; the forged one sits where a receiver looks.
        return x.slice(0, start) + `<x:Wrapper xmlns:x="urn:attack">${signed}</x:Wrapper>${forged}` + x.slice(end);
      },
    });
    const e = ebms(() => openPeppolMessage(msg.contentType, body, openOpts()));
    expect(e.ebmsCode).toBe('EBMS:0101');
    expect(e.message).toMatch(/eb:Messaging header is not covered by the signature/);
  });

  it('refuses a signer from another CA, an expired signer, and a From PartyId that is not the signer', () => {
    const other = send({ signer: foreign });
    const e1 = ebms(() => openPeppolMessage(other.contentType, other.body, openOpts()));
    expect([e1.ebmsCode, e1.message]).toEqual(['EBMS:0101', expect.stringMatching(/not issued by a configured CA/)]);

    const old = send({ signer: expired });
    const e2 = ebms(() => openPeppolMessage(old.contentType, old.body, openOpts()));
    expect([e2.ebmsCode, e2.message]).toEqual(['EBMS:0101', expect.stringMatching(/expired/)]);

    // A valid AP certificate (POP000002) signing a message that claims to come from POP000001.
    const liar = manual({ fromSeatId: 'POP000001', signer: pki.apReceiver, data: gzipSync(sbd()) });
    const e3 = ebms(() => openPeppolMessage(liar.contentType, liar.body, openOpts()));
    expect([e3.ebmsCode, e3.message]).toEqual([
      'EBMS:0004',
      expect.stringMatching(/From PartyId POP000001 is not the Seat ID of the signing certificate \(POP000002\)/),
    ]);
  });

  it('refuses a gzip bomb and broken gzip (EBMS:0303)', () => {
    // 20 MiB of zeros compress to about 20 KB; the receiver stops at its cap instead of inflating it all.
    const bomb = manual({ data: gzipSync(Buffer.alloc(20 * 1024 * 1024)) });
    expect(bomb.body.length).toBeLessThan(100_000);
    const e1 = ebms(() =>
      openPeppolMessage(bomb.contentType, bomb.body, openOpts({ maxDecompressedBytes: 10 * 1024 * 1024 })),
    );
    expect([e1.ebmsCode, e1.message]).toEqual([
      'EBMS:0303',
      expect.stringMatching(/decompresses to more than 10485760 bytes/),
    ]);

    const junk = manual({ data: randomBytes(64) });
    const e2 = ebms(() => openPeppolMessage(junk.contentType, junk.body, openOpts()));
    expect([e2.ebmsCode, e2.message]).toEqual(['EBMS:0303', expect.stringMatching(/cannot be decompressed/)]);
  });

  it('refuses an SBDH that does not match the AS4 headers, and an invalid SBDH (EBMS:0004)', () => {
    const mismatched = send({
      header: {
        sender: peppolParticipant('0088:1111111111111'),
        receiver: RECEIVER,
        documentType: INVOICE,
        process: BILLING,
      },
    });
    const e1 = ebms(() => openPeppolMessage(mismatched.contentType, mismatched.body, openOpts()));
    expect([e1.ebmsCode, e1.message]).toEqual([
      'EBMS:0004',
      expect.stringMatching(/originalSender does not match the SBDH sender/),
    ]);

    const broken = send({
      sbd: Buffer.from(sbd().toString('utf8').replace('<sh:HeaderVersion>1.0<', '<sh:HeaderVersion>2.0<')),
    });
    const e2 = ebms(() => openPeppolMessage(broken.contentType, broken.body, openOpts()));
    expect([e2.ebmsCode, e2.message]).toEqual([
      'EBMS:0004',
      expect.stringMatching(/^Peppol SBDH Issue: .*HeaderVersion is "2.0"/),
    ]);
  });

  it('refuses a non-MIME body (EBMS:0007) and a payload part that is missing (EBMS:0011)', () => {
    expect(ebms(() => openPeppolMessage('application/soap+xml', Buffer.from('<x/>'), openOpts())).ebmsCode).toBe(
      'EBMS:0007',
    );
    const msg = send();
    const { soap } = splitSoapAndAttachments(parseMultipart(msg.body, msg.contentType));
    const only = buildMultipart([{ contentType: soap.contentType, body: soap.body }], 'b1');
    expect(ebms(() => openPeppolMessage(only.contentType, only.body, openOpts())).ebmsCode).toBe('EBMS:0011');
  });
});

describe('WS-Security building blocks', () => {
  const um = (): UserMessage =>
    peppolUserMessage({
      fromSeatId: 'POP000001',
      toSeatId: 'POP000002',
      sender: SENDER,
      receiver: RECEIVER,
      documentType: INVOICE,
      process: BILLING,
      contentId: 'a@b',
    });

  it('signs and verifies an uncompressed XML attachment after exclusive C14N (as WSS4J digests XML parts)', () => {
    const xml = Buffer.from('<a   b="1"  xmlns="urn:x"><c/></a>');
    const signed = signEnvelope(buildUserMessageEnvelope(um()), pki.apSender, [
      { contentId: 'a@b', mimeType: 'application/xml', data: xml },
    ]);
    const doc = parseXml(signed.xml);
    const reformatted = Buffer.from('<a xmlns="urn:x" b="1"><c></c></a>');
    expect(
      verifyEnvelopeSignature(doc, [{ contentId: 'a@b', mimeType: 'application/xml', data: reformatted }])
        .signedAttachments,
    ).toEqual(['a@b']);
    expect(
      ebms(() =>
        verifyEnvelopeSignature(doc, [
          { contentId: 'a@b', mimeType: 'application/xml', data: Buffer.from('<a xmlns="urn:x" b="2"><c/></a>') },
        ]),
      ).message,
    ).toMatch(/payload was changed/);
    expect(ebms(() => verifyEnvelopeSignature(doc, [])).message).toMatch(/not in the message/);
    expect(
      ebms(() =>
        verifyEnvelopeSignature(doc, [
          { contentId: 'a@b', mimeType: 'application/xml', data: xml },
          { contentId: 'extra', mimeType: 'application/gzip', data: xml },
        ]),
      ).message,
    ).toMatch(/extra is not signed/);
  });

  it('refuses key references other than a BinarySecurityToken, and other algorithms (EBMS:0103)', () => {
    const signed = signEnvelope(buildUserMessageEnvelope(um()), pki.apSender, []);
    const issuerSerial = signed.xml.replace(
      /<wsse:SecurityTokenReference([^>]*)><wsse:Reference[^>]*\/><\/wsse:SecurityTokenReference>/,
      '<wsse:SecurityTokenReference$1><ds:X509Data><ds:X509IssuerSerial/></ds:X509Data></wsse:SecurityTokenReference>',
    );
    expect(ebms(() => verifyEnvelopeSignature(parseXml(issuerSerial), [])).ebmsCode).toBe('EBMS:0103');
    const sha1 = signed.xml.replace('xmldsig-more#rsa-sha256', 'xmldsig#rsa-sha1');
    const e = ebms(() => verifyEnvelopeSignature(parseXml(sha1), []));
    expect([e.ebmsCode, e.message]).toEqual(['EBMS:0103', expect.stringMatching(/RSA-SHA256/)]);
  });

  it('refuses a forged signature value (EBMS:0101)', () => {
    const signed = signEnvelope(buildUserMessageEnvelope(um()), pki.apSender, []);
    const forged = signed.xml.replace(
      /<ds:SignatureValue>([A-Za-z0-9+/])/,
      (_m, c: string) => `<ds:SignatureValue>${c === 'A' ? 'B' : 'A'}`,
    );
    expect(ebms(() => verifyEnvelopeSignature(parseXml(forged), [])).message).toMatch(
      /signature value does not verify/,
    );
  });

  it('encrypts with AES-128-GCM (IV | ciphertext | tag) and refuses other key transport parameters', () => {
    const key = randomBytes(16);
    const c = gcmEncrypt(key, Buffer.from('hello'));
    expect(c).toHaveLength(12 + 5 + 16);
    expect(gcmDecrypt(key, c).toString()).toBe('hello');

    const enc = encryptAttachments(
      [{ contentId: 'a@b', mimeType: 'application/gzip', data: Buffer.from('zz') }],
      pki.apReceiver.certificate,
    );
    const signed = signEnvelope(buildUserMessageEnvelope(um()), pki.apSender, [], {
      securityPrefixXml: enc.securityXml,
    });
    const keyFor = () => pki.apReceiver.privateKey;
    expect(decryptAttachments(parseXml(signed.xml), enc.attachments, keyFor)[0]?.data.toString()).toBe('zz');
    const sha1 = signed.xml.replace('xmlenc11#mgf1sha256', 'xmlenc11#mgf1sha1');
    expect(ebms(() => decryptAttachments(parseXml(sha1), enc.attachments, keyFor)).ebmsCode).toBe('EBMS:0103');
    expect(
      ebms(() =>
        decryptAttachments(
          parseXml(signed.xml),
          [...enc.attachments, { contentId: 'clear@x', data: Buffer.from('x') }],
          keyFor,
        ),
      ).message,
    ).toMatch(/clear@x is not encrypted/);
    expect(
      ebms(() => decryptAttachments(parseXml(signed.xml), enc.attachments, () => pki.apSender.privateKey)).ebmsCode,
    ).toBe('EBMS:0102');
  });
});

describe('Peppol profile checks on the ebMS header', () => {
  const base = (): UserMessage =>
    peppolUserMessage({
      fromSeatId: 'POP000001',
      toSeatId: 'POP000002',
      sender: SENDER,
      receiver: RECEIVER,
      documentType: INVOICE,
      process: BILLING,
      contentId: 'a@b',
    });
  const reread = (u: UserMessage): UserMessage => {
    const doc = parseXml(buildUserMessageEnvelope(u));
    return readUserMessage(
      doc.getElementsByTagNameNS(
        'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
        'Messaging',
      )[0] as never,
    );
  };

  it('round-trips the header through XML', () => {
    const u = base();
    expect(reread(u)).toEqual(u);
    expect(checkPeppolUserMessage(reread(u))).toEqual({
      contentId: 'a@b',
      compressed: true,
      mimeType: 'application/xml',
    });
  });

  it.each<[string, (u: UserMessage) => void, string, RegExp]>([
    ['an AgreementRef type', (u) => (u.agreementRef.type = 'x'), 'EBMS:0010', /neither a type nor a pmode/],
    ['another agreement', (u) => (u.agreementRef.value = 'urn:x'), 'EBMS:0010', /AgreementRef must be/],
    [
      'a wrong party type',
      (u) => (u.from.partyIdType = 'urn:oasis:names:tc:ebcore:partyid-type:unregistered'),
      'EBMS:0010',
      /PartyId type/,
    ],
    ['a PartyId that is no Seat ID', (u) => (u.to.partyId = 'receiver'), 'EBMS:0004', /not a Peppol Seat ID/],
    ['swapped roles', (u) => (u.from.role = u.to.role), 'EBMS:0010', /From Role/],
    ['no originalSender', (u) => u.messageProperties.shift(), 'EBMS:0004', /originalSender/],
    [
      'an untyped finalRecipient',
      (u) => delete (u.messageProperties[1] as { type?: string }).type,
      'EBMS:0004',
      /finalRecipient/,
    ],
    [
      'a deflate payload',
      (u) => ((u.payloads[0]?.properties[1] as { value: string }).value = 'application/deflate'),
      'EBMS:0003',
      /CompressionType/,
    ],
    ['two payloads', (u) => u.payloads.push({ href: 'cid:c@d', properties: [] }), 'EBMS:0003', /exactly one payload/],
    ['a body payload', (u) => ((u.payloads[0] as { href: string }).href = '#body'), 'EBMS:0011', /MIME attachment/],
  ])('refuses %s', (_label, mutate, code, message) => {
    const u = base();
    mutate(u);
    const e = ebms(() => checkPeppolUserMessage(reread(u)));
    expect([e.ebmsCode, e.message]).toEqual([code, expect.stringMatching(message)]);
  });

  it('refuses a From with two PartyIds and one without (EBMS:0010, EBMS:0009)', () => {
    const xml = buildUserMessageEnvelope(base());
    const two = xml.replace(
      '<eb:PartyId type="urn:fdc:peppol.eu:2017:identifiers:ap">POP000001</eb:PartyId>',
      '<eb:PartyId>POP000001</eb:PartyId><eb:PartyId>POP000003</eb:PartyId>',
    );
    const none = xml.replace('<eb:PartyId type="urn:fdc:peppol.eu:2017:identifiers:ap">POP000001</eb:PartyId>', '');
    const m = (x: string) =>
      parseXml(x).getElementsByTagNameNS(
        'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
        'Messaging',
      )[0] as never;
    expect(ebms(() => readUserMessage(m(two))).ebmsCode).toBe('EBMS:0010');
    expect(ebms(() => readUserMessage(m(none))).ebmsCode).toBe('EBMS:0009');
  });
});
