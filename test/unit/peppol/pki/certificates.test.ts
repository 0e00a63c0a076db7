import { X509Certificate } from 'node:crypto';
import {
  AP_KEY_USAGES,
  SMP_KEY_USAGES,
  assertCertificateValid,
  checkCertificate,
  type CertificateCheck,
} from '../../../../src/peppol/pki/cert-validation';
import {
  commonNameOf,
  keyUsagesOf,
  parseCertificate,
  parseCertificates,
  subjectMatches,
} from '../../../../src/peppol/pki/certificates';
import { PeppolError } from '../../../../src/peppol/peppol-error';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  type TestPki,
} from '../../../support/peppol/test-pki';
import { x509 } from '../../../../src/peppol/pki/x509-lib';
import { testPki } from '../../../support/peppol/pki-fixture';

const DAY = 86_400_000;
let pki: TestPki;
beforeAll(async () => {
  pki = await testPki();
}, 60_000);

const apPolicy = () => ({ anchors: [pki.apCa.certificate], requiredKeyUsages: AP_KEY_USAGES, role: 'access point' });

function problemOf(r: CertificateCheck): string {
  return r.valid ? 'valid' : r.problem;
}

describe('test PKI shape', () => {
  it('issues G3-like AP certificates: CN = Seat ID, key usages, client auth, end entity', () => {
    const c = pki.apSender.certificate;
    expect(commonNameOf(c)).toBe('POP000001');
    expect(commonNameOf(pki.apReceiver.certificate)).toBe('POP000002');
    expect(c.ca).toBe(false);
    expect(keyUsagesOf(c)).toEqual(['digitalSignature', 'keyEncipherment', 'dataEncipherment']);
    expect(c.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(pki.apCa.certificate.ca).toBe(true);
    expect(keyUsagesOf(pki.apCa.certificate)).toEqual(['keyCertSign', 'cRLSign']);
    expect(pki.apSender.chain.map((x) => x.fingerprint256)).toEqual([
      pki.apCa.certificate.fingerprint256,
      pki.rootCa.certificate.fingerprint256,
    ]);
    const sig = new x509.X509Certificate(c.raw).signatureAlgorithm;
    expect(sig).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(c.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('has two sender certificates valid at the same time (rollover)', () => {
    const now = new Date();
    for (const m of [pki.apSender, pki.apSenderNext]) {
      expect(new Date(m.certificate.validFrom) <= now && now <= new Date(m.certificate.validTo)).toBe(true);
    }
    expect(pki.apSender.certificate.fingerprint256).not.toBe(pki.apSenderNext.certificate.fingerprint256);
  });
});

describe('checkCertificate', () => {
  it('accepts an AP certificate under the AP CA and returns the path', () => {
    const r = checkCertificate(pki.apSender.certificate, apPolicy());
    expect(r.valid && r.chain.length).toBe(2);
    expect(r.valid && r.revocationChecked).toBe(false);
    expect(
      problemOf(
        checkCertificate(pki.smp.certificate, { anchors: [pki.smpCa.certificate], requiredKeyUsages: SMP_KEY_USAGES }),
      ),
    ).toBe('valid');
  });

  it('accepts a root as anchor when the intermediate is supplied, and refuses without it', () => {
    const policy = { anchors: [pki.rootCa.certificate], requiredKeyUsages: AP_KEY_USAGES };
    const r = checkCertificate(pki.apSender.certificate, policy, new Date(), [
      pki.apCa.certificate,
      pki.smpCa.certificate,
    ]);
    expect(r.valid && r.chain.map(commonNameOf)).toEqual([
      'POP000001',
      'Invoice Gateway ACCESS POINT TEST CA',
      'Invoice Gateway Root TEST CA',
    ]);
    expect(problemOf(checkCertificate(pki.apSender.certificate, policy))).toBe('untrusted');
  });

  it('refuses an SMP certificate where an AP certificate is expected, and the other way round', () => {
    const r = checkCertificate(pki.smp.certificate, apPolicy());
    expect(problemOf(r)).toBe('untrusted');
    expect(!r.valid && r.message).toMatch(/^access point certificate "PSM000001".*not issued by a configured CA/);
    expect(problemOf(checkCertificate(pki.apSender.certificate, { anchors: [pki.smpCa.certificate] }))).toBe(
      'untrusted',
    );
  });

  it('checks the validity period at the given instant', () => {
    const c = pki.apSender.certificate;
    expect(problemOf(checkCertificate(c, apPolicy(), new Date(new Date(c.validFrom).getTime() - 1000)))).toBe(
      'not-yet-valid',
    );
    const r = checkCertificate(c, apPolicy(), new Date(new Date(c.validTo).getTime() + 1000));
    expect(problemOf(r)).toBe('expired');
    expect(!r.valid && r.message).toMatch(/expired on/);
  });

  it('refuses an expired leaf and a leaf under an expired CA', async () => {
    const old = await issueCertificate(pki.apCa, {
      subject: apSubject('POP000009'),
      notBefore: new Date(Date.now() - 400 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    expect(problemOf(checkCertificate(old.certificate, apPolicy()))).toBe('expired');

    const root = await createRootCa({ subject: 'C=NL, O=T, CN=Short Root' });
    const ca = await createIntermediateCa(root, {
      subject: 'C=NL, O=T, CN=Short AP CA',
      notBefore: new Date(Date.now() - 10 * DAY),
      notAfter: new Date(Date.now() + DAY),
    });
    const leaf = await issueCertificate(ca, { subject: apSubject('POP000010') });
    const later = new Date(Date.now() + 2 * DAY);
    const r = checkCertificate(leaf.certificate, { anchors: [ca.certificate] }, later);
    expect(problemOf(r)).toBe('issuer-not-valid');
    expect(problemOf(checkCertificate(leaf.certificate, { anchors: [ca.certificate] }))).toBe('valid');
  }, 30_000);

  it('refuses a certificate whose signature does not verify with the named issuer', () => {
    const der = Buffer.from(pki.apSender.certificate.raw);
    der[der.length - 1] = (der[der.length - 1] as number) ^ 0xff;
    const forged = new X509Certificate(der);
    expect(problemOf(checkCertificate(forged, apPolicy()))).toBe('bad-signature');
  });

  it('refuses a look-alike CA with the same name but another key', async () => {
    const fakeRoot = await createRootCa({ subject: 'C=NL, O=Evil, CN=Evil Root' });
    const fakeCa = await createIntermediateCa(fakeRoot, {
      subject: pki.apCa.certificate.subject.split('\n').join(', '),
    });
    const leaf = await issueCertificate(fakeCa, { subject: apSubject('POP000001') });
    // The authority key identifier points at the look-alike's key, so the real AP CA is not even a candidate issuer.
    expect(problemOf(checkCertificate(leaf.certificate, apPolicy()))).toBe('untrusted');
  }, 30_000);

  it('refuses CA certificates and missing key usages', async () => {
    expect(problemOf(checkCertificate(pki.apCa.certificate, apPolicy()))).toBe('is-ca');
    const signOnly = await issueCertificate(pki.apCa, {
      subject: apSubject('POP000011'),
      keyUsages: x509.KeyUsageFlags.digitalSignature,
    });
    const r = checkCertificate(signOnly.certificate, apPolicy());
    expect(problemOf(r)).toBe('key-usage');
    expect(!r.valid && r.message).toMatch(/does not allow keyEncipherment/);
    expect(
      problemOf(
        checkCertificate(signOnly.certificate, { anchors: [pki.apCa.certificate], requiredKeyUsages: SMP_KEY_USAGES }),
      ),
    ).toBe('valid');
  }, 30_000);

  it('assertCertificateValid throws a PeppolError with the problem', () => {
    try {
      assertCertificateValid(pki.smp.certificate, apPolicy());
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(PeppolError);
      expect((e as PeppolError).reason).toBe('certificate-invalid');
      expect((e as PeppolError).details).toMatchObject({
        problem: 'untrusted',
        serialNumber: pki.smp.certificate.serialNumber,
      });
    }
  });
});

describe('certificate helpers', () => {
  it('parses PEM, DER and bare base64 (as in SMP responses)', () => {
    const c = pki.apReceiver.certificate;
    expect(parseCertificate(c.toString()).fingerprint256).toBe(c.fingerprint256);
    expect(parseCertificate(c.raw).fingerprint256).toBe(c.fingerprint256);
    expect(parseCertificate(`\n  ${c.raw.toString('base64').replace(/(.{64})/g, '$1\n')}  `).fingerprint256).toBe(
      c.fingerprint256,
    );
    expect(parseCertificates(`${c.toString()}junk\n${pki.apCa.certificate.toString()}`)).toHaveLength(2);
  });

  it('matches a distinguished name text against a subject, in any order and case of values', () => {
    const c = pki.smp.certificate;
    expect(subjectMatches(c, 'CN=PSM000001, OU=PEPPOL TEST SMP, O=Invoice Gateway, C=NL')).toBe(true);
    expect(subjectMatches(c, 'C=NL,O=invoice gateway,OU=PEPPOL TEST SMP,CN=PSM000001')).toBe(true);
    expect(subjectMatches(c, 'CN=PSM000001, O=Invoice Gateway, C=NL')).toBe(false);
    expect(subjectMatches(c, 'CN=PSM000002, OU=PEPPOL TEST SMP, O=Invoice Gateway, C=NL')).toBe(false);
    expect(subjectMatches(c, 'not a dn')).toBe(false);
  });
});
