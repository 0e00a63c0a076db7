/**
 * The Peppol configuration API: environment defaults and party registration, who may see and change what, every
 * refusal, and what happens when parts of the Peppol layer are not configured. The full path through DNS is in
 * test/integration/peppol-directory.test.ts.
 */
import path from 'node:path';
import type { Application } from 'express';
import request from 'supertest';
import { hashSecret } from '../../src/auth/secret-hash';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { composePeppolApi } from '../../src/main/peppol';
import { TEST_PKI_PASSWORD, type TestPki } from '../support/peppol/test-pki';
import { ManualSmlRegistrar } from '../../src/peppol/sml-registrar';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE } from '../../src/peppol/smp-publisher';
import { expectContract } from '../support/contract';
import { createTestContext, type TestClient, type TestContext } from '../support/test-app';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { spidOfSeatId } from '../../src/peppol/identifiers';

const PA = '0106:60000001';
const PA2 = '0106:60000002';
const PB = '0106:60000009';
const SLASHED = '0106:6000/0003';
const UNKNOWN_ICD = '1234:60000004';
const MIXED_A = '9925:BE0600000005';
const MIXED_B = '9925:be0600000005';
const ORDER =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1';
const INVOICE = `busdox-docid-qns::${BIS3_INVOICE.value}`;
const CREDIT_NOTE = `busdox-docid-qns::${BIS3_CREDIT_NOTE.value}`;
const BILLING = `cenbii-procid-ubl::${BILLING_PROCESS.value}`;

describe('Peppol configuration API', () => {
  let pki: TestPki;
  let ctx: TestContext;
  /** SMP configured, no SML registrar (the default). */
  let app: Application;
  /** SMP configured, SML left to the operator. */
  let manualApp: Application;
  /** No access point certificate: our SMP is not served. */
  let bareApp: Application;
  /** An SML that fails until told otherwise. */
  let flakyApp: Application;
  const flaky = { kind: 'dns-zone', down: true, calls: [] as string[] };
  let tokenA: string;
  let tokenB: string;
  let tokenAB: string;
  let userToken: string;
  let clientA: TestClient;

  beforeAll(async () => {
    pki = await testPki();
    ctx = await createTestContext('peppolconfig', {
      env: {
        PEPPOL_AP_CERTIFICATE: path.join(TEST_PKI_DIR, 'ap-receiver.crt.pem'),
        PEPPOL_AP_PRIVATE_KEY: path.join(TEST_PKI_DIR, 'ap-receiver.key.pem'),
        PEPPOL_AP_CA: path.join(TEST_PKI_DIR, 'ap-ca.crt.pem'),
        PEPPOL_SMP_KEYSTORE: path.join(TEST_PKI_DIR, 'smp.p12'),
        PEPPOL_SMP_KEYSTORE_PASSWORD: TEST_PKI_PASSWORD,
        PEPPOL_AP_ENDPOINT_URL: 'https://ap.gateway.test/as4',
        PEPPOL_SMP_PUBLIC_URL: 'https://smp.gateway.test/smp',
      },
    });
    const identity = await composeIdentity(ctx.core);
    const { models } = ctx.core.db;
    app = ctx.app;
    manualApp = composeApp(ctx.core, identity, ctx.workflows, {
      metricsPrefix: 'test_',
      peppol: composePeppolApi(ctx.config, models, ctx.core.logger, { registrar: new ManualSmlRegistrar() }),
    });
    const bare = { ...ctx.config, as4: { ...ctx.config.as4, enabled: false } };
    const flakyRegistrar = {
      kind: flaky.kind,
      async register(p: { value: string }) {
        flaky.calls.push(`register ${p.value}`);
        if (flaky.down) throw new Error('SML answered 503');
      },
      async unregister(p: { value: string }) {
        flaky.calls.push(`unregister ${p.value}`);
        if (flaky.down) throw new Error('SML answered 503');
      },
    };
    flakyApp = composeApp(ctx.core, identity, ctx.workflows, {
      metricsPrefix: 'test_',
      peppol: composePeppolApi(ctx.config, models, ctx.core.logger, { registrar: flakyRegistrar }),
    });
    bareApp = composeApp(ctx.core, identity, ctx.workflows, {
      metricsPrefix: 'test_',
      peppol: composePeppolApi(bare, models, ctx.core.logger),
    });

    const d = ctx.core.directory;
    await d.createTenant({ id: 'tenantA', name: 'A' });
    await d.createTenant({ id: 'tenantB', name: 'B' });
    for (const partyId of [PA, PA2, SLASHED, UNKNOWN_ICD, MIXED_A])
      await d.createParty({ tenantId: 'tenantA', partyId, legalEntityId: `NL:${partyId}`, name: partyId });
    for (const partyId of [PB])
      await d.createParty({ tenantId: 'tenantB', partyId, legalEntityId: `BE:${partyId}`, name: partyId });
    clientA = await ctx.createClient(['tenantA']);
    tokenA = await ctx.token(clientA);
    tokenB = await ctx.token(await ctx.createClient(['tenantB']));
    tokenAB = await ctx.token(await ctx.createClient(['tenantA', 'tenantB']));
    await d.createUser({
      tenantId: 'tenantA',
      username: 'peppoluser',
      passwordHash: await hashSecret('Correct!Horse42'),
      partyIds: [PA],
    });
    userToken = await ctx.passwordToken(clientA, 'peppoluser', 'Correct!Horse42');
  });
  afterAll(async () => ctx.close());

  const get = (p: string, token: string, on = app) => request(on).get(p).auth(token, { type: 'bearer' });
  const put = (p: string, token: string, body: unknown, on = app) =>
    request(on)
      .put(p)
      .auth(token, { type: 'bearer' })
      .send(body as object);
  const party = (id: string) => `/api/v1/peppol/config/party/${encodeURIComponent(id)}`;

  describe('environment level', () => {
    it('shows our access point, SMP, SML and the built-in defaults', async () => {
      const res = await get('/api/v1/peppol/config', tokenA);
      expect(res.status).toBe(200);
      expectContract('get', '/api/v1/peppol/config', res);
      expect(res.body).toMatchObject({
        tenantId: 'tenantA',
        accessPoint: {
          endpointUrl: 'https://ap.gateway.test/as4',
          transportProfile: 'peppol-transport-as4-v2_0',
          seatId: 'POP000002',
          certificate: {
            commonName: 'POP000002',
            fingerprintSha256: pki.apReceiver.certificate.fingerprint256.replace(/:/g, '').toLowerCase(),
          },
        },
        smp: {
          url: 'https://smp.gateway.test/smp',
          available: true,
          signingCertificate: { fingerprintSha256: pki.smp.certificate.fingerprint256.replace(/:/g, '').toLowerCase() },
        },
        sml: { zone: 'participant.sml.test.tech.peppol.org', registrar: 'off' },
        lookups: { available: false },
        defaults: {
          documentTypes: [
            { documentTypeId: INVOICE, processIds: [BILLING] },
            { documentTypeId: CREDIT_NOTE, processIds: [BILLING] },
          ],
          reviews: false,
        },
        changedOn: null,
      });
      // Only the leaf: the CA certificates of the PEM chain are not ours.
      expect((res.body as { accessPoint: { certificates: unknown[] } }).accessPoint.certificates).toHaveLength(1);
      expect((res.body as { lookups: { problem: string } }).lookups.problem).toMatch(/^PEPPOL_SMP_TRUSTSTORE not set/);
    });

    it('sets the defaults per tenant, accepts its own GET back, and applies them to unconfigured parties', async () => {
      const current = (await get('/api/v1/peppol/config', tokenA)).body as Record<string, unknown>;
      const res = await put('/api/v1/peppol/config', tokenA, {
        ...current,
        defaults: {
          documentTypes: [{ documentTypeId: ORDER, processIds: ['urn:fdc:peppol.eu:poacc:bis:ordering:3'] }],
          reviews: true,
        },
      });
      expect(res.status).toBe(200);
      expectContract('put', '/api/v1/peppol/config', res);
      expect(res.body).toMatchObject({
        defaults: {
          documentTypes: [
            { documentTypeId: ORDER, processIds: ['cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:ordering:3'] },
          ],
          reviews: true,
        },
      });
      expect((res.body as { changedOn: string | null }).changedOn).not.toBeNull();

      const p = await get(party(PA2), tokenA);
      expect(p.status).toBe(200);
      expectContract('get', '/api/v1/peppol/config/party/:partyId', p);
      expect(p.body).toMatchObject({
        partyId: PA2,
        configured: false,
        registered: false,
        reviews: true,
        documentTypes: [{ documentTypeId: ORDER }],
      });

      // Tenant B still has the built-in defaults.
      expect((await get('/api/v1/peppol/config', tokenB)).body).toMatchObject({
        tenantId: 'tenantB',
        defaults: { reviews: false, documentTypes: [{ documentTypeId: INVOICE }, { documentTypeId: CREDIT_NOTE }] },
      });
      // Back to the built-in ones for the tests below (a partial PUT keeps what is not sent).
      const back = await put('/api/v1/peppol/config', tokenA, {
        defaults: { documentTypes: [{ documentTypeId: INVOICE }, { documentTypeId: CREDIT_NOTE }] },
      });
      expect(back.body).toMatchObject({
        defaults: {
          reviews: true,
          documentTypes: [{ documentTypeId: INVOICE, processIds: [BILLING] }, { documentTypeId: CREDIT_NOTE }],
        },
      });
      await put('/api/v1/peppol/config', tokenA, { defaults: { reviews: false } });
    });

    it('refuses invalid defaults with every problem named, and changes to operator settings', async () => {
      const res = await put('/api/v1/peppol/config', tokenA, {
        defaults: {
          documentTypes: [
            { documentTypeId: 'busdox-docid-qns::not a doctype' },
            { documentTypeId: INVOICE, processIds: [] },
            { documentTypeId: CREDIT_NOTE, colour: 'red' },
          ],
          reviews: 'yes',
        },
        accessPoint: { endpointUrl: 'https://elsewhere.test/as4' },
        surprise: 1,
      });
      expect(res.status).toBe(400);
      expectContract('put', '/api/v1/peppol/config', res);
      const paths = (res.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort();
      expect(paths).toEqual(
        [
          'accessPoint.endpointUrl',
          'defaults.documentTypes[0].documentTypeId',
          'defaults.documentTypes[1].processIds',
          'defaults.documentTypes[2].colour',
          'defaults.reviews',
          'surprise',
        ].sort(),
      );
      for (const body of [{}, { defaults: [] }, { defaults: { documentTypes: [] } }, []]) {
        const r = await put('/api/v1/peppol/config', tokenA, body);
        expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
      }
      const text = await request(app)
        .put('/api/v1/peppol/config')
        .auth(tokenA, { type: 'bearer' })
        .type('text/plain')
        .send('defaults');
      expect(text.status).toBe(415);
      expectContract('put', '/api/v1/peppol/config', text);
      // Nothing was written by the refused calls.
      expect((await get('/api/v1/peppol/config', tokenA)).body).toMatchObject({
        defaults: { reviews: false, documentTypes: [{ documentTypeId: INVOICE }, { documentTypeId: CREDIT_NOTE }] },
      });
    });

    it('is for client_credentials tokens of the tenant', async () => {
      const user = await get('/api/v1/peppol/config', userToken);
      expect(user.status).toBe(403);
      expectContract('get', '/api/v1/peppol/config', user);
      expect((await put('/api/v1/peppol/config', userToken, { defaults: { reviews: true } })).status).toBe(403);
      const several = await get('/api/v1/peppol/config', tokenAB);
      expect(several.status).toBe(400);
      expect((await get('/api/v1/peppol/config?tenantId=tenantB', tokenAB)).body).toMatchObject({
        tenantId: 'tenantB',
      });
      expect((await get('/api/v1/peppol/config?tenantId=tenantB', tokenA)).status).toBe(403);
      expect((await request(app).get('/api/v1/peppol/config')).status).toBe(401);
    });
  });

  describe('party level', () => {
    it('keeps parties of other tenants, unlinked parties and unknown parties out (403), malformed ids 400', async () => {
      for (const [p, token] of [
        [PB, tokenA],
        [PA, tokenB],
        [PA2, userToken],
        ['0106:69999999', tokenA],
      ] as const) {
        const g = await get(party(p), token);
        expect([p, g.status, (g.body as { code: string }).code]).toEqual([p, 403, 'PARTY_NOT_ACCESSIBLE']);
        expectContract('get', '/api/v1/peppol/config/party/:partyId', g);
        const w = await put(party(p), token, { registered: false, reviews: true }, manualApp);
        expect([p, w.status]).toEqual([p, 403]);
      }
      expect((await get(party(PA), userToken)).status).toBe(200);
      expect((await get(party('not-a-party'), tokenA)).status).toBe(400);
      // The refused writes stored nothing.
      expect((await get(party(PB), tokenB)).body).toMatchObject({ configured: false });
    });

    it('without an SML registrar, registration is refused (501) and nothing is stored', async () => {
      const res = await put(party(PA), tokenA, { registered: true });
      expect(res.status).toBe(501);
      expectContract('put', '/api/v1/peppol/config/party/:partyId', res);
      expect((res.body as { detail: string }).detail).toMatch(/PEPPOL_SML_REGISTRAR=manual/);
      expect((await get(party(PA), tokenA)).body).toMatchObject({ configured: false, registered: false });
      // Configuring without registering needs no SML.
      const off = await put(party(PA), tokenA, { registered: false, reviews: true });
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({
        configured: true,
        registered: false,
        reviews: true,
        sml: { registrar: 'off', state: 'unregistered' },
      });
    });

    it('with a manual SML, registers in our SMP and says the SML is the operator’s', async () => {
      const res = await put(
        party(PA),
        tokenA,
        { registered: true, documentTypes: [{ documentTypeId: INVOICE }] },
        manualApp,
      );
      expect(res.status).toBe(200);
      expectContract('put', '/api/v1/peppol/config/party/:partyId', res);
      // reviews kept from the earlier PUT, as it was not sent.
      expect(res.body).toMatchObject({
        partyId: PA,
        participantId: `iso6523-actorid-upis::${PA}`,
        registered: true,
        reviews: true,
        sml: { registrar: 'manual', state: 'manual' },
        documentTypes: [{ documentTypeId: INVOICE, processIds: [BILLING] }],
      });

      const group = await request(app).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${PA}`)}`);
      expect(group.status).toBe(200);
      expectContract('get', '/smp/:participantId', group);
      expect(group.text).toContain('<ServiceGroup');
      expect(group.text).toContain(
        `https://smp.gateway.test/smp/iso6523-actorid-upis%3A%3A${encodeURIComponent(PA)}/services/`,
      );
      const meta = await request(app).get(
        `/smp/${encodeURIComponent(`iso6523-actorid-upis::${PA}`)}/services/${encodeURIComponent(INVOICE)}`,
      );
      expect(meta.status).toBe(200);
      expectContract('get', '/smp/:participantId/services/:documentTypeId', meta);
      expect(meta.text).toContain('https://ap.gateway.test/as4');
      expect(meta.text).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">');
      const none = await request(app).get(
        `/smp/${encodeURIComponent(`iso6523-actorid-upis::${PA}`)}/services/${encodeURIComponent(CREDIT_NOTE)}`,
      );
      expect(none.status).toBe(404);
      expectContract('get', '/smp/:participantId/services/:documentTypeId', none);
    });

    it('refuses invalid party configurations with every problem named', async () => {
      const cases: Array<[unknown, string[]]> = [
        [{}, ['registered']],
        [{ registered: 'yes' }, ['registered']],
        [{ registered: true, documentTypes: [] }, ['documentTypes']],
        [{ registered: false, documentTypes: 'all' }, ['documentTypes']],
        [
          { registered: false, documentTypes: [{ documentTypeId: INVOICE }, { documentTypeId: INVOICE }] },
          ['documentTypes[1].documentTypeId'],
        ],
        [
          { registered: false, documentTypes: [{ documentTypeId: INVOICE, processIds: ['has space'] }] },
          ['documentTypes[0].processIds[0]'],
        ],
        [{ registered: false, reviews: 1, partyId: PA2, other: true }, ['other', 'partyId', 'reviews']],
      ];
      for (const [body, paths] of cases) {
        const res = await put(party(PA), tokenA, body, manualApp);
        expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
        expectContract('put', '/api/v1/peppol/config/party/:partyId', res);
        expect((res.body as { errors: Array<{ path: string }> }).errors.map((e) => e.path).sort()).toEqual(paths);
      }
      // Party ids that cannot be Peppol participants.
      for (const p of [SLASHED, UNKNOWN_ICD]) {
        const res = await put(party(p), tokenA, { registered: true }, manualApp);
        expect([p, res.status]).toEqual([p, 400]);
        expect((res.body as { detail: string }).detail).toMatch(/cannot be a Peppol participant/);
      }
      // Still as registered before.
      expect((await get(party(PA), tokenA)).body).toMatchObject({
        registered: true,
        documentTypes: [{ documentTypeId: INVOICE }],
      });
    });

    it('a party spelled in another case is the same participant: refused when created (409)', async () => {
      await expect(
        ctx.core.directory.createParty({
          tenantId: 'tenantB',
          partyId: MIXED_B,
          legalEntityId: `BE:${MIXED_B}`,
          name: MIXED_B,
        }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await put(party(MIXED_A), tokenA, { registered: true }, manualApp)).status).toBe(200);
      // The SMP serves the party's configuration for either spelling.
      for (const spelling of [MIXED_A, MIXED_B])
        expect((await request(app).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${spelling}`)}`)).status).toBe(
          200,
        );
    });

    it('unregisters: our SMP stops answering for the party', async () => {
      const res = await put(party(PA), tokenA, { registered: false }, manualApp);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ registered: false, sml: { state: 'unregistered' } });
      expect((await request(app).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${PA}`)}`)).status).toBe(404);
    });
  });

  describe('an SML that fails', () => {
    it('a failed registration is recorded as failed (503) and a retried PUT completes it', async () => {
      const res = await put(party(PA2), tokenA, { registered: true }, flakyApp);
      expect(res.status).toBe(503);
      expectContract('put', '/api/v1/peppol/config/party/:partyId', res);
      expect((res.body as { detail: string }).detail).toMatch(
        /published in our SMP but its SML registration failed \(retry the PUT\): SML answered 503/,
      );
      expect((await get(party(PA2), tokenA)).body).toMatchObject({
        registered: true,
        sml: { state: 'failed', error: 'SML answered 503' },
      });

      flaky.down = false;
      const retry = await put(party(PA2), tokenA, { registered: true }, flakyApp);
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ registered: true, sml: { state: 'registered', error: null } });
    });

    it('a failed unregistration changes nothing: the party stays published', async () => {
      flaky.down = true;
      const res = await put(party(PA2), tokenA, { registered: false }, flakyApp);
      expect(res.status).toBe(503);
      expect((await get(party(PA2), tokenA)).body).toMatchObject({ registered: true, sml: { state: 'registered' } });
      expect((await request(app).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${PA2}`)}`)).status).toBe(200);
      flaky.down = false;
      expect((await put(party(PA2), tokenA, { registered: false }, flakyApp)).status).toBe(200);
      // A registration also registers our service provider id (MLS goes to it; our SMP serves it): the test AP
      // certificate here is Seat ID POP000002.
      const spid = spidOfSeatId('POP000002').value;
      expect(flaky.calls).toEqual([
        `register ${PA2}`,
        `register ${PA2}`,
        `register ${spid}`,
        `unregister ${PA2}`,
        `unregister ${PA2}`,
      ]);
    });
  });

  describe('parts not configured', () => {
    it('our SMP answers 503 without an access point certificate, and registering is refused before anything is stored', async () => {
      const smp = await request(bareApp).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${PB}`)}`);
      expect(smp.status).toBe(503);
      expectContract('get', '/smp/:participantId', smp);
      expect((smp.body as { detail: string }).detail).toMatch(
        /no access point key is configured \(PEPPOL_AP_KEYSTORE, or PEPPOL_AP_CERTIFICATE/,
      );
      const reg = await put(party(PB), tokenB, { registered: true }, bareApp);
      expect(reg.status).toBe(503);
      expect((await get(party(PB), tokenB)).body).toMatchObject({ configured: false });
      expect((await get('/api/v1/peppol/config', tokenA, bareApp)).body).toMatchObject({
        accessPoint: { certificate: null, seatId: null },
        smp: { available: false },
      });
    });

    it('recipient lookups answer 503 naming the missing trust stores', async () => {
      const q = await request(app)
        .post(`/api/v1/${PA}/salesInvoice/queryRecipientParty`)
        .auth(tokenA, { type: 'bearer' })
        .send(['0106:1']);
      expect(q.status).toBe(503);
      expectContract('post', '/api/v1/:partyId/salesInvoice/queryRecipientParty', q);
      expect((q.body as { detail: string }).detail).toMatch(/PEPPOL_SMP_TRUSTSTORE/);
      const d = await get('/api/v1/peppol/deliveryOption?partyIds=0106:1', tokenA);
      expect(d.status).toBe(503);
      expectContract('get', '/api/v1/peppol/deliveryOption', d);
    });
  });
});
