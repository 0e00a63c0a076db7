import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../src/peppol/identifiers';
import type { TestPki } from '../../support/peppol/test-pki';
import { documentTypeFromHref } from '../../../src/peppol/smp-client';
import {
  DSIG_NS,
  SMP_NS,
  buildServiceGroupXml,
  buildServiceMetadataXml,
  rfc2253Subject,
  signServiceMetadata,
} from '../../../src/peppol/smp-documents';
import { parseXml, select, text } from '../../../src/formats/xml/secure-parser';
import { testPki } from '../../support/peppol/pki-fixture';

const INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const NS = {
  smp: SMP_NS,
  ds: DSIG_NS,
  ids: 'http://busdox.org/transport/identifiers/1.0/',
  wsa: 'http://www.w3.org/2005/08/addressing',
};

let pki: TestPki;
beforeAll(async () => {
  pki = await testPki();
}, 60_000);

describe('SMP documents', () => {
  it('builds a service group whose references name the document types', () => {
    const xml = buildServiceGroupXml('http://smp.example/base/', peppolParticipant('0088:123'), [INVOICE]);
    const doc = parseXml(xml);
    const hrefs = select(
      doc,
      '/smp:ServiceGroup/smp:ServiceMetadataReferenceCollection/smp:ServiceMetadataReference/@href',
      NS,
    ).map((n) => n.nodeValue);
    expect(hrefs).toEqual([
      'http://smp.example/base/iso6523-actorid-upis%3A%3A0088%3A123/services/busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1',
    ]);
    expect(documentTypeFromHref(hrefs[0] as string)).toEqual(INVOICE);
  });

  it('signs service metadata the way Peppol SMPs do (RSA-SHA256, exclusive C14N, enveloped, subject + certificate)', () => {
    const xml = buildServiceMetadataXml(peppolParticipant('0088:123'), INVOICE, [
      {
        process: processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'),
        endpoints: [
          {
            transportProfile: TRANSPORT_PROFILE_AS4_V2,
            url: 'https://ap.example/as4',
            certificate: pki.apReceiver.certificate,
          },
        ],
      },
    ]);
    const signed = parseXml(signServiceMetadata(xml, pki.smp));
    const sig = select(signed, '/smp:SignedServiceMetadata/ds:Signature', NS)[0];
    if (!sig) throw new Error('no signature');
    expect(text(sig, 'ds:SignedInfo/ds:SignatureMethod/@Algorithm', NS)).toBe(
      'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    );
    expect(text(sig, 'ds:SignedInfo/ds:CanonicalizationMethod/@Algorithm', NS)).toBe(
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    );
    expect(text(sig, 'ds:SignedInfo/ds:Reference/@URI', NS)).toBe('');
    expect(
      select(sig, 'ds:SignedInfo/ds:Reference/ds:Transforms/ds:Transform/@Algorithm', NS).map((n) => n.nodeValue),
    ).toEqual(['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#']);
    expect(text(sig, 'ds:KeyInfo/ds:X509Data/ds:X509SubjectName', NS)).toBe(
      'CN=PSM000001,OU=PEPPOL TEST SMP,O=Invoice Gateway,C=NL',
    );
    expect(text(sig, 'ds:KeyInfo/ds:X509Data/ds:X509Certificate', NS)).toBe(pki.smp.certificate.raw.toString('base64'));
    expect(text(signed, '//smp:Endpoint/smp:Certificate', NS)).toBe(pki.apReceiver.certificate.raw.toString('base64'));
    expect(text(signed, '//smp:Endpoint/wsa:EndpointReference/wsa:Address', NS)).toBe('https://ap.example/as4');
    // A 2048-bit RSA signature; that it verifies is checked end to end in the SMP client tests.
    expect(Buffer.from(text(sig, 'ds:SignatureValue', NS) ?? '', 'base64')).toHaveLength(256);
  });

  it('writes certificate subjects in RFC 2253 form with escaping', () => {
    expect(rfc2253Subject(pki.apSender.certificate)).toBe('CN=POP000001,OU=PEPPOL TEST AP,O=Invoice Gateway,C=NL');
  });
});

describe('documentTypeFromHref', () => {
  const enc = encodeURIComponent(`${INVOICE.scheme}::${INVOICE.value}`);
  it.each([
    [`http://smp/a%3A%3Ab/services/${enc}`, INVOICE],
    [`https://smp/x/y/iso6523-actorid-upis%3A%3A0088%3A1/services/${encodeURIComponent(enc)}`, INVOICE],
    ['http://smp/p/services/not-an-id', undefined],
    ['http://smp/p/no-services-segment', undefined],
    ['not a url', undefined],
    ['http://smp/p/services/busdox-docid-qns%3A%3Aurn%3Ax%3A%3AX', undefined],
  ])('%s', (href, want) => expect(documentTypeFromHref(href)).toEqual(want));
});
