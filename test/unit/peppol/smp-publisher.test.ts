/**
 * Our SMP's documents, the SML registrar's records and the lookup's ranking, without servers. Signatures are checked
 * with xml-crypto against the SMP certificate; the HTTP path is covered by test/integration/peppol-directory.test.ts.
 */
import type { Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { parseXml, select } from '../../../src/formats/xml/secure-parser';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../src/peppol/identifiers';
import { useCorrectC14n } from '../../../src/peppol/c14n';
import type { TestPki } from '../../support/peppol/test-pki';
import { failureCategory, familyRank } from '../../../src/peppol/recipient-lookup';
import { applyNaptrRegexp, naptrName } from '../../../src/peppol/sml';
import {
  DnsZoneSmlRegistrar,
  ManualSmlRegistrar,
  UnconfiguredSmlRegistrar,
  smpNaptrRecord,
} from '../../../src/peppol/sml-registrar';
import {
  BILLING_PROCESS,
  BIS3_CREDIT_NOTE,
  BIS3_INVOICE,
  MLS_DOCUMENT_TYPE,
  MLS_PROCESS,
  SmpPublisher,
  currentCertificate,
} from '../../../src/peppol/smp-publisher';
import * as smpDocuments from '../../../src/peppol/smp-documents';
import { DSIG_NS } from '../../../src/peppol/smp-documents';
import { testPki } from '../../support/peppol/pki-fixture';

let pki: TestPki;
beforeAll(async () => {
  pki = await testPki();
}, 120_000);

const who = peppolParticipant('0106:12345678');

describe('SmpPublisher', () => {
  it('lists the document types with hrefs under its public URL and signs metadata over the whole document', () => {
    const publisher = new SmpPublisher({
      publicUrl: 'https://smp.example.test/smp/',
      signer: pki.smp,
      endpointUrl: 'https://ap.example.test/as4',
      apCertificates: [pki.apReceiver.certificate],
    });
    const p = { participant: who, services: [{ documentType: BIS3_INVOICE, processes: [BILLING_PROCESS] }] };
    const group = publisher.serviceGroupXml(p);
    expect(group).toContain(
      'href="https://smp.example.test/smp/iso6523-actorid-upis%3A%3A0106%3A12345678/services/busdox-docid-qns%3A%3Aurn%3Aoasis',
    );

    const signed = publisher.serviceMetadataXml(p, BIS3_INVOICE) as string;
    expect(signed).toContain('<wsa:Address>https://ap.example.test/as4</wsa:Address>');
    expect(signed).toContain(pki.apReceiver.certificate.raw.toString('base64'));
    const sig = useCorrectC14n(new SignedXml({ publicCert: pki.smp.certificate.toString() }));
    const doc = parseXml(Buffer.from(signed, 'utf8'));
    sig.loadSignature(select(doc.documentElement as Element, 'ds:Signature', { ds: DSIG_NS })[0] as never);
    expect(sig.checkSignature(signed)).toBe(true);
    expect(sig.checkSignature(signed.replace('https://ap.example.test/as4', 'https://attacker.test/as4'))).toBe(false);

    expect(publisher.serviceMetadataXml(p, BIS3_CREDIT_NOTE)).toBeUndefined();
  });

  it('serves repeated requests from its cache, and a changed entry gets a fresh signature', () => {
    const publisher = new SmpPublisher({
      publicUrl: 'https://smp.test',
      signer: pki.smp,
      endpointUrl: 'https://ap.test/as4',
      apCertificates: [pki.apReceiver.certificate],
      cacheSize: 1,
    });
    const signing = jest.spyOn(smpDocuments, 'signServiceMetadata');
    const one = { participant: who, services: [{ documentType: BIS3_INVOICE, processes: [BILLING_PROCESS] }] };
    const first = publisher.serviceMetadataXml(one, BIS3_INVOICE) as string;
    expect(publisher.serviceMetadataXml(one, BIS3_INVOICE)).toBe(first);
    expect(signing).toHaveBeenCalledTimes(1);
    const other = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:poacc:bis:ordering:3');
    const changed = publisher.serviceMetadataXml(
      { participant: who, services: [{ documentType: BIS3_INVOICE, processes: [BILLING_PROCESS, other] }] },
      BIS3_INVOICE,
    ) as string;
    expect(changed).not.toBe(first);
    expect(changed).toContain('urn:fdc:peppol.eu:poacc:bis:ordering:3');
    // Evicted (cache size 1) and signed again: the same bytes, since the signature is deterministic.
    expect(publisher.serviceMetadataXml(one, BIS3_INVOICE)).toBe(first);
    expect(signing).toHaveBeenCalledTimes(3);
    signing.mockRestore();
  });

  it('publishes the newest valid AP certificate during a rollover, and refuses when none is valid', () => {
    const certs = [pki.apSender.certificate, pki.apSenderNext.certificate];
    const newer =
      new Date(pki.apSenderNext.certificate.validFrom) > new Date(pki.apSender.certificate.validFrom)
        ? pki.apSenderNext
        : pki.apSender;
    expect(currentCertificate(certs, new Date())?.fingerprint256).toBe(newer.certificate.fingerprint256);
    expect(currentCertificate(certs, new Date('2001-01-01T00:00:00Z'))).toBeUndefined();

    const expired = new SmpPublisher({
      publicUrl: 'https://smp.test',
      signer: pki.smp,
      endpointUrl: 'https://ap.test/as4',
      apCertificates: certs,
      now: () => new Date('2100-01-01T00:00:00Z'),
    });
    expect(() =>
      expired.serviceMetadataXml(
        { participant: who, services: [{ documentType: BIS3_INVOICE, processes: [BILLING_PROCESS] }] },
        BIS3_INVOICE,
      ),
    ).toThrow(/no configured access point certificate is valid/);
  });
});

describe('SML registrars', () => {
  it('writes the U-NAPTR record whose regexp gives back the SMP URL, under the participant hash name', async () => {
    const zone = new Map<string, unknown[]>();
    const registrar = new DnsZoneSmlRegistrar('sml.example.test', {
      setRecords: (n, r) => void zone.set(n, r),
      removeRecords: (n) => void zone.delete(n),
    });
    await registrar.register(who, 'https://smp.example.test/smp/');
    const name = naptrName(who, 'sml.example.test');
    const [record] = zone.get(name) as Array<{ flags: string; service: string; regexp: string }>;
    expect(record).toMatchObject({ flags: 'U', service: 'Meta:SMP' });
    expect(applyNaptrRegexp(record!.regexp, name)).toBe('https://smp.example.test/smp');
    await registrar.unregister(who);
    expect(zone.has(name)).toBe(false);
  });

  it('refuses SMP URLs a NAPTR record cannot carry', () => {
    expect(() => smpNaptrRecord('ftp://smp.test')).toThrow(/not http/);
    expect(() => smpNaptrRecord('not a url')).toThrow(/not a URL/);
    expect(() => smpNaptrRecord('https://smp.test/a!b')).toThrow(/"!"/);
  });

  it('manual accepts and does nothing; off refuses with what to configure', async () => {
    await expect(new ManualSmlRegistrar().register()).resolves.toBeUndefined();
    await expect(new UnconfiguredSmlRegistrar().register(who)).rejects.toMatchObject({
      code: 'NOT_IMPLEMENTED',
      message: expect.stringMatching(/PEPPOL_SML_REGISTRAR/),
    });
  });
});

describe('recipient lookup ranking and reasons', () => {
  const d = (value: string) => documentTypeId(DOCTYPE_SCHEME_BUSDOX, value);
  it('ranks the invoice family: BIS Billing 3, EN 16931 UBL, other UBL, CII; others are not in it', () => {
    expect(familyRank(BIS3_INVOICE, false)).toBe(0);
    expect(familyRank(BIS3_CREDIT_NOTE, false)).toBeUndefined();
    expect(familyRank(BIS3_CREDIT_NOTE, true)).toBe(0);
    expect(
      familyRank(
        d(
          'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1',
        ),
        false,
      ),
    ).toBe(1);
    expect(
      familyRank(
        d('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1::2.1'),
        false,
      ),
    ).toBe(2);
    const cii = d(
      'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice##urn:cen.eu:en16931:2017::D16B',
    );
    expect([familyRank(cii, false), familyRank(cii, true)]).toEqual([3, 3]);
    expect(
      familyRank(
        d('urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1'),
        false,
      ),
    ).toBeUndefined();
  });

  it('maps every precise reason to one of the categories callers act on', () => {
    expect(failureCategory('participant-not-registered')).toBe('participant-unknown');
    expect(failureCategory('participant-unknown')).toBe('participant-unknown');
    expect(failureCategory('endpoint-not-active')).toBe('document-type-not-supported');
    expect(failureCategory('dns-failure')).toBe('smp-unreachable');
    expect(failureCategory('smp-signature-invalid')).toBe('certificate-problem');
    expect(failureCategory('endpoint-certificate-invalid')).toBe('certificate-problem');
    expect(failureCategory('invalid-identifier')).toBe('invalid-identifier');
  });
});

describe('the MLS service our SMP publishes for our service provider id', () => {
  it("is the Peppol code lists' MLS 1.0 document type and process", () => {
    expect(MLS_DOCUMENT_TYPE).toEqual({
      scheme: 'busdox-docid-qns',
      value:
        'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1',
    });
    expect(MLS_PROCESS).toEqual({ scheme: 'cenbii-procid-ubl', value: 'urn:peppol:edec:mls' });
  });
});
