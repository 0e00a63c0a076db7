/**
 * Participant migration between two gateways on 127.0.0.1, through the local SML stand-in (HTTPS, client
 * certificates, the WSDL's operations) that keeps the local DNS zone in step. While a bounded loop looks the
 * participant up as a sender would (DNS NAPTR → SMP → service metadata for the invoice), gateway A prepares a key,
 * gateway B takes the participant over with it and A then deregisters it: every lookup must find an SMP that answers
 * for the participant with the capability.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Application } from 'express';
import request from 'supertest';
import { request as httpRequest } from 'undici';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { composePeppolApi } from '../../src/main/peppol';
import { encodeIdForUrl, peppolParticipant } from '../../src/peppol/identifiers';
import { createDnsResolver, lookupSmp } from '../../src/peppol/sml';
import { BIS3_INVOICE } from '../../src/peppol/smp-publisher';
import { issueCertificate, TEST_PKI_PASSWORD, type TestPki } from '../support/peppol/test-pki';
import { LocalSml } from '../support/peppol/local-sml';
import { startPeppolNetwork, type PeppolNetwork } from '../support/peppol/gateway-network';
import { TEST_PKI_DIR, testApEnv } from '../support/peppol/pki-fixture';
import { expectContract } from '../support/contract';
import { createTestContext, type TestContext } from '../support/test-app';

const ZONE = 'participant.sml.migration.test';
const PARTY = '0106:71000001';
const OTHER = '0106:71000009';
const WHO = peppolParticipant(PARTY);

interface Gateway {
  name: string;
  ctx: TestContext;
  app: Application;
  server: http.Server;
  base: string;
  token: string;
  otherTenantToken: string;
}

let network: PeppolNetwork;
let pki: TestPki;
let sml: LocalSml;
let a: Gateway;
let b: Gateway;

async function startGateway(name: string, env: Record<string, string>): Promise<Gateway> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ctx = await createTestContext(name, {
    env: {
      PEPPOL_SML_ZONE: ZONE,
      PEPPOL_DNS_SERVERS: network.dns.address,
      PEPPOL_AP_ENDPOINT_URL: `${base}/as4`,
      PEPPOL_SMP_PUBLIC_URL: `${base}/smp`,
      PEPPOL_SMP_TRUSTSTORE: network.smpTruststore,
      PEPPOL_SML_REGISTRAR: 'sml',
      PEPPOL_SML_URL: sml.url,
      PEPPOL_SML_SMP_ADDRESS: '127.0.0.1',
      PEPPOL_SML_CA: path.join(network.dir, 'sml-tls.pem'),
      PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      ...env,
    },
  });
  const peppol = composePeppolApi(ctx.config, ctx.core.db.models, ctx.core.logger);
  const app = composeApp(ctx.core, await composeIdentity(ctx.core), ctx.workflows, { metricsPrefix: 'test_', peppol });
  server.on('request', app);
  const d = ctx.core.directory;
  await d.createTenant({ id: 'tenantA', name: 'A' });
  await d.createTenant({ id: 'tenantB', name: 'B' });
  await d.createParty({ tenantId: 'tenantA', partyId: PARTY, legalEntityId: `NL:${PARTY}`, name: 'Moving' });
  await d.createParty({ tenantId: 'tenantB', partyId: OTHER, legalEntityId: `NL:${OTHER}`, name: 'Other' });
  return {
    name,
    ctx,
    app,
    server,
    base,
    token: await ctx.token(await ctx.createClient(['tenantA'])),
    otherTenantToken: await ctx.token(await ctx.createClient(['tenantB'])),
  };
}

async function stopGateway(g: Gateway | undefined): Promise<void> {
  if (!g) return;
  g.server.closeAllConnections();
  await new Promise<void>((r) => g.server.close(() => r()));
  await g.ctx.close();
}

beforeAll(async () => {
  network = await startPeppolNetwork(ZONE);
  pki = network.pki;
  sml = await new LocalSml(
    ZONE,
    {
      setRecords: (name, records) =>
        network.dns.set(
          name,
          records.map((r) => ({ type: 'NAPTR' as const, ...r })),
        ),
      removeRecords: (name) => network.dns.remove(name),
    },
    [pki.smpCa],
  ).start();
  if (!sml.tls) throw new Error('the SML stand-in has no TLS certificate');
  writeFileSync(path.join(network.dir, 'sml-tls.pem'), sml.tls.certificate.toString());
  // Gateway B's SMP has a certificate of its own (the SML tells SMPs apart by it).
  const smpB = await issueCertificate(pki.smpCa, { subject: 'C=NL, O=Gateway B, CN=SMP B' });
  writeFileSync(path.join(network.dir, 'smp-b.pem'), smpB.certificate.toString());
  writeFileSync(path.join(network.dir, 'smp-b.key.pem'), smpB.privateKey.export({ format: 'pem', type: 'pkcs8' }));

  a = await startGateway('migrationa', {
    ...testApEnv('ap-sender'),
    PEPPOL_SMP_KEYSTORE: path.join(TEST_PKI_DIR, 'smp.p12'),
    PEPPOL_SMP_KEYSTORE_PASSWORD: TEST_PKI_PASSWORD,
    PEPPOL_SML_SMP_ID: 'SMP-A',
  });
  b = await startGateway('migrationb', {
    ...testApEnv('ap-receiver'),
    PEPPOL_SMP_CERTIFICATE: path.join(network.dir, 'smp-b.pem'),
    PEPPOL_SMP_PRIVATE_KEY: path.join(network.dir, 'smp-b.key.pem'),
    PEPPOL_SML_SMP_ID: 'SMP-B',
  });
}, 120_000);

afterAll(async () => {
  await Promise.all([stopGateway(a), stopGateway(b)]);
  await sml?.stop();
  await network?.stop();
});

const put = (g: Gateway, p: string, body: unknown, token = g.token) =>
  request(g.app)
    .put(p)
    .auth(token, { type: 'bearer' })
    .send(body as object);
const post = (g: Gateway, p: string, body?: unknown, token = g.token) => {
  const r = request(g.app).post(p).auth(token, { type: 'bearer' });
  return body === undefined ? r : r.send(body as object);
};

/** One lookup as a sender does it: the SMP the SML names, and its metadata for the BIS invoice. */
async function lookupOnce(): Promise<string> {
  const resolver = createDnsResolver({ servers: [network.dns.address], timeoutMs: 1000, tries: 1 });
  const found = await lookupSmp(WHO, { zone: ZONE, resolver });
  const res = await httpRequest(`${found.smpUrl}/${encodeIdForUrl(WHO)}/services/${encodeIdForUrl(BIS3_INVOICE)}`);
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${found.smpUrl} answered ${res.statusCode}`);
  if (!body.includes(PARTY) || !/<wsa:Address>http[^<]+\/as4<\/wsa:Address>/.test(body))
    throw new Error(`${found.smpUrl} answered without an AS4 endpoint for ${PARTY}`);
  return found.smpUrl;
}

describe('participant migration between two gateways', () => {
  it('refuses what it must before anything moves', async () => {
    // Not registered here: nothing to migrate away.
    const notRegistered = await post(a, `/api/v1/peppol/${PARTY}/prepareToMigrate`);
    expect(notRegistered.status).toBe(409);
    expectContract('post', '/api/v1/peppol/:partyId/prepareToMigrate', notRegistered);
    expect(notRegistered.headers['content-type']).toMatch(/application\/problem\+json/);
    // No token, a token of another tenant.
    expect((await request(a.app).post(`/api/v1/peppol/${PARTY}/prepareToMigrate`)).status).toBe(401);
    expect((await post(a, `/api/v1/peppol/${PARTY}/prepareToMigrate`, undefined, a.otherTenantToken)).status).toBe(403);
    expect(
      (await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: 'Ab3$cD4%ef' }, b.otherTenantToken)).status,
    ).toBe(403);
    expect((await request(b.app).post(`/api/v1/peppol/${PARTY}/migrate`).send({})).status).toBe(401);
    // Malformed bodies.
    const noKey = await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationkey: 'x' });
    expect(noKey.status).toBe(400);
    expectContract('post', '/api/v1/peppol/:partyId/migrate', noKey);
    expect(JSON.stringify(noKey.body)).toMatch(/migrationKey/);
    expect(JSON.stringify(noKey.body)).toMatch(/unknown field/);
    expect((await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: 'weak key' })).status).toBe(400);
    expect(
      (await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: 'Ab3$cD4%ef', documentTypes: [] })).status,
    ).toBe(400);
  });

  it('moves the participant with every lookup during the switch finding a serving SMP', async () => {
    const registered = await put(a, `/api/v1/peppol/config/party/${PARTY}`, { registered: true });
    expect(registered.status).toBe(200);
    expect(registered.body.sml).toMatchObject({ registrar: 'sml', state: 'registered' });
    expect(sml.ownerOf(WHO)).toBe('SMP-A');
    expect(sml.smps.get('SMP-A')?.logicalAddress).toBe(`${a.base}/smp`);
    expect(await lookupOnce()).toBe(`${a.base}/smp`);

    // B cannot take it over without the key A prepared.
    const early = await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: 'Ab3$cD4%efgh' });
    expect(early.status).toBe(422);
    expect(sml.ownerOf(WHO)).toBe('SMP-A');

    // The lookup loop: bounded, sequential, recording which SMP answered or what failed.
    const seen: string[] = [];
    const failures: string[] = [];
    let stop = false;
    const loop = (async () => {
      for (let i = 0; i < 5000 && !stop; i++) {
        try {
          seen.push(await lookupOnce());
        } catch (e) {
          failures.push((e as Error).message);
        }
      }
    })();
    const waitFor = async (pred: () => boolean) => {
      for (let i = 0; i < 400 && !pred(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(pred()).toBe(true);
    };
    await waitFor(() => seen.length >= 3);

    const prepared = await post(a, `/api/v1/peppol/${PARTY}/prepareToMigrate`);
    expect(prepared.status).toBe(200);
    expectContract('post', '/api/v1/peppol/:partyId/prepareToMigrate', prepared);
    const key = prepared.body.migrationKey as string;
    expect(key).toMatch(/^\S{24}$/);
    expect(prepared.body.participantId).toBe(`iso6523-actorid-upis::${PARTY}`);

    // A wrong key is the SML's refusal (422); B's SMP stops answering again and nothing moved.
    const wrong = await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: 'Zz9$Yy8%xxQQ' });
    expect(wrong.status).toBe(422);
    expectContract('post', '/api/v1/peppol/:partyId/migrate', wrong);
    expect(wrong.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(sml.ownerOf(WHO)).toBe('SMP-A');
    const bAfterWrong = await request(b.app)
      .get(`/api/v1/peppol/config/party/${PARTY}`)
      .auth(b.token, { type: 'bearer' });
    expect(bAfterWrong.body).toMatchObject({ registered: false });

    const before = seen.length;
    const migrated = await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: key });
    expect(migrated.status).toBe(200);
    expectContract('post', '/api/v1/peppol/:partyId/migrate', migrated);
    expect(migrated.body).toMatchObject({ registered: true, sml: { registrar: 'sml', state: 'registered' } });
    expect(sml.ownerOf(WHO)).toBe('SMP-B');
    await waitFor(() => seen.slice(before).includes(`${b.base}/smp`));

    // The key is spent: a second use is refused.
    expect((await post(b, `/api/v1/peppol/${PARTY}/migrate`, { migrationKey: key })).status).toBe(409);

    // A, now no longer the owner, deregisters: its SMP stops answering, the SML entry (B's) stays.
    const gone = await put(a, `/api/v1/peppol/config/party/${PARTY}`, { registered: false });
    expect(gone.status).toBe(200);
    expect(gone.body.sml.state).toBe('unregistered');
    expect(sml.ownerOf(WHO)).toBe('SMP-B');
    const afterRemoval = seen.length;
    await waitFor(() => seen.length >= afterRemoval + 5);
    stop = true;
    await loop;

    expect(failures).toEqual([]);
    expect(seen).toContain(`${a.base}/smp`);
    expect(seen).toContain(`${b.base}/smp`);
    // Once B answered, no lookup went back to A.
    const firstB = seen.indexOf(`${b.base}/smp`);
    expect(seen.slice(firstB).every((u) => u === `${b.base}/smp`)).toBe(true);
    expect(sml.log).toEqual(
      expect.arrayContaining([
        `Create SMP-A iso6523-actorid-upis::${PARTY}`,
        `PrepareToMigrate SMP-A iso6523-actorid-upis::${PARTY}`,
        `Migrate SMP-B iso6523-actorid-upis::${PARTY}`,
      ]),
    );
    expect(sml.log.some((l) => l.startsWith('Delete SMP-A iso6523-actorid-upis::0106:71000001'))).toBe(false);
  }, 90_000);
});
