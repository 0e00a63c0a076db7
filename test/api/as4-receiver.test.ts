/**
 * POST /as4 on the real app and database: a good message is stored (GridFS + record) and receipted; every hostile or
 * broken message is refused with the ebMS error a Peppol receiver answers, signed, and leaves nothing stored.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import request from 'supertest';
import { parseXml } from '../../src/formats/xml/secure-parser';
import { readSignal } from '../../src/peppol/as4/signals';
import { verifyEnvelopeSignature } from '../../src/peppol/as4/signature';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { RevocationChecker } from '../../src/peppol/pki/revocation';
import {
  apSubject,
  createIntermediateCa,
  createRootCa,
  issueCertificate,
  type TestPki,
} from '../support/peppol/test-pki';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../src/peppol/identifiers';
import { buildMls } from '../../src/peppol/mls';
import { NS } from '../../src/formats/xml/namespaces';
import { SentInstanceRepository } from '../../src/storage/peppol/sent-instance.repository';
import {
  HEADER,
  RECEIVER,
  flipByte,
  gzipped,
  manualMessage,
  message,
  rewrap,
  sbd,
  wrapSignature,
} from '../support/as4-messages';
import { RecordingWorkflowStarter, createTestContext, type TestContext } from '../support/test-app';
import { startCrlServer, type CrlServer } from '../support/peppol/crl-server';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';

const DAY = 86_400_000;
const MAX_MESSAGE = 2 * 1024 * 1024;
const MAX_INFLATED = 5 * 1024 * 1024;

let pki: TestPki;
let foreign: KeyMaterial;
let expired: KeyMaterial;
let ctx: TestContext;
let crl: CrlServer;

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
  // The test PKI's CRLs, served by a local server its distribution point names are routed to; every message here is
  // checked for revocation.
  crl = await startCrlServer();
  crl.files.set('/ap-ca.crl', pki.crls.apCa);
  ctx = await createTestContext('asfourreceiver', {
    revocation: new RevocationChecker({ dispatcher: crl.dispatcher, timeoutMs: 2000 }),
    env: {
      AS4_REVOCATION_CHECK: 'true',
      PEPPOL_AP_KEYSTORE: path.join(TEST_PKI_DIR, 'ap-receiver.p12'),
      PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
      // The PKCS#12 trust store (root + AP CA), as an operator would configure the Peppol one.
      PEPPOL_AP_CA: path.join(TEST_PKI_DIR, 'ap-truststore.p12'),
      PEPPOL_AP_CA_PASSWORD: 'test',
      AS4_MAX_MESSAGE_BYTES: String(MAX_MESSAGE),
      AS4_MAX_DECOMPRESSED_BYTES: String(MAX_INFLATED),
    },
  });
  const tenant = await ctx.core.directory.createTenant({ name: 'receiving tenant' });
  await ctx.core.directory.createParty({
    tenantId: tenant._id,
    partyId: RECEIVER.value,
    legalEntityId: `NL:${RECEIVER.value}`,
    name: 'Receiver BV',
  });
}, 180_000);

afterAll(async () => {
  await ctx?.close();
  await crl?.close();
});

async function stored(): Promise<{ records: number; blobs: number }> {
  const db = ctx.core.db.connection.db;
  if (!db) throw new Error('no database handle');
  return {
    records: await ctx.core.db.models.As4Inbound.countDocuments().exec(),
    blobs: await db.collection('blobs').countDocuments(),
  };
}

function post(m: { contentType: string; body: Buffer }) {
  return request(ctx.app).post('/as4').set('Content-Type', m.contentType).send(m.body);
}

/** Posts, expects a signed ebMS error with `code`, and checks nothing was stored. */
async function refused(
  m: { contentType: string; body: Buffer },
  code: string,
  description: RegExp,
  status = 200,
): Promise<void> {
  const before = await stored();
  const res = await post(m);
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/soap\+xml/);
  const xml = res.text;
  const signal = readSignal(xml, {
    sentMessageId: 'unused',
    sentReferences: [],
    apCertificateAuthorities: [pki.apCa.certificate],
  });
  expect(signal).toMatchObject({
    kind: 'error',
    signed: true,
    errors: [{ errorCode: code, description: expect.stringMatching(description) }],
  });
  expect(verifyEnvelopeSignature(parseXml(xml), []).certificate.fingerprint256).toBe(
    pki.apReceiver.certificate.fingerprint256,
  );
  expect(await stored()).toEqual(before);
}

describe('POST /as4', () => {
  it('stores a good message and answers the signed receipt; a repeat gets the same receipt and stores nothing', async () => {
    const doc = sbd();
    const msg = message(pki, { sbd: doc });
    const before = await stored();
    const res = await post(msg);
    expect(res.status).toBe(200);
    const receipt = readSignal(res.text, {
      sentMessageId: msg.messageId,
      sentReferences: msg.references,
      apCertificateAuthorities: [pki.apCa.certificate],
    });
    expect(receipt.kind).toBe('receipt');
    expect(await stored()).toEqual({ records: before.records + 1, blobs: before.blobs + 1 });

    const record = await ctx.core.db.models.As4Inbound.findById(msg.messageId).lean().exec();
    expect(record).toMatchObject({
      partyId: RECEIVER.value,
      fromSeatId: 'POP000001',
      sender: `iso6523-actorid-upis::${HEADER.sender.value}`,
      countryC1: 'NL',
      state: 'stored',
    });
    // The receive workflow is started for the stored message, with ids only.
    expect((ctx.workflows as RecordingWorkflowStarter).receiveStarted).toContainEqual({
      tenantId: record?.tenantId,
      messageId: msg.messageId,
    });
    expect((await ctx.core.db.blobs.read(record?.blobId as string)).equals(doc)).toBe(true);

    const again = await post(msg);
    expect([again.status, again.text]).toEqual([200, res.text]);
    expect(await stored()).toEqual({ records: before.records + 1, blobs: before.blobs + 1 });
  });

  it('refuses a tampered header (EBMS:0101)', async () => {
    const msg = message(pki);
    await refused(
      {
        contentType: msg.contentType,
        body: rewrap(msg, { soap: (x) => x.replace('>0088:4562458856624<', '>0088:4562458856625<') }),
      },
      'EBMS:0101',
      /digest of #msg-.* does not match/,
    );
  });

  it('refuses a tampered attachment (EBMS:0102)', async () => {
    const msg = message(pki);
    await refused(
      { contentType: msg.contentType, body: rewrap(msg, { attachment: (b) => flipByte(b) }) },
      'EBMS:0102',
      /does not decrypt/,
    );
  });

  it('refuses a wrapped signature (EBMS:0101)', async () => {
    const msg = message(pki);
    await refused(
      { contentType: msg.contentType, body: rewrap(msg, { soap: wrapSignature }) },
      'EBMS:0101',
      /eb:Messaging header is not covered by the signature/,
    );
  });

  it('refuses a signer from another CA and an expired signer (EBMS:0101)', async () => {
    await refused(message(pki, { signer: foreign }), 'EBMS:0101', /not issued by a configured CA/);
    await refused(message(pki, { signer: expired }), 'EBMS:0101', /expired/);
  });

  it("refuses a revoked signer (EBMS:0101) after fetching the AP CA's CRL", async () => {
    await refused(message(pki, { signer: pki.apRevoked }), 'EBMS:0101', /was revoked on .*keyCompromise/);
    expect(crl.hits.get('/ap-ca.crl')).toBeGreaterThanOrEqual(1);
  });

  it('refuses a gzip bomb (EBMS:0303)', async () => {
    const bomb = manualMessage(pki, { data: gzipped(Buffer.alloc(4 * MAX_INFLATED)) });
    expect(bomb.body.length).toBeLessThan(100_000);
    await refused(bomb, 'EBMS:0303', new RegExp(`decompresses to more than ${MAX_INFLATED} bytes`));
  });

  it('refuses an oversize message with 413 before reading it', async () => {
    const big = {
      contentType: 'multipart/related; boundary="b"; type="application/soap+xml"',
      body: Buffer.alloc(MAX_MESSAGE + 1, 0x41),
    };
    await refused(big, 'EBMS:0004', new RegExp(`exceeds ${MAX_MESSAGE} bytes`), 413);
  });

  it('refuses a body that is not MIME (EBMS:0007)', async () => {
    await refused(
      {
        contentType: 'application/soap+xml',
        body: Buffer.from('<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"/>'),
      },
      'EBMS:0007',
      /expected a multipart body/,
    );
    await refused({ contentType: 'text/plain', body: Buffer.from('hello') }, 'EBMS:0007', /expected a multipart body/);
  });

  it('refuses an SBDH that contradicts the AS4 header or its own payload (EBMS:0004)', async () => {
    const otherSender = message(pki, { header: { ...HEADER, sender: peppolParticipant('0088:1111111111111') } });
    await refused(otherSender, 'EBMS:0004', /originalSender does not match the SBDH sender/);
    const wrongType = message(pki, {
      sbd: Buffer.from(
        sbd()
          .toString('utf8')
          .replace(/(<(?:\w+:)?Type>)Invoice(<\/(?:\w+:)?Type>)/, '$1CreditNote$2'),
      ),
    });
    await refused(wrongType, 'EBMS:0004', /^Peppol SBDH Issue: .*Type/);
  });

  it('refuses a receiver the gateway does not serve (EBMS:0004 PEPPOL:NOT_SERVICED)', async () => {
    const header = { ...HEADER, receiver: peppolParticipant('0088:1111111111111') };
    const msg = message(pki, { header, sbd: sbd({ receiver: header.receiver }) });
    const res = await post(msg);
    expect(
      readSignal(res.text, {
        sentMessageId: msg.messageId,
        sentReferences: [],
        apCertificateAuthorities: [pki.apCa.certificate],
      }),
    ).toMatchObject({
      kind: 'error',
      refToMessageId: msg.messageId,
      errors: [{ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' }],
    });
  });

  it('serves a party registered with capitals whatever the case of the participant id a message carries', async () => {
    const tenant = await ctx.core.directory.createTenant({ name: 'capitals tenant' });
    const partyId = '0184:DK12345678';
    await ctx.core.directory.createParty({
      tenantId: tenant._id,
      partyId,
      legalEntityId: 'DK:0184:DK12345678',
      name: 'DK',
    });
    // The same participant in another case is not a second party.
    await expect(
      ctx.core.directory.createParty({
        tenantId: tenant._id,
        partyId: '0184:dk12345678',
        legalEntityId: 'DK:x',
        name: 'x',
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    for (const value of ['0184:dk12345678', '0184:DK12345678', '0184:Dk12345678']) {
      const header = { ...HEADER, receiver: peppolParticipant(value) };
      const msg = message(pki, { header, sbd: sbd({ receiver: header.receiver }) });
      const res = await post(msg);
      const signal = readSignal(res.text, {
        sentMessageId: msg.messageId,
        sentReferences: msg.references,
        apCertificateAuthorities: [pki.apCa.certificate],
      });
      expect([value, signal.kind]).toEqual([value, 'receipt']);
      const record = await ctx.core.db.models.As4Inbound.findById(msg.messageId).lean().exec();
      expect(record).toMatchObject({ tenantId: tenant._id, partyId });
    }
  });

  it('stores an MLS to our service provider id under the party whose message it answers; refuses one about none', async () => {
    const tenant = await ctx.core.directory.createTenant({ name: 'mls tenant' });
    const partyId = '0106:80808080';
    await ctx.core.directory.createParty({ tenantId: tenant._id, partyId, legalEntityId: 'NL:MLS', name: 'MLS BV' });
    const instanceId = randomUUID();
    await new SentInstanceRepository(ctx.core.db.models).record({
      instanceId,
      tenantId: tenant._id,
      documentId: randomUUID(),
      partyId,
      generation: 0,
    });
    const mlsHeader = {
      sender: peppolParticipant('0242:000001'),
      // The receiving AP of the test PKI is POP000002.
      receiver: peppolParticipant('0242:000002'),
      documentType: documentTypeId(
        DOCTYPE_SCHEME_BUSDOX,
        'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1',
      ),
      process: processId(PROCESS_SCHEME, 'urn:peppol:edec:mls'),
    };
    const mls = (referencedInstanceId: string) => {
      const xml = buildMls({
        responseCode: 'RE',
        description: 'Rejected',
        lines: [{ reasonCode: 'BV', description: 'Sum', ruleId: 'BR-CO-10' }],
        referencedInstanceId,
        sender: mlsHeader.sender,
        receiver: mlsHeader.receiver,
      }).xml;
      const root = { namespaceURI: NS.ublApplicationResponse, localName: 'ApplicationResponse' };
      return message(pki, { header: mlsHeader, sbd: sbd({ ...mlsHeader, payload: { xml: Buffer.from(xml), root } }) });
    };

    const ours = mls(instanceId);
    const res = await post(ours);
    expect(res.status).toBe(200);
    expect(
      readSignal(res.text, {
        sentMessageId: ours.messageId,
        sentReferences: ours.references,
        apCertificateAuthorities: [pki.apCa.certificate],
      }).kind,
    ).toBe('receipt');
    expect(await ctx.core.db.models.As4Inbound.findById(ours.messageId).lean().exec()).toMatchObject({
      tenantId: tenant._id,
      partyId,
      receiver: 'iso6523-actorid-upis::0242:000002',
    });

    const before = await stored();
    const unknown = mls(randomUUID());
    const refused = await post(unknown);
    const signal = readSignal(refused.text, {
      sentMessageId: unknown.messageId,
      sentReferences: [],
      apCertificateAuthorities: [pki.apCa.certificate],
    });
    expect(signal).toMatchObject({
      kind: 'error',
      errors: [{ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' }],
    });
    expect(JSON.stringify(signal)).toContain('which is no message this access point sent');
    expect(await stored()).toEqual(before);
  });

  it('is not behind bearer authentication, and answers 503 where no AP key is configured', async () => {
    const plain = await createTestContext('asfourplain');
    try {
      const res = await request(plain.app)
        .post('/as4')
        .set('Content-Type', 'multipart/related; boundary=b')
        .send(Buffer.from('x'));
      expect([res.status, res.text]).toEqual([503, expect.stringMatching(/not configured/)]);
    } finally {
      await plain.close();
    }
  });
});
