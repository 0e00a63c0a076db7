/**
 * The SMP client against small real SMPs on 127.0.0.1 that sign with the test SMP key, found through a real local DNS
 * zone: the whole discovery path SML → SMP → endpoint, and each way it can fail.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignedXml } from 'xml-crypto';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  peppolParticipant,
  processId,
  type DocumentTypeId,
  type ParticipantId,
} from '../../src/peppol/identifiers';
import { PeppolError } from '../../src/peppol/peppol-error';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { RevocationChecker } from '../../src/peppol/pki/revocation';
import {
  TEST_CRL_BASE_URL,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  issueCrl,
  apSubject,
  type TestPki,
} from '../support/peppol/test-pki';
import { SmpClient } from '../../src/peppol/smp-client';
import {
  buildServiceMetadataXml,
  rfc2253Subject,
  type SmpEndpointInput,
  type SmpProcessInput,
} from '../../src/peppol/smp-documents';
import { createDnsResolver, lookupSmp, naptrName } from '../../src/peppol/sml';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { startCrlServer } from '../support/peppol/crl-server';
import { testPki } from '../support/peppol/pki-fixture';

const DAY = 86_400_000;
const ZONE = 'participant.sml.gateway.test';
const INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const CREDIT_NOTE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const BILLING = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
const AS4_URL = 'http://127.0.0.1:9/as4';

let pki: TestPki;
let smp2: KeyMaterial;
let expiredSmp: KeyMaterial;
let foreignAp: KeyMaterial;
let expiredAp: KeyMaterial;
let dns: LocalDnsZone;
let smp: LocalSmp;
let other: LocalSmp;
let client: SmpClient;

function as4(cert = pki.apReceiver.certificate, extra: Partial<SmpEndpointInput> = {}): SmpEndpointInput {
  return {
    transportProfile: TRANSPORT_PROFILE_AS4_V2,
    url: AS4_URL,
    certificate: cert,
    technicalContactUrl: 'mailto:ops@example.test',
    ...extra,
  };
}
const billing = (...endpoints: SmpEndpointInput[]): SmpProcessInput[] => [{ process: BILLING, endpoints }];

async function refusal(p: Promise<unknown>): Promise<PeppolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

beforeAll(async () => {
  pki = await testPki();
  const foreignRoot = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  const foreignCa = await createIntermediateCa(foreignRoot, { subject: 'C=NL, O=Elsewhere, CN=Foreign AP CA' });
  [smp2, expiredSmp, foreignAp, expiredAp] = await Promise.all([
    issueCertificate(pki.smpCa, { subject: 'C=NL, O=Invoice Gateway, OU=PEPPOL TEST SMP, CN=PSM000002' }),
    issueCertificate(pki.smpCa, {
      subject: 'C=NL, O=Invoice Gateway, OU=PEPPOL TEST SMP, CN=PSM000003',
      notBefore: new Date(Date.now() - 800 * DAY),
      notAfter: new Date(Date.now() - DAY),
    }),
    issueCertificate(foreignCa, { subject: apSubject('POP000002') }),
    issueCertificate(pki.apCa, {
      subject: apSubject('POP000002'),
      notBefore: new Date(Date.now() - 800 * DAY),
      notAfter: new Date(Date.now() - DAY),
    }),
  ]);
  dns = await new LocalDnsZone().start();
  smp = await new LocalSmp(pki.smp, '/smp').start();
  other = await new LocalSmp(smp2).start();
  client = new SmpClient({
    smpCertificateAuthorities: [pki.smpCa.certificate],
    apCertificateAuthorities: [pki.apCa.certificate],
    timeoutMs: 1500,
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([dns?.stop(), smp?.stop(), other?.stop()]);
});

describe('discovery through SML and SMP', () => {
  it('finds the AS4 endpoint and receiver certificate of a participant, from its DNS name to the signed metadata', async () => {
    const receiver = peppolParticipant('0088:5060210000007');
    dns.set(naptrName(receiver, ZONE), [
      { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
    ]);
    smp.publish(receiver, INVOICE, [
      { process: processId(PROCESS_SCHEME, 'urn:other:process'), endpoints: [as4(pki.apSender.certificate)] },
      {
        process: BILLING,
        endpoints: [
          { ...as4(), transportProfile: 'busdox-transport-as2-ver1p0', url: 'http://127.0.0.1:9/as2' },
          as4(pki.apReceiver.certificate, {
            serviceActivationDate: new Date(Date.now() - DAY),
            serviceExpirationDate: new Date(Date.now() + DAY),
          }),
        ],
      },
    ]);
    smp.publish(receiver, CREDIT_NOTE, billing(as4()));

    const { smpUrl } = await lookupSmp(peppolParticipant('0088:5060210000007'), {
      zone: ZONE,
      resolver: createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 }),
    });
    expect(smpUrl).toBe(smp.url);

    const group = await client.getServiceGroup(smpUrl, receiver);
    expect(group.documentTypes).toEqual([INVOICE, CREDIT_NOTE]);
    expect(group.unreadableReferences).toEqual([]);

    const found = await client.lookupEndpoint(smpUrl, receiver, INVOICE, BILLING);
    expect(found.endpoint.url).toBe(AS4_URL);
    expect(found.endpoint.transportProfile).toBe('peppol-transport-as4-v2_0');
    expect(found.endpoint.certificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
    expect(found.endpoint.technicalContactUrl).toBe('mailto:ops@example.test');
    expect(found.endpoint.requireBusinessLevelSignature).toBe(false);
    expect(found.metadata.signer.fingerprint256).toBe(pki.smp.certificate.fingerprint256);
    expect(found.metadata.redirected).toBe(false);
    // Percent-encoded identifiers in the path, as the SMP specification wants.
    expect(smp.requests).toContain(
      '/smp/iso6523-actorid-upis%3A%3A0088%3A5060210000007/services/busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1',
    );
  });
});

describe('precise failure reasons', () => {
  const p = (v: string): ParticipantId => peppolParticipant(`9915:${v}`);

  it('participant unknown: the SMP does not know the participant', async () => {
    const e1 = await refusal(client.getServiceGroup(smp.url, p('nobody')));
    expect([e1.reason, e1.code]).toEqual(['participant-unknown', 'NOT_FOUND']);
    const e2 = await refusal(client.lookupEndpoint(smp.url, p('nobody'), INVOICE, BILLING));
    expect(e2.reason).toBe('participant-unknown');
  });

  it('document type not supported, process not supported, no AS4 endpoint, endpoint not active', async () => {
    smp.publish(p('cn-only'), CREDIT_NOTE, billing(as4()));
    expect((await refusal(client.lookupEndpoint(smp.url, p('cn-only'), INVOICE, BILLING))).reason).toBe(
      'document-type-not-supported',
    );

    const e = await refusal(
      client.lookupEndpoint(smp.url, p('cn-only'), CREDIT_NOTE, processId(PROCESS_SCHEME, 'urn:x:other')),
    );
    expect(e.reason).toBe('process-not-supported');
    expect(e.details).toMatchObject({ available: ['cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'] });

    smp.publish(p('as2-only'), INVOICE, billing({ ...as4(), transportProfile: 'busdox-transport-as2-ver1p0' }));
    expect((await refusal(client.lookupEndpoint(smp.url, p('as2-only'), INVOICE, BILLING))).reason).toBe(
      'transport-profile-not-supported',
    );

    smp.publish(p('retired'), INVOICE, billing(as4(undefined, { serviceExpirationDate: new Date(Date.now() - DAY) })));
    expect((await refusal(client.lookupEndpoint(smp.url, p('retired'), INVOICE, BILLING))).reason).toBe(
      'endpoint-not-active',
    );
    smp.publish(p('future'), INVOICE, billing(as4(undefined, { serviceActivationDate: new Date(Date.now() + DAY) })));
    expect((await refusal(client.lookupEndpoint(smp.url, p('future'), INVOICE, BILLING))).reason).toBe(
      'endpoint-not-active',
    );
  });

  it('SMP unreachable: refused connection, HTTP 5xx, no answer in time — all retryable', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await refusal(client.lookupEndpoint(`http://127.0.0.1:${port}`, p('x'), INVOICE, BILLING));
    expect([refused.reason, refused.code, refused.retryable]).toEqual([
      'smp-unreachable',
      'DEPENDENCY_UNAVAILABLE',
      true,
    ]);

    smp.register(p('down'));
    smp.override(`/iso6523-actorid-upis::9915:down/services/${INVOICE.scheme}::${INVOICE.value}`, (res) =>
      res.writeHead(503).end('maintenance'),
    );
    const down = await refusal(client.lookupEndpoint(smp.url, p('down'), INVOICE, BILLING));
    expect([down.reason, down.retryable]).toEqual(['smp-unreachable', true]);

    smp.override(`/iso6523-actorid-upis::9915:silent`, () => undefined);
    const t0 = Date.now();
    const silent = await refusal(client.getServiceGroup(smp.url, p('silent')));
    expect([silent.reason, silent.retryable]).toEqual(['smp-unreachable', true]);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('certificate problem: unsigned, tampered, signed by a non-SMP or expired certificate', async () => {
    smp.publish(p('unsigned'), INVOICE, billing(as4()), { signer: null });
    expect((await refusal(client.lookupEndpoint(smp.url, p('unsigned'), INVOICE, BILLING))).reason).toBe(
      'smp-signature-invalid',
    );

    // Someone on the path points the endpoint elsewhere after signing.
    smp.publish(p('tampered'), INVOICE, billing(as4()), {
      mutate: (xml) => xml.replace(AS4_URL, 'http://127.0.0.1:9/attacker'),
    });
    const tampered = await refusal(client.lookupEndpoint(smp.url, p('tampered'), INVOICE, BILLING));
    expect(tampered.reason).toBe('smp-signature-invalid');
    expect(tampered.message).toMatch(/does not verify/);

    smp.publish(p('ap-signed'), INVOICE, billing(as4()), { signer: pki.apSender });
    const apSigned = await refusal(client.lookupEndpoint(smp.url, p('ap-signed'), INVOICE, BILLING));
    expect([apSigned.reason, apSigned.details?.problem]).toEqual(['smp-certificate-untrusted', 'untrusted']);

    smp.publish(p('old-smp'), INVOICE, billing(as4()), { signer: expiredSmp });
    const old = await refusal(client.lookupEndpoint(smp.url, p('old-smp'), INVOICE, BILLING));
    expect([old.reason, old.details?.problem]).toEqual(['smp-certificate-untrusted', 'expired']);
  });

  it('certificate problem: the endpoint certificate is not a valid AP certificate', async () => {
    smp.publish(p('foreign-ap'), INVOICE, billing(as4(foreignAp.certificate)));
    const foreign = await refusal(client.lookupEndpoint(smp.url, p('foreign-ap'), INVOICE, BILLING));
    expect([foreign.reason, foreign.details?.problem]).toEqual(['endpoint-certificate-invalid', 'untrusted']);

    smp.publish(p('expired-ap'), INVOICE, billing(as4(expiredAp.certificate)));
    const expired = await refusal(client.lookupEndpoint(smp.url, p('expired-ap'), INVOICE, BILLING));
    expect([expired.reason, expired.details?.problem]).toEqual(['endpoint-certificate-invalid', 'expired']);

    smp.publish(p('smp-cert-as-ap'), INVOICE, billing(as4(pki.smp.certificate)));
    expect((await refusal(client.lookupEndpoint(smp.url, p('smp-cert-as-ap'), INVOICE, BILLING))).reason).toBe(
      'endpoint-certificate-invalid',
    );
  });

  it('refuses a validly signed answer about another participant (replayed metadata)', async () => {
    smp.publish(p('victim'), INVOICE, billing(as4()), { answerFor: p('someone-else') });
    const e = await refusal(client.lookupEndpoint(smp.url, p('victim'), INVOICE, BILLING));
    expect(e.reason).toBe('smp-response-invalid');
    expect(e.message).toMatch(/answered for participant iso6523-actorid-upis::9915:someone-else/);
  });

  it('refuses a signature that covers only part of the document', async () => {
    const partial = (xml: string): string => {
      const sig = new SignedXml({
        privateKey: pki.smp.privateKey.export({ format: 'pem', type: 'pkcs8' }),
        publicCert: pki.smp.certificate.toString(),
      });
      sig.signatureAlgorithm = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
      sig.canonicalizationAlgorithm = 'http://www.w3.org/2001/10/xml-exc-c14n#';
      sig.addReference({
        xpath: "//*[local-name(.)='ProcessList']",
        transforms: ['http://www.w3.org/2001/10/xml-exc-c14n#'],
        digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
      });
      sig.computeSignature(xml, { location: { reference: '/*', action: 'append' } });
      return sig.getSignedXml();
    };
    smp.publish(p('partial'), INVOICE, billing(as4()), { signer: null, mutate: (xml) => partial(xml) });
    const e = await refusal(client.lookupEndpoint(smp.url, p('partial'), INVOICE, BILLING));
    expect(e.reason).toBe('smp-signature-invalid');
    expect(e.message).toMatch(/whole document/);
  });

  it('refuses an oversized response', async () => {
    const small = new SmpClient({ smpCertificateAuthorities: [pki.smpCa.certificate], maxResponseBytes: 512 });
    smp.publish(p('big'), INVOICE, billing(as4()));
    const e = await refusal(small.lookupEndpoint(smp.url, p('big'), INVOICE, BILLING));
    expect(e.reason).toBe('smp-response-invalid');
    expect(e.message).toMatch(/exceeds 512 bytes/);
  });
});

describe('older SMP signatures', () => {
  it('accepts RSA-SHA1 with inclusive C14N, as some SMPs still sign', async () => {
    const legacy = (xml: string): string => {
      const sig = new SignedXml({
        privateKey: pki.smp.privateKey.export({ format: 'pem', type: 'pkcs8' }),
        publicCert: pki.smp.certificate.toString(),
        signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
        canonicalizationAlgorithm: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
      });
      sig.addReference({
        xpath: '/*',
        transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature'],
        digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
        isEmptyUri: true,
      });
      sig.computeSignature(xml, { location: { reference: '/*', action: 'append' } });
      return sig.getSignedXml();
    };
    const who = peppolParticipant('9915:legacy-signer');
    smp.publish(who, INVOICE, billing(as4()), {
      signer: null,
      mutate: () => legacy(buildServiceMetadataXml(who, INVOICE, billing(as4()))),
    });
    const found = await client.lookupEndpoint(smp.url, who, INVOICE, BILLING);
    expect(found.endpoint.url).toBe(AS4_URL);
  });
});

describe('redirects', () => {
  const who = (v: string): ParticipantId => peppolParticipant(`9915:moved-${v}`);
  const resource = (smpUrl: string, p: ParticipantId, d: DocumentTypeId): string =>
    `${smpUrl}/${encodeURIComponent(`${p.scheme}::${p.value}`)}/services/${encodeURIComponent(`${d.scheme}::${d.value}`)}`;

  it('follows one redirect to an SMP whose certificate the redirect names', async () => {
    other.publish(who('ok'), INVOICE, billing(as4()));
    smp.redirect(who('ok'), INVOICE, resource(other.url, who('ok'), INVOICE), rfc2253Subject(smp2.certificate));
    const found = await client.lookupEndpoint(smp.url, who('ok'), INVOICE, BILLING);
    expect(found.metadata.redirected).toBe(true);
    expect(found.metadata.url).toBe(resource(other.url, who('ok'), INVOICE));
    expect(found.metadata.signer.fingerprint256).toBe(smp2.certificate.fingerprint256);
    expect(found.endpoint.certificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
  });

  it('refuses a redirect whose target is signed by another certificate than named', async () => {
    other.publish(who('uid'), INVOICE, billing(as4()));
    smp.redirect(who('uid'), INVOICE, resource(other.url, who('uid'), INVOICE), rfc2253Subject(pki.smp.certificate));
    const e = await refusal(client.lookupEndpoint(smp.url, who('uid'), INVOICE, BILLING));
    expect(e.reason).toBe('smp-redirect-invalid');
    expect(e.message).toMatch(/was signed by .*PSM000002/);
  });

  it('follows at most one redirect', async () => {
    other.redirect(
      who('twice'),
      INVOICE,
      resource(smp.url, who('twice'), INVOICE),
      rfc2253Subject(pki.smp.certificate),
    );
    smp.redirect(who('twice'), INVOICE, resource(other.url, who('twice'), INVOICE), rfc2253Subject(smp2.certificate));
    const e = await refusal(client.lookupEndpoint(smp.url, who('twice'), INVOICE, BILLING));
    expect(e.reason).toBe('smp-redirect-invalid');
    expect(e.message).toMatch(/redirects again/);
  });

  it("revocation: the SMP signer and the endpoint certificate are checked against their CAs' CRLs when a checker is set", async () => {
    const rp = (v: string): ParticipantId => peppolParticipant(`9915:${v}`);
    const crl = await startCrlServer();
    const revokedSmpKey = await issueCertificate(pki.smpCa, {
      subject: 'C=NL, O=Invoice Gateway, OU=PEPPOL TEST SMP, CN=PSM000009',
      crlUrls: [`${TEST_CRL_BASE_URL}/smp-ca.crl`],
    });
    const revokedSmp = await new LocalSmp(revokedSmpKey).start();
    try {
      crl.files.set('/ap-ca.crl', pki.crls.apCa);
      crl.files.set(
        '/smp-ca.crl',
        await issueCrl(pki.smpCa, { revoked: [{ certificate: revokedSmpKey.certificate }] }),
      );
      const checking = new SmpClient({
        smpCertificateAuthorities: [pki.smpCa.certificate],
        apCertificateAuthorities: [pki.apCa.certificate],
        timeoutMs: 1500,
        revocation: new RevocationChecker({ dispatcher: crl.dispatcher, timeoutMs: 1500 }),
      });

      smp.publish(rp('rev-good'), INVOICE, billing(as4()));
      expect(await checking.lookupEndpoint(smp.url, rp('rev-good'), INVOICE, BILLING)).toMatchObject({
        revocationChecked: true,
        metadata: { signerRevocationChecked: true },
      });
      expect(await client.lookupEndpoint(smp.url, rp('rev-good'), INVOICE, BILLING)).toMatchObject({
        revocationChecked: false,
        metadata: { signerRevocationChecked: false },
      });

      smp.publish(rp('rev-endpoint'), INVOICE, billing(as4(pki.apRevoked.certificate)));
      const endpoint = await refusal(checking.lookupEndpoint(smp.url, rp('rev-endpoint'), INVOICE, BILLING));
      expect([endpoint.reason, endpoint.details?.problem, endpoint.retryable]).toEqual([
        'endpoint-certificate-invalid',
        'revoked',
        false,
      ]);
      expect(endpoint.message).toMatch(/endpoint certificate of .*was revoked on .*keyCompromise/);

      revokedSmp.publish(rp('rev-smp'), INVOICE, billing(as4()));
      const signer = await refusal(checking.lookupEndpoint(revokedSmp.url, rp('rev-smp'), INVOICE, BILLING));
      expect([signer.reason, signer.details?.problem]).toEqual(['smp-certificate-untrusted', 'revoked']);
      expect(signer.message).toMatch(/PSM000009.*was revoked/);

      // The SMP CA's CRL cannot be fetched: hard fail refuses, retryable.
      crl.files.set('/smp-ca.crl', 503);
      const fresh = new SmpClient({
        smpCertificateAuthorities: [pki.smpCa.certificate],
        revocation: new RevocationChecker({ dispatcher: crl.dispatcher, timeoutMs: 1500 }),
      });
      const unknown = await refusal(fresh.lookupEndpoint(smp.url, rp('rev-good'), INVOICE, BILLING));
      expect([unknown.reason, unknown.details?.problem, unknown.retryable]).toEqual([
        'smp-certificate-untrusted',
        'revocation-unknown',
        true,
      ]);
    } finally {
      await Promise.all([crl.close(), revokedSmp.stop()]);
    }
  });
});
