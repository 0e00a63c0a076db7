/**
 * Our SMP and the recipient lookups, end to end on real servers: the gateway's HTTP app listening on 127.0.0.1, a real
 * DNS server (dns2) holding the SML zone, small signing SMPs for other participants, and the database. Registering a
 * party through the API writes its U-NAPTR record into that zone; lookups then go DNS → SMP → signed metadata exactly
 * as a sender's would.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Application } from 'express';
import request from 'supertest';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { composePeppolApi } from '../../src/main/peppol';
import {
  DOCTYPE_SCHEME_BUSDOX,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  peppolParticipant,
  type DocumentTypeId,
} from '../../src/peppol/identifiers';
import { PeppolError } from '../../src/peppol/peppol-error';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  TEST_PKI_PASSWORD,
  type TestPki,
} from '../support/peppol/test-pki';
import { createDnsResolver, lookupSmp, naptrName } from '../../src/peppol/sml';
import { DnsZoneSmlRegistrar } from '../../src/peppol/sml-registrar';
import { SmpClient } from '../../src/peppol/smp-client';
import {
  BILLING_PROCESS,
  BIS3_CREDIT_NOTE,
  BIS3_INVOICE,
  MLS_DOCUMENT_TYPE,
  MLS_PROCESS,
} from '../../src/peppol/smp-publisher';
import type { SmpProcessInput } from '../../src/peppol/smp-documents';
import { HookRepository } from '../../src/storage/hooks/hook.repository';
import { expectContract } from '../support/contract';
import { createTestContext, type TestContext } from '../support/test-app';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';

const ZONE = 'participant.sml.directory.test';
const OURS = '0106:70000001';
const OURS_2 = '0106:70000002';
const OTHER_TENANT_PARTY = '0106:70000009';
const PINT = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1@aunz-1::2.1',
);
const XRECHNUNG = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1',
);
const CII = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice##urn:cen.eu:en16931:2017::D16B',
);
const ORDER = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1',
);
const THEIR_AS4 = 'http://127.0.0.1:9/their-as4';

let pki: TestPki;
let foreignAp: KeyMaterial;
let dir: string;
let dns: LocalDnsZone;
let theirs: LocalSmp;
let server: http.Server;
let base: string;
let ctx: TestContext;
let app: Application;
let tokenA: string;
let tokenB: string;
let client: SmpClient;

function pem(name: string, ...certs: KeyMaterial[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, certs.map((c) => c.certificate.toString()).join(''));
  return file;
}

beforeAll(async () => {
  pki = await testPki();
  const foreignRoot = await createRootCa({ subject: 'C=NL, O=Elsewhere, CN=Foreign Root' });
  foreignAp = await issueCertificate(
    await createIntermediateCa(foreignRoot, { subject: 'C=NL, O=Elsewhere, CN=Foreign AP CA' }),
    { subject: apSubject('POP000777') },
  );
  dir = mkdtempSync(path.join(os.tmpdir(), 'peppol-directory-'));
  dns = await new LocalDnsZone().start();
  theirs = await new LocalSmp(pki.smp, '/their-smp').start();

  // The socket first: our SMP's public URL (in the config and in the SML) needs its port.
  server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  ctx = await createTestContext('peppoldirectory', {
    env: {
      PEPPOL_SML_ZONE: ZONE,
      PEPPOL_DNS_SERVERS: dns.address,
      PEPPOL_AP_ENDPOINT_URL: `${base}/as4`,
      PEPPOL_AP_CERTIFICATE: pem('ap.pem', pki.apReceiver, pki.apCa),
      PEPPOL_AP_PRIVATE_KEY: path.join(TEST_PKI_DIR, 'ap-receiver.key.pem'),
      PEPPOL_SMP_KEYSTORE: path.join(TEST_PKI_DIR, 'smp.p12'),
      PEPPOL_SMP_KEYSTORE_PASSWORD: TEST_PKI_PASSWORD,
      PEPPOL_SMP_PUBLIC_URL: `${base}/smp`,
      PEPPOL_SMP_TECHNICAL_CONTACT: 'mailto:peppol@gateway.test',
      PEPPOL_SMP_TRUSTSTORE: pem('smp-ca.pem', pki.smpCa),
      PEPPOL_AP_CA: pem('ap-ca.pem', pki.apCa),
      PEPPOL_LOOKUP_TIMEOUT_MS: '1500',
    },
  });
  const registrar = new DnsZoneSmlRegistrar(ZONE, {
    setRecords: (name, records) =>
      dns.set(
        name,
        records.map((r) => ({ type: 'NAPTR' as const, ...r })),
      ),
    removeRecords: (name) => dns.remove(name),
  });
  const peppol = composePeppolApi(ctx.config, ctx.core.db.models, ctx.core.logger, { registrar });
  app = composeApp(ctx.core, await composeIdentity(ctx.core), ctx.workflows, { metricsPrefix: 'test_', peppol });
  server.on('request', app);

  const d = ctx.core.directory;
  await d.createTenant({ id: 'tenantA', name: 'A' });
  await d.createTenant({ id: 'tenantB', name: 'B' });
  await d.createParty({ tenantId: 'tenantA', partyId: OURS, legalEntityId: `NL:${OURS}`, name: 'Ours' });
  await d.createParty({ tenantId: 'tenantA', partyId: OURS_2, legalEntityId: `NL:${OURS_2}`, name: 'Ours 2' });
  await d.createParty({
    tenantId: 'tenantB',
    partyId: OTHER_TENANT_PARTY,
    legalEntityId: `NL:${OTHER_TENANT_PARTY}`,
    name: 'B',
  });
  tokenA = await ctx.token(await ctx.createClient(['tenantA']));
  tokenB = await ctx.token(await ctx.createClient(['tenantB']));
  client = new SmpClient({
    smpCertificateAuthorities: [pki.smpCa.certificate],
    apCertificateAuthorities: [pki.apCa.certificate],
    timeoutMs: 2000,
  });
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await Promise.all([dns?.stop(), theirs?.stop(), ctx?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const put = (p: string, token: string, body: unknown) =>
  request(app)
    .put(p)
    .auth(token, { type: 'bearer' })
    .send(body as object);
const get = (p: string, token: string) => request(app).get(p).auth(token, { type: 'bearer' });
const post = (p: string, token: string, body: unknown) =>
  request(app)
    .post(p)
    .auth(token, { type: 'bearer' })
    .send(body as object);
const resolver = () => createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 });

async function refusal(p: Promise<unknown>): Promise<PeppolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** Publishes `value` at the other SMP and in the SML zone. */
function theirParticipant(
  value: string,
  services: Array<[DocumentTypeId, SmpProcessInput[]]>,
  smpUrl = theirs.url,
): void {
  const p = peppolParticipant(value);
  dns.set(naptrName(p, ZONE), [
    { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smpUrl}!` },
  ]);
  for (const [d, processes] of services) theirs.publish(p, d, processes);
  if (services.length === 0) theirs.register(p);
}
const billing = (cert = pki.apSender.certificate, url = THEIR_AS4): SmpProcessInput[] => [
  { process: BILLING_PROCESS, endpoints: [{ transportProfile: TRANSPORT_PROFILE_AS4_V2, url, certificate: cert }] },
];

describe('registering a party: API → SML zone → our SMP → verified metadata', () => {
  it('publishes the party in our SMP and the SML, and a sender finds our AS4 endpoint and certificate', async () => {
    const res = await put(`/api/v1/peppol/config/party/${OURS}`, tokenA, {
      registered: true,
      documentTypes: [
        {
          documentTypeId: `busdox-docid-qns::${BIS3_INVOICE.value}`,
          processIds: [`cenbii-procid-ubl::${BILLING_PROCESS.value}`],
        },
        { documentTypeId: BIS3_CREDIT_NOTE.value },
      ],
      reviews: true,
    });
    expect(res.status).toBe(200);
    expectContract('put', '/api/v1/peppol/config/party/:partyId', res);
    expect(res.body).toMatchObject({
      partyId: OURS,
      registered: true,
      reviews: true,
      configured: true,
      smpUrl: `${base}/smp`,
      sml: { registrar: 'dns-zone', state: 'registered', error: null },
    });

    // A sender's view, through the real DNS server and HTTP.
    const participant = peppolParticipant(OURS);
    const sml = await lookupSmp(participant, { zone: ZONE, resolver: resolver() });
    expect(sml.smpUrl).toBe(`${base}/smp`);
    const group = await client.getServiceGroup(sml.smpUrl, participant);
    expect(group.documentTypes).toEqual([BIS3_INVOICE, BIS3_CREDIT_NOTE]);
    const found = await client.lookupEndpoint(sml.smpUrl, participant, BIS3_CREDIT_NOTE, BILLING_PROCESS);
    expect(found.endpoint.url).toBe(`${base}/as4`);
    expect(found.endpoint.transportProfile).toBe(TRANSPORT_PROFILE_AS4_V2);
    expect(found.endpoint.certificate.fingerprint256).toBe(pki.apReceiver.certificate.fingerprint256);
    expect(found.endpoint.technicalContactUrl).toBe('mailto:peppol@gateway.test');
    expect(found.metadata.signer.fingerprint256).toBe(pki.smp.certificate.fingerprint256);

    const again = await get(`/api/v1/peppol/config/party/${OURS}`, tokenA);
    expectContract('get', '/api/v1/peppol/config/party/:partyId', again);
    expect(again.body).toEqual(res.body);
  });

  it('serves nothing for parties that are not registered, nor document types they do not receive', async () => {
    const unregistered = await request(app).get(`/smp/${encodeURIComponent(`iso6523-actorid-upis::${OURS_2}`)}`);
    expect(unregistered.status).toBe(404);
    expectContract('get', '/smp/:participantId', unregistered);
    const e = await refusal(client.lookupEndpoint(`${base}/smp`, peppolParticipant(OURS), ORDER, BILLING_PROCESS));
    expect(e.reason).toBe('document-type-not-supported');
    const bad = await request(app).get('/smp/not-an-identifier');
    expect(bad.status).toBe(400);
    expectContract('get', '/smp/:participantId', bad);
  });

  it('configures without registering, then unregisters: the SML entry and the SMP answer go away', async () => {
    const stored = await put(`/api/v1/peppol/config/party/${OURS_2}`, tokenA, { registered: false, reviews: true });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({
      configured: true,
      registered: false,
      reviews: true,
      sml: { state: 'unregistered' },
    });
    expect((await refusal(lookupSmp(peppolParticipant(OURS_2), { zone: ZONE, resolver: resolver() }))).reason).toBe(
      'participant-not-registered',
    );

    expect((await put(`/api/v1/peppol/config/party/${OURS_2}`, tokenA, { registered: true })).status).toBe(200);
    const ok = await client.lookupEndpoint(`${base}/smp`, peppolParticipant(OURS_2), BIS3_INVOICE, BILLING_PROCESS);
    expect(ok.endpoint.url).toBe(`${base}/as4`);

    const off = await put(`/api/v1/peppol/config/party/${OURS_2}`, tokenA, { registered: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ registered: false, sml: { state: 'unregistered' } });
    expect((await refusal(lookupSmp(peppolParticipant(OURS_2), { zone: ZONE, resolver: resolver() }))).reason).toBe(
      'participant-not-registered',
    );
    expect((await refusal(client.getServiceGroup(`${base}/smp`, peppolParticipant(OURS_2)))).reason).toBe(
      'participant-unknown',
    );
  });

  it("publishes MLS receiving for our own service provider id (0242 + the Seat ID's digits)", async () => {
    const spid = peppolParticipant('0242:000002');
    const found = await client.lookupEndpoint(`${base}/smp`, spid, MLS_DOCUMENT_TYPE, MLS_PROCESS);
    expect(found.endpoint.url).toBe(`${base}/as4`);
  });

  it('keeps other tenants out of a party configuration', async () => {
    const res = await put(`/api/v1/peppol/config/party/${OURS}`, tokenB, { registered: false });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'PARTY_NOT_ACCESSIBLE' });
    // Still registered: the refused call changed nothing.
    expect((await lookupSmp(peppolParticipant(OURS), { zone: ZONE, resolver: resolver() })).smpUrl).toBe(`${base}/smp`);
  });
});

describe('queryRecipientParty', () => {
  const path = `/api/v1/${OURS}/salesInvoice/queryRecipientParty`;
  interface Answer {
    id: string;
    channel: string | null;
    message: string;
    options: Array<{
      channel: string;
      identifiers: Array<{ partyId: string; isValid: boolean; message: string; reason?: string }>;
    }>;
  }

  beforeAll(() => {
    theirParticipant('0106:80000001', [[BIS3_INVOICE, billing()]]);
    theirParticipant('0106:80000002', [[ORDER, billing()]]);
    theirParticipant('0106:80000003', [[BIS3_INVOICE, billing(foreignAp.certificate)]]);
    theirParticipant('0106:80000004', [], 'http://127.0.0.1:9/nobody-listens');
    theirParticipant('0106:80000005', []);
    theirParticipant('0106:80000006', [[PINT, billing()]]);
  });

  it('answers per identifier with the precise reason, and picks a reachable one', async () => {
    const res = await post(path, tokenA, [
      '0106:80000009',
      '0106:80000002',
      '0106:80000004',
      '0106:80000003',
      '0106:80000001',
      '0106:80000005',
    ]);
    expect(res.status).toBe(200);
    expectContract('post', '/api/v1/:partyId/salesInvoice/queryRecipientParty', res);
    const body = res.body as Answer;
    expect(body).toMatchObject({ id: '0106:80000001', channel: 'peppol' });
    expect(body.options.map((o) => o.channel)).toEqual(['peppol']);
    const byId = Object.fromEntries(body.options[0]!.identifiers.map((i) => [i.partyId, i]));
    expect(byId['0106:80000009']).toMatchObject({ isValid: false, reason: 'participant-unknown' });
    expect(byId['0106:80000009']!.message).toMatch(/not registered in the SML/);
    expect(byId['0106:80000002']).toMatchObject({ isValid: false, reason: 'document-type-not-supported' });
    expect(byId['0106:80000004']).toMatchObject({ isValid: false, reason: 'smp-unreachable' });
    expect(byId['0106:80000003']).toMatchObject({ isValid: false, reason: 'certificate-problem' });
    expect(byId['0106:80000005']).toMatchObject({ isValid: false, reason: 'document-type-not-supported' });
    expect(byId['0106:80000001']).toMatchObject({ isValid: true });
    expect(byId['0106:80000001']!.message).toContain(THEIR_AS4);
  });

  it('finds our own registered party through the SML like any other', async () => {
    const res = await post(path, tokenA, { partyIds: [OURS] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: OURS, channel: 'peppol' });
    expect((res.body as Answer).message).toContain(`${base}/as4`);
  });

  it('checks the preferred document type first and credit notes on request', async () => {
    const pint = await post(
      `${path}?preferredDocumentTypeId=${encodeURIComponent(`busdox-docid-qns::${PINT.value}`)}`,
      tokenA,
      ['0106:80000006'],
    );
    expect(pint.status).toBe(200);
    const cn = await post(path, tokenA, { partyIds: ['0106:80000001'], metaAttributes: { isCredit: true } });
    expect(cn.status).toBe(404);
    expect((cn.body as Answer).options[0]!.identifiers[0]).toMatchObject({
      isValid: false,
      reason: 'document-type-not-supported',
    });
  });

  it('answers 404 with the same body when nothing is deliverable, and offers peppol-fallback once a mail hook listens on Send* and Send*Fallback', async () => {
    const none = await post(path, tokenA, ['0106:80000009', '9915:bad id']);
    expect(none.status).toBe(404);
    expectContract('post', '/api/v1/:partyId/salesInvoice/queryRecipientParty', none);
    expect(none.body).toMatchObject({ id: '0106:80000009', channel: null });
    expect((none.body as Answer).options[0]!.identifiers[1]).toMatchObject({
      partyId: '9915:bad id',
      isValid: false,
      reason: 'invalid-identifier',
    });

    const hooks = new HookRepository(ctx.core.db.models);
    const hookBase = {
      url: 'mailto:invoices@customer.test',
      topic: null,
      filter: null,
      output: [],
      mlsType: null,
      timeoutMs: null,
      secureKey: null,
      name: 'mail',
    };
    // Listening on the fallback topic alone does not make it a channel.
    await hooks.create({
      ...hookBase,
      id: 'mail-fallback-only',
      tenantId: 'tenantA',
      partyId: OURS,
      action: 'mailto',
      topics: ['Send*Fallback'],
      isActive: true,
    });
    expect((await post(path, tokenA, ['0106:80000009'])).status).toBe(404);
    await hooks.create({
      ...hookBase,
      id: 'mail-both',
      tenantId: 'tenantA',
      partyId: null,
      action: 'mailto',
      topics: ['Send*', 'Send*Fallback'],
      isActive: true,
    });

    const fb = await post(path, tokenA, ['0106:80000009']);
    expect(fb.status).toBe(200);
    expectContract('post', '/api/v1/:partyId/salesInvoice/queryRecipientParty', fb);
    const body = fb.body as Answer;
    expect(body).toMatchObject({ id: '0106:80000009', channel: 'peppol-fallback' });
    expect(body.options.map((o) => o.channel)).toEqual(['peppol', 'peppol-fallback']);
    expect(body.options[1]!.identifiers[0]).toMatchObject({ isValid: true });
    expect(body.options[1]!.identifiers[0]!.message).toMatch(/^Delivered by e-mail: .*not registered in the SML/);

    // Reachable over Peppol: peppol stays the best channel, the fallback is offered beside it.
    const both = await post(path, tokenA, ['0106:80000001']);
    expect(both.body).toMatchObject({ channel: 'peppol' });
    expect((both.body as Answer).options.map((o) => o.channel)).toEqual(['peppol', 'peppol-fallback']);

    // A hook of another tenant is nobody's fallback here.
    const other = await post(`/api/v1/${OTHER_TENANT_PARTY}/salesInvoice/queryRecipientParty`, tokenB, [
      '0106:80000009',
    ]);
    expect(other.status).toBe(404);
  });

  it('refuses a party outside reach and malformed input', async () => {
    expect(
      (await post(`/api/v1/${OTHER_TENANT_PARTY}/salesInvoice/queryRecipientParty`, tokenA, ['0106:80000001'])).status,
    ).toBe(403);
    for (const bad of [
      [],
      {},
      { partyIds: 'x' },
      [1],
      { partyIds: ['0106:1'], extra: 1 },
      { partyIds: ['0106:1'], metaAttributes: { isCredit: 'maybe' } },
    ]) {
      const res = await post(path, tokenA, bad);
      expect([res.status, JSON.stringify(bad)]).toEqual([400, JSON.stringify(bad)]);
      expectContract('post', '/api/v1/:partyId/salesInvoice/queryRecipientParty', res);
    }
    expect((await post(`${path}?includeOptions=perhaps`, tokenA, ['0106:80000001'])).status).toBe(400);
    expect((await post(`${path}?preferredDocumentTypeId=nonsense`, tokenA, ['0106:80000001'])).status).toBe(400);
    const many = Array.from({ length: 21 }, (_, i) => `0106:9${String(i).padStart(7, '0')}`);
    expect((await post(path, tokenA, many)).status).toBe(400);
  });
});

describe('deliveryOption', () => {
  beforeAll(() => {
    theirParticipant('0106:81000001', [
      [CII, billing()],
      [ORDER, billing()],
      [XRECHNUNG, billing()],
      [BIS3_INVOICE, billing(pki.apSender.certificate, 'http://127.0.0.1:9/bis3')],
      [PINT, billing()],
      [BIS3_CREDIT_NOTE, billing()],
    ]);
  });

  it('lists AS4 endpoints of the invoice family, best first, with URL and certificate', async () => {
    const res = await get(
      '/api/v1/peppol/deliveryOption?partyIds=0106:81000001&documentFamily=Invoice&isCredit=false',
      tokenA,
    );
    expect(res.status).toBe(200);
    expectContract('get', '/api/v1/peppol/deliveryOption', res);
    const list = res.body as Array<{
      partyId: string;
      documentTypeId: string;
      processId: string;
      protocol: string;
      url: string;
      certificate: string;
    }>;
    expect(list.map((o) => o.documentTypeId)).toEqual(
      [BIS3_INVOICE, XRECHNUNG, PINT, CII].map((d) => `${d.scheme}::${d.value}`),
    );
    expect(list[0]).toEqual({
      partyId: '0106:81000001',
      documentTypeId: `busdox-docid-qns::${BIS3_INVOICE.value}`,
      processId: `cenbii-procid-ubl::${BILLING_PROCESS.value}`,
      protocol: TRANSPORT_PROFILE_AS4_V2,
      url: 'http://127.0.0.1:9/bis3',
      certificate: pki.apSender.certificate.raw.toString('base64'),
    });

    const credit = await get('/api/v1/peppol/deliveryOption?partyIds=0106:81000001&isCredit=true', tokenA);
    expect((credit.body as typeof list).map((o) => o.documentTypeId)).toEqual(
      [BIS3_CREDIT_NOTE, CII].map((d) => `${d.scheme}::${d.value}`),
    );

    // Several recipients: each one's options in the caller's order; one without options adds nothing.
    const two = await get(`/api/v1/peppol/deliveryOption?partyIds=0106:80000009,${OURS}`, tokenB);
    expect(two.status).toBe(200);
    expect((two.body as typeof list).map((o) => [o.partyId, o.url])).toEqual([[OURS, `${base}/as4`]]);
  });

  it('answers 404 with each reason when no recipient has an option, and 400 for bad parameters', async () => {
    const res = await get('/api/v1/peppol/deliveryOption?partyIds=0106:80000009&partyIds=0106:80000003', tokenA);
    expect(res.status).toBe(404);
    expectContract('get', '/api/v1/peppol/deliveryOption', res);
    expect(res.body).toMatchObject({
      errors: [
        { partyId: '0106:80000009', reason: 'participant-unknown' },
        { partyId: '0106:80000003', reason: 'certificate-problem' },
      ],
    });
    for (const q of ['', 'partyIds=0106:1&documentFamily=Order', 'partyIds=0106:1&isCredit=yes']) {
      const bad = await get(`/api/v1/peppol/deliveryOption?${q}`, tokenA);
      expect([q, bad.status]).toEqual([q, 400]);
      expectContract('get', '/api/v1/peppol/deliveryOption', bad);
    }
    expect((await request(app).get('/api/v1/peppol/deliveryOption?partyIds=0106:1')).status).toBe(401);
  });
});
