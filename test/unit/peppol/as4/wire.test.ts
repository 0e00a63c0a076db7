/**
 * Known answers from real wire messages: phase4's signed+encrypted user message (dump-raw.as4out) and receipts
 * returned by phase4, Governikus and Dataport (Holodeck B2B). Their signatures were made by Java WSS4J/Santuario and
 * Holodeck; verifying them checks our canonicalization and signature handling against independent implementations.
 */
import { parseXml } from '../../../../src/formats/xml/secure-parser';
import { excC14n } from '../../../../src/peppol/c14n';
import { ALG, PEPPOL_AS4 } from '../../../../src/peppol/as4/constants';
import { EbmsError } from '../../../../src/peppol/as4/ebms-error';
import {
  buildMultipart,
  parseContentType,
  parseMultipart,
  splitSoapAndAttachments,
} from '../../../../src/peppol/as4/mime';
import {
  checkXmlReference,
  envelopeParts,
  readSignature,
  signatureValueVerifies,
  verifyEnvelopeSignature,
} from '../../../../src/peppol/as4/signature';
import { checkPeppolUserMessage, readUserMessage } from '../../../../src/peppol/as4/user-message';
import { commonNameOf } from '../../../../src/peppol/pki/certificates';
import { requireCorpus } from '../../../support/corpus';
import { readDump } from '../../../support/peppol/as4-corpus';

requireCorpus('as4');
const describeCorpus = describe;

function ebms(fn: () => unknown): EbmsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EbmsError) return e;
    throw e;
  }
  throw new Error('expected an ebMS error');
}

describe('canonical XML namespace order', () => {
  it('orders prefixes by code point (S12 before eb), as Java does and xml-crypto alone does not', () => {
    const doc = parseXml(
      '<r xmlns:eb="urn:eb" xmlns:S12="urn:s" xmlns:wsu="urn:w"><eb:x S12:a="1" wsu:b="2" c="3"/></r>',
    );
    const x = doc.documentElement?.firstChild as never;
    expect(excC14n(x)).toBe(
      '<eb:x xmlns:S12="urn:s" xmlns:eb="urn:eb" xmlns:wsu="urn:w" c="3" S12:a="1" wsu:b="2"></eb:x>',
    );
  });
});

describe('MIME', () => {
  it('round-trips binary parts with the SOAP envelope first', () => {
    const bin = Buffer.from([0, 1, 2, 0x0d, 0x0a, 0x2d, 0x2d, 255]);
    const built = buildMultipart(
      [
        { contentType: 'application/soap+xml;charset=UTF-8', body: Buffer.from('<e/>') },
        { contentType: 'application/octet-stream', contentId: 'a@b', body: bin },
      ],
      '----=_Part_x',
    );
    expect(parseContentType(built.contentType)).toEqual({
      type: 'multipart/related',
      params: { boundary: '----=_Part_x', type: 'application/soap+xml' },
    });
    const { soap, attachments } = splitSoapAndAttachments(parseMultipart(built.body, built.contentType));
    expect(soap.body.toString()).toBe('<e/>');
    expect(attachments.map((a) => [a.contentId, a.body.equals(bin)])).toEqual([['a@b', true]]);
  });

  it('honours start, tolerates a preamble and LF line ends, decodes base64 parts', () => {
    const body = Buffer.from(
      'preamble\n--b\nContent-Type: text/plain\nContent-ID: <x>\n\nfirst\n--b\nContent-Type: application/soap+xml\nContent-ID: <root>\nContent-Transfer-Encoding: base64\n\nPGUvPg==\n--b--\n',
    );
    const { soap, attachments } = splitSoapAndAttachments(
      parseMultipart(body, 'multipart/related; boundary=b; start="<root>"'),
    );
    expect(soap.body.toString()).toBe('<e/>');
    expect(attachments[0]?.body.toString()).toBe('first');
  });

  it.each([
    ['text/xml', 'no boundary', /expected a multipart body/],
    ['multipart/related', '--b\r\n\r\nx', /no usable boundary/],
    ['multipart/related; boundary=b', 'nothing here', /boundary was not found/],
    ['multipart/related; boundary=b', '--b\r\nContent-Type: application/soap+xml\r\n\r\n<e/>', /not terminated/],
    [
      'multipart/related; boundary=b',
      '--b\r\nContent-Type: application/soap+xml\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nx\r\n--b--',
      /unsupported Content-Transfer-Encoding/,
    ],
  ])('refuses %s / %p with EBMS:0007', (ct, body, message) => {
    const e = ebms(() => splitSoapAndAttachments(parseMultipart(Buffer.from(body), ct)));
    expect(e.ebmsCode).toBe('EBMS:0007');
    expect(e.message).toMatch(message);
  });
});

describeCorpus('phase4 user message (dump-raw.as4out)', () => {
  const dump = () => readDump('as4/dump-raw.as4out');
  const open = () => {
    const { headers, body } = dump();
    const { soap, attachments } = splitSoapAndAttachments(parseMultipart(body, headers['content-type'] ?? ''));
    return { doc: parseXml(soap.body), attachments };
  };

  it('splits into the SOAP envelope and one encrypted attachment', () => {
    const { attachments } = open();
    expect(attachments.map((a) => [a.contentId, a.contentType])).toEqual([
      ['phase4-att-ff0f8ad5-f982-48ba-b8e2-26997600f496@cid', 'application/octet-stream'],
    ]);
    expect(attachments[0]?.body.length).toBeGreaterThan(1000);
  });

  it('reads every ebMS header field', () => {
    const um = readUserMessage(envelopeParts(open().doc).messaging);
    expect(um).toEqual({
      messageId: '17a7c374-efe3-41e2-ac0d-8a8f47529e47@phase4',
      timestamp: '2026-01-29T15:39:03.805Z',
      from: { partyId: 'POP000306', partyIdType: PEPPOL_AS4.partyIdType, role: PEPPOL_AS4.initiatorRole },
      to: { partyId: 'POP000306', partyIdType: PEPPOL_AS4.partyIdType, role: PEPPOL_AS4.responderRole },
      agreementRef: { value: 'urn:fdc:peppol.eu:2017:agreements:tia:ap_provider' },
      service: { value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0', type: 'cenbii-procid-ubl' },
      action:
        'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
      conversationId: 'phase4@Conv-4045816466640743733',
      messageProperties: [
        { name: 'originalSender', type: 'iso6523-actorid-upis', value: '9915:phase4-test-sender' },
        { name: 'finalRecipient', type: 'iso6523-actorid-upis', value: '9915:helger' },
      ],
      payloads: [
        {
          href: 'cid:phase4-att-ff0f8ad5-f982-48ba-b8e2-26997600f496@cid',
          properties: [
            { name: 'MimeType', value: 'application/xml' },
            { name: 'CompressionType', value: 'application/gzip' },
          ],
        },
      ],
    });
    expect(checkPeppolUserMessage(um)).toEqual({
      contentId: 'phase4-att-ff0f8ad5-f982-48ba-b8e2-26997600f496@cid',
      compressed: true,
      mimeType: 'application/xml',
    });
  });

  it('verifies phase4’s signature over SignedInfo and the Messaging and Body digests', () => {
    const { doc } = open();
    const sig = readSignature(doc);
    expect(commonNameOf(sig.certificate)).toBe('POP000306');
    expect(sig.signedInfoPrefixes).toEqual(['S12']);
    expect(sig.references.map((r) => [r.uri.slice(0, 12), r.transforms, r.inclusivePrefixes])).toEqual([
      ['#phase4-msg-', [ALG.excC14n], ['S12']],
      ['#id-8e8aa2d6', [ALG.excC14n], []],
      ['cid:phase4-a', [ALG.attachmentContentSignature], []],
    ]);
    expect(signatureValueVerifies(sig)).toBe(true);
    for (const r of sig.references.slice(0, 2)) expect(checkXmlReference(doc, r).matches).toBe(true);
    // The attachment digest covers the compressed plaintext, which only the receiver's key could reveal.
  });

  it('notices any change to the signed header', () => {
    const { headers, body } = dump();
    const forged = Buffer.from(body.toString('latin1').replace('9915:helger', '9915:helgar'), 'latin1');
    const { soap } = splitSoapAndAttachments(parseMultipart(forged, headers['content-type'] ?? ''));
    const doc = parseXml(soap.body);
    const sig = readSignature(doc);
    expect(checkXmlReference(doc, sig.references[0] as never).matches).toBe(false);
  });
});

describeCorpus('receipts from other access points', () => {
  const receipt = (file: string) => parseXml(readDump(`as4/received-receipts/${file}`).body);

  it.each([
    ['helger.as4in', 'POP000306'],
    ['governikus.as4in', 'POP000260'],
    ['dataport1-mustunderstand.as4in', 'PDE000357'],
  ])('verifies the signature of %s', (file, seat) => {
    const v = verifyEnvelopeSignature(receipt(file), []);
    expect(commonNameOf(v.certificate)).toBe(seat);
    expect(v.references).toHaveLength(2);
  });

  it('refuses dataport1.as4in: its mustUnderstand attribute was rewritten after signing', () => {
    const e = ebms(() => verifyEnvelopeSignature(receipt('dataport1.as4in'), []));
    expect(e.ebmsCode).toBe('EBMS:0101');
    expect(e.message).toMatch(/digest of #id-4b28412d2948bca.* does not match/);
  });
});
