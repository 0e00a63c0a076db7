/**
 * Revocation checks against a real local HTTP server serving real CRLs issued by the test PKI's CAs: good, revoked,
 * expired CRL, CRL signed by the wrong key or issued by another CA, unreachable distribution points, size cap, no
 * distribution point, and the cache (one download until nextUpdate); and a real OCSP responder on the same server
 * (CA-signed answers, unauthorised signer, error status, expired answer, unknown certificate).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  RevocationChecker,
  revocationPointsOf,
  type RevocationCheckerOptions,
} from '../../../../src/peppol/pki/revocation';
import type { KeyMaterial } from '../../../../src/peppol/pki/key-material';
import {
  TEST_CRL_BASE_URL,
  apSubject,
  issueCertificate,
  issueCrl,
  type TestPki,
} from '../../../support/peppol/test-pki';
import { startCrlServer, type CrlServer } from '../../../support/peppol/crl-server';
import { testPki } from '../../../support/peppol/pki-fixture';

const DAY = 86_400_000;
const AP_CRL = '/ap-ca.crl';

let pki: TestPki;
let server: CrlServer;

beforeAll(async () => {
  pki = await testPki();
  server = await startCrlServer();
}, 120_000);

afterAll(async () => {
  await server?.close();
});

beforeEach(() => {
  server.files.clear();
  server.hits.clear();
  server.files.set(AP_CRL, pki.crls.apCa);
  server.files.set('/smp-ca.crl', pki.crls.smpCa);
});

const checker = (o: RevocationCheckerOptions = {}) =>
  new RevocationChecker({ dispatcher: server.dispatcher, timeoutMs: 2000, ...o });

describe('RevocationChecker (CRL)', () => {
  it('reads the distribution point the test PKI puts into its certificates', () => {
    expect(revocationPointsOf(pki.apSender.certificate)).toEqual({
      crlUrls: [`${TEST_CRL_BASE_URL}/ap-ca.crl`],
      ocspUrls: [],
    });
    expect(revocationPointsOf(pki.smp.certificate).crlUrls).toEqual([`${TEST_CRL_BASE_URL}/smp-ca.crl`]);
  });

  it('reports a certificate absent from a valid CRL as good, and an SMP certificate too', async () => {
    const c = checker();
    const r = await c.status(pki.apSender.certificate, pki.apCa.certificate);
    expect(r).toMatchObject({ status: 'good', source: 'crl', url: `${TEST_CRL_BASE_URL}/ap-ca.crl` });
    expect(await c.status(pki.smp.certificate, pki.smpCa.certificate)).toMatchObject({ status: 'good' });
    const v = await c.checkChain([pki.apSender.certificate, pki.apCa.certificate]);
    expect(v).toMatchObject({
      accepted: true,
      statuses: [{ serialNumber: pki.apSender.certificate.serialNumber, result: { status: 'good' } }],
    });
    expect(v.message).toBeUndefined();
  });

  it('reports the revoked certificate with its date and reason, and refuses its chain', async () => {
    const c = checker();
    const r = await c.status(pki.apRevoked.certificate, pki.apCa.certificate);
    expect(r).toMatchObject({ status: 'revoked', reason: 'keyCompromise' });
    if (r.status !== 'revoked') throw new Error('expected revoked');
    expect(r.revokedAt.getTime()).toBeLessThan(Date.now());
    const v = await checker({ failureMode: 'soft' }).checkChain([pki.apRevoked.certificate, pki.apCa.certificate]);
    expect(v.accepted).toBe(false);
    expect(v.message).toMatch(/POP000001.*was revoked on .* \(keyCompromise\)/);
  });

  it('does not count a revocation dated after the instant checked', async () => {
    // Relative to the CRL's own revocation date: the cached test PKI may have been issued hours ago.
    const now = await checker().status(pki.apRevoked.certificate, pki.apCa.certificate);
    if (now.status !== 'revoked') throw new Error(`expected revoked, got ${now.status}`);
    const at = new Date(now.revokedAt.getTime() - 60_000);
    expect((await checker().status(pki.apRevoked.certificate, pki.apCa.certificate, at)).status).toBe('good');
    expect((await checker().status(pki.apRevoked.certificate, pki.apCa.certificate, now.revokedAt)).status).toBe(
      'revoked',
    );
  });

  it('refuses an expired CRL (nextUpdate passed): unknown, refused under hard fail, accepted with the reason under soft fail', async () => {
    server.files.set(
      AP_CRL,
      await issueCrl(pki.apCa, { thisUpdate: new Date(Date.now() - 10 * DAY), nextUpdate: new Date(Date.now() - DAY) }),
    );
    const r = await checker().status(pki.apSender.certificate, pki.apCa.certificate);
    expect(r).toMatchObject({ status: 'unknown', message: expect.stringMatching(/the CRL expired on .*nextUpdate/) });
    const chain = [pki.apSender.certificate, pki.apCa.certificate];
    expect(await checker().checkChain(chain)).toMatchObject({
      accepted: false,
      message: expect.stringMatching(/cannot be determined.*expired/),
    });
    expect(await checker({ failureMode: 'soft' }).checkChain(chain)).toMatchObject({
      accepted: true,
      message: expect.stringMatching(/expired/),
    });
  });

  it('refuses a CRL not yet valid', async () => {
    server.files.set(AP_CRL, await issueCrl(pki.apCa, { thisUpdate: new Date(Date.now() + DAY) }));
    expect(await checker().status(pki.apSender.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/not valid before/),
    });
  });

  it('refuses a CRL signed with another key, and one issued by another CA', async () => {
    server.files.set(AP_CRL, await issueCrl(pki.apCa, { revoked: [], signingKey: pki.smpCa.privateKey }));
    expect(await checker().status(pki.apRevoked.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/signature does not verify/),
    });
    server.files.set(AP_CRL, pki.crls.smpCa);
    expect(await checker().status(pki.apSender.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/issued by .*SERVICE METADATA PUBLISHER.*not by/),
    });
    server.files.set(AP_CRL, Buffer.from('not a CRL'));
    expect(await checker().status(pki.apSender.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/not a readable CRL/),
    });
  });

  it('reports unreachable distribution points, HTTP errors and oversize CRLs as unknown', async () => {
    server.files.set(AP_CRL, 503);
    expect(await checker().status(pki.apSender.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/ap-ca\.crl: HTTP 503/),
    });
    server.files.set(AP_CRL, pki.crls.apCa);
    expect(await checker({ maxCrlBytes: 100 }).status(pki.apSender.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/exceeds 100 bytes/),
    });

    // A closed port, without the redirecting dispatcher: a real connection refusal.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const cert = await issueCertificate(pki.apCa, {
      subject: apSubject('POP000009'),
      crlUrls: [`http://127.0.0.1:${port}/ap-ca.crl`],
    });
    const r = await new RevocationChecker({ timeoutMs: 2000 }).status(cert.certificate, pki.apCa.certificate);
    expect(r).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/cannot be fetched \(ECONNREFUSED\)/),
    });
  });

  it('falls back to the next distribution point when the first fails', async () => {
    const cert = await issueCertificate(pki.apCa, {
      subject: apSubject('POP000009'),
      crlUrls: [`${TEST_CRL_BASE_URL}/missing.crl`, `${TEST_CRL_BASE_URL}/ap-ca.crl`],
    });
    expect(await checker().status(cert.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'good',
      url: `${TEST_CRL_BASE_URL}/ap-ca.crl`,
    });
  });

  it('says so when a certificate names neither an OCSP responder nor a distribution point', async () => {
    const none = await issueCertificate(pki.apCa, { subject: apSubject('POP000009') });
    expect(await checker().status(none.certificate, pki.apCa.certificate)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/names neither an OCSP responder nor an http\(s\) CRL distribution point$/),
    });
    expect(server.hits.size).toBe(0);
  });

  it('downloads a CRL once and reuses it until its nextUpdate, also for concurrent checks', async () => {
    let now = new Date();
    server.files.set(
      AP_CRL,
      await issueCrl(pki.apCa, {
        revoked: [{ certificate: pki.apRevoked.certificate }],
        nextUpdate: new Date(Date.now() + DAY),
      }),
    );
    const c = checker({ now: () => now });
    const [a, b] = await Promise.all([
      c.status(pki.apSender.certificate, pki.apCa.certificate),
      c.status(pki.apRevoked.certificate, pki.apCa.certificate),
    ]);
    expect([a.status, b.status]).toEqual(['good', 'revoked']);
    expect((await c.status(pki.apSenderNext.certificate, pki.apCa.certificate)).status).toBe('good');
    expect(server.hits.get(AP_CRL)).toBe(1);
    expect(c.fetches).toBe(1);
    // After nextUpdate the CRL is fetched again (and the new one is used).
    now = new Date(Date.now() + 2 * DAY);
    server.files.set(
      AP_CRL,
      await issueCrl(pki.apCa, {
        revoked: [{ certificate: pki.apSender.certificate }],
        nextUpdate: new Date(Date.now() + 10 * DAY),
      }),
    );
    expect((await c.status(pki.apSender.certificate, pki.apCa.certificate, now)).status).toBe('revoked');
    expect(server.hits.get(AP_CRL)).toBe(2);
  });

  it('keeps at most maxCacheEntries CRLs', async () => {
    const c = checker({ maxCacheEntries: 1 });
    await c.status(pki.apSender.certificate, pki.apCa.certificate);
    await c.status(pki.smp.certificate, pki.smpCa.certificate);
    await c.status(pki.apSender.certificate, pki.apCa.certificate);
    expect(c.fetches).toBe(3);
  });

  describe('OCSP', () => {
    const OCSP = 'http://ocsp.test-pki.invoice-gateway.invalid/ocsp';
    let withOcsp: KeyMaterial;
    let ocspOnly: KeyMaterial;
    beforeAll(async () => {
      [withOcsp, ocspOnly] = await Promise.all([
        issueCertificate(pki.apCa, {
          subject: apSubject('POP000010'),
          ocspUrl: OCSP,
          crlUrls: [`${TEST_CRL_BASE_URL}/ap-ca.crl`],
        }),
        issueCertificate(pki.apCa, { subject: apSubject('POP000011'), ocspUrl: OCSP }),
      ]);
    });
    beforeEach(() => server.ocsp.clear());

    it('asks the responder first: good and revoked answers signed by the CA decide, without the CRL', async () => {
      server.ocsp.set('/ocsp', {
        signer: pki.apCa,
        revoked: new Map([[ocspOnly.certificate.serialNumber, new Date(Date.now() - 3600_000)]]),
      });
      expect(revocationPointsOf(withOcsp.certificate).ocspUrls).toEqual([OCSP]);
      const c = checker();
      expect(await c.status(withOcsp.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'good',
        source: 'ocsp',
        url: OCSP,
      });
      expect(await c.status(ocspOnly.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'revoked',
        source: 'ocsp',
        reason: 'keyCompromise',
      });
      expect(server.hits.get(AP_CRL)).toBeUndefined();
      // Answers are cached until their nextUpdate.
      await c.status(withOcsp.certificate, pki.apCa.certificate);
      expect(server.hits.get('/ocsp')).toBe(2);
    });

    it('refuses answers signed by a responder the CA did not authorise, and falls back to the CRL', async () => {
      server.ocsp.set('/ocsp', { signer: pki.apReceiver });
      expect(await checker().status(withOcsp.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'good',
        source: 'crl',
      });
      const r = await checker().status(ocspOnly.certificate, pki.apCa.certificate);
      expect(r).toMatchObject({
        status: 'unknown',
        message: expect.stringMatching(/OCSP response is not signed by .*ACCESS POINT TEST CA/),
      });
    });

    it('treats error statuses, expired answers and certificates the responder does not know as undetermined', async () => {
      server.ocsp.set('/ocsp', { signer: pki.apCa, status: 3 /* tryLater */ });
      expect(await checker().status(ocspOnly.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'unknown',
        message: expect.stringMatching(/responder answered tryLater/),
      });
      server.ocsp.set('/ocsp', {
        signer: pki.apCa,
        thisUpdate: new Date(Date.now() - 10 * DAY),
        nextUpdate: new Date(Date.now() - DAY),
      });
      expect(await checker().status(ocspOnly.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'unknown',
        message: expect.stringMatching(/OCSP response expired on/),
      });
      server.ocsp.set('/ocsp', {
        signer: pki.apCa,
        unknown: new Set([ocspOnly.certificate.serialNumber.toLowerCase().replace(/^(00)+/, '')]),
      });
      expect(await checker().status(ocspOnly.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'unknown',
        message: expect.stringMatching(/does not know the certificate/),
      });
      server.ocsp.clear();
      expect(await checker().status(ocspOnly.certificate, pki.apCa.certificate)).toMatchObject({
        status: 'unknown',
        message: expect.stringMatching(/OCSP .*: HTTP 404/),
      });
    });
  });
});
