/**
 * What comes back, end to end on real servers: two gateways (each an API, a worker on its own task queue of the
 * Temporal dev server, its own database and its own access-point key) and phase4, found through a local SML zone and a
 * signing SMP, all on 127.0.0.1.
 *
 * Gateway A serves the supplier, gateway B the buyer, who has message-level status on ("reviews") with ALWAYS_SEND.
 * A sends an invoice to B; B validates it, announces InvoiceReceived and answers with an MLS (AP) that A announces
 * as MessageLevelStatusReceived; B answers the invoice with an Invoice Response (RE with a reason) that A announces
 * and shows on the invoice's status; A answers that response with a manual MLS (v1-beta endpoint) that B announces.
 * phase4 sends B an invalid invoice and receives B's MLS (RE with BV lines naming the failing rules); phase4 sends A
 * an MLS built to the specification about A's invoice, which A accepts and announces. B orders from A, and A's
 * Order Response (AP) comes back to B, which announces it on its order.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { NS } from '../../src/formats/xml/namespaces';
import {
  TRANSPORT_PROFILE_AS4_V2,
  peppolParticipant,
  spidOfSeatId,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from '../../src/peppol/identifiers';
import { INVOICE_RESPONSE_DOCUMENT_TYPE, INVOICE_RESPONSE_PROCESS } from '../../src/peppol/invoice-response';
import { ORDERING_PROCESS, ORDER_DOCUMENT_TYPE, ORDER_RESPONSE_DOCUMENT_TYPE } from '../../src/peppol/order-response';
import { buildMls, readMls } from '../../src/peppol/mls';
import { readRawMls, typedMls } from '../../src/peppol/mls/read';
import type { KeyMaterial } from '../../src/peppol/pki/key-material';
import { writePkcs12 } from '../../src/peppol/pki/pkcs12';
import { buildSbd, parseSbd } from '../../src/peppol/sbdh';
import { naptrName } from '../../src/peppol/sml';
import { BILLING_PROCESS, BIS3_INVOICE, MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../../src/peppol/smp-publisher';
import { HookRepository } from '../../src/storage/hooks/hook.repository';
import { PeppolDirectoryRepository } from '../../src/storage/peppol/peppol-directory.repository';
import { corpusFile } from '../support/corpus';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { orderXml } from '../support/peppol/orders';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { apSubject, issueCertificate, type TestPki } from '../support/peppol/test-pki';
import { Phase4Receiver, Phase4Sender, type HarnessKeys } from '../support/phase4-harness';
import { eventually } from '../support/poll';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { testWorkflowBundle } from '../support/workflow-bundle';

jest.setTimeout(240_000);

const ZONE = 'participant.sml.lifecycle.test';
const BIS3 = 'en16931/ubl-examples/BIS3_Invoice_positive.XML';
/** BT-34 and BT-49 of BIS3, registered with capitals as they are written in the invoice. */
const SELLER = '0184:DK12345678';
const BUYER = '0184:DK87654321';
const FAST: RetrySchedule = { kind: 'table', delaysMs: [300, 300] };
/** phase4's access point: a third certificate of the test AP CA. */
const PHASE4_SEAT = 'POP000003';

const pkiFile = (name: string): string => path.join(TEST_PKI_DIR, name);

interface Gateway {
  ctx: TestContext;
  starter: TemporalWorkflowStarter;
  worker: RunningWorker;
  front: Server;
  as4Url: string;
  tenantId: string;
  partyId: string;
  token: string;
  spid: ParticipantId;
}

interface WebhookEventRecord {
  _id: string;
  topic: string;
  documentId?: string;
  refToDocumentId?: string;
  details?: Record<string, string>;
}

describe('two gateways and phase4: invoice, MLS both ways, Invoice Response (real Temporal, DNS, SMP and AS4)', () => {
  const { temporalAddress } = requireEnv();
  let pki: TestPki;
  let dir: string;
  let dns: LocalDnsZone;
  let smp: LocalSmp;
  let a: Gateway;
  let b: Gateway;
  let phase4Key: KeyMaterial;
  let phase4In: Phase4Receiver;
  let phase4Out: Phase4Sender;
  const gateways: Gateway[] = [];

  async function startGateway(name: string, key: 'ap-sender' | 'ap-receiver', seat: string, partyId: string) {
    const taskQueue = `peppol-lifecycle-${name}-${randomUUID()}`;
    const starter = await TemporalWorkflowStarter.connect({
      address: temporalAddress,
      namespace: 'default',
      taskQueue,
      searchAttributes: false,
      peppolSendSchedule: FAST,
    });
    const ctx = await createTestContext(`lifecycle${name}`, {
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
        PEPPOL_AP_KEYSTORE: `${pkiFile(`${key}.p12`)}#${key}`,
        PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
        PEPPOL_AP_CA: pkiFile('ap-ca.crt.pem'),
        PEPPOL_SMP_TRUSTSTORE: path.join(dir, 'smp-ca.pem'),
        PEPPOL_SML_ZONE: ZONE,
        PEPPOL_DNS_SERVERS: dns.address,
        PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      },
    });
    const tenantId = (await ctx.core.directory.createTenant({ name: `tenant ${name}` }))._id;
    await ctx.core.directory.createParty({ tenantId, partyId, legalEntityId: `DK:${partyId}`, name: `Party ${name}` });
    const token = await ctx.token(await ctx.createClient([tenantId]));
    const front = createServer((req, res) => {
      ctx.app(req, res);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const as4Url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/as4`;
    const worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
    const gateway = { ctx, starter, worker, front, as4Url, tenantId, partyId, token, spid: spidOfSeatId(seat) };
    gateways.push(gateway);
    return gateway;
  }

  function publish(
    participant: ParticipantId,
    documentType: DocumentTypeId,
    process: ProcessId,
    url: string,
    certificate: KeyMaterial['certificate'],
  ): void {
    dns.set(naptrName(participant, ZONE), [
      { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
    ]);
    smp.publish(participant, documentType, [
      { process, endpoints: [{ transportProfile: TRANSPORT_PROFILE_AS4_V2, url, certificate }] },
    ]);
  }

  beforeAll(async () => {
    pki = await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'peppol-lifecycle-'));
    writeFileSync(path.join(dir, 'smp-ca.pem'), pki.smpCa.certificate.toString());
    dns = await new LocalDnsZone().start();
    smp = await new LocalSmp(pki.smp, '/smp').start();

    a = await startGateway('a', 'ap-sender', 'POP000001', SELLER);
    b = await startGateway('b', 'ap-receiver', 'POP000002', BUYER);

    // phase4 plays a third access point, with its own certificate of the test AP CA.
    phase4Key = await issueCertificate(pki.apCa, { subject: apSubject(PHASE4_SEAT) });
    writeFileSync(
      path.join(dir, 'phase4.p12'),
      writePkcs12({ password: 'test', key: { ...phase4Key, alias: 'phase4' } }),
    );
    const phase4Keys: HarnessKeys = {
      keystore: path.join(dir, 'phase4.p12'),
      password: 'test',
      alias: 'phase4',
      truststore: pkiFile('ap-truststore.p12'),
      apCa: pkiFile('ap-ca.crt.pem'),
    };
    const phase4Spid = spidOfSeatId(PHASE4_SEAT);
    [phase4In, phase4Out] = await Promise.all([
      Phase4Receiver.start(phase4Keys, { outDir: path.join(dir, 'phase4-in'), served: [phase4Spid.value] }),
      Phase4Sender.start({ ...phase4Keys, seatId: PHASE4_SEAT }),
    ]);

    // Where everything is received: B's buyer for invoices and Order Responses, A's seller for Invoice Responses and
    // orders, each access point's service provider id for MLS.
    publish(peppolParticipant(BUYER), BIS3_INVOICE, BILLING_PROCESS, b.as4Url, pki.apReceiver.certificate);
    publish(
      peppolParticipant(SELLER),
      INVOICE_RESPONSE_DOCUMENT_TYPE,
      INVOICE_RESPONSE_PROCESS,
      a.as4Url,
      pki.apSender.certificate,
    );
    publish(peppolParticipant(SELLER), ORDER_DOCUMENT_TYPE, ORDERING_PROCESS, a.as4Url, pki.apSender.certificate);
    publish(
      peppolParticipant(BUYER),
      ORDER_RESPONSE_DOCUMENT_TYPE,
      ORDERING_PROCESS,
      b.as4Url,
      pki.apReceiver.certificate,
    );
    publish(a.spid, MLS_DOCUMENT_TYPE, MLS_PROCESS, a.as4Url, pki.apSender.certificate);
    publish(b.spid, MLS_DOCUMENT_TYPE, MLS_PROCESS, b.as4Url, pki.apReceiver.certificate);
    publish(phase4Spid, MLS_DOCUMENT_TYPE, MLS_PROCESS, phase4In.url, phase4Key.certificate);

    // The buyer wants message-level status on every document: MLS on for the party ("reviews"), ALWAYS_SEND.
    await new PeppolDirectoryRepository(b.ctx.core.db.models).putParticipant({
      tenantId: b.tenantId,
      partyId: BUYER,
      registered: false,
      services: [],
      reviews: true,
    });
    await new HookRepository(b.ctx.core.db.models).create({
      id: randomUUID(),
      tenantId: b.tenantId,
      partyId: BUYER,
      action: 'peppol',
      name: 'Peppol with MLS',
      url: null,
      topic: null,
      topics: [],
      filter: null,
      output: [],
      mlsType: 'ALWAYS_SEND',
      isActive: true,
      timeoutMs: null,
      secureKey: null,
    });
  }, 600_000);

  afterAll(async () => {
    await Promise.all([phase4In?.stop(), phase4Out?.stop()]);
    for (const g of gateways) {
      await g.worker.stop();
      await g.starter.close();
      g.front.closeAllConnections();
      await new Promise((r) => g.front.close(r));
      await g.ctx.close();
    }
    await Promise.all([dns?.stop(), smp?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The first event of `topic` on gateway `g` that `match` accepts, waited for. */
  function eventOf(
    g: Gateway,
    topic: string,
    match: (e: WebhookEventRecord) => boolean = () => true,
  ): Promise<WebhookEventRecord> {
    return eventually(
      async () => {
        const events = await g.ctx.core.db.models.WebhookEvent.find({ topic }).lean<WebhookEventRecord[]>().exec();
        return events.find(match);
      },
      90_000,
      `${topic} on gateway ${g.partyId}`,
      200,
    );
  }

  let salesInvoiceId: string;
  let purchaseInvoiceId: string;

  it('A sends an invoice; B validates and announces it and answers AP; A announces the MLS on the invoice', async () => {
    const sent = await request(a.ctx.app)
      .post(`/api/v1/${SELLER}/salesInvoice/send`)
      .auth(a.token, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(corpusFile(BIS3));
    expect(sent.status).toBe(200);
    salesInvoiceId = sent.body.id as string;
    await eventOf(a, 'InvoiceSent', (e) => e.documentId === salesInvoiceId);

    const received = await eventOf(b, 'InvoiceReceived');
    purchaseInvoiceId = received.documentId as string;
    const purchase = await b.ctx.core.documents.find(b.tenantId, purchaseInvoiceId);
    expect(purchase).toMatchObject({ partyId: BUYER, direction: 'inbound' });
    expect(purchase?.validation).toMatchObject({ errorCount: 0 });

    const mlsSent = await eventOf(b, 'MessageLevelStatusSent', (e) => e.refToDocumentId === purchaseInvoiceId);
    expect(mlsSent.details).toMatchObject({ statusCode: 'AP', protocol: 'peppol' });
    const mls = await eventOf(a, 'MessageLevelStatusReceived', (e) => e.refToDocumentId === salesInvoiceId);
    expect(mls.details).toMatchObject({ statusCode: 'AP' });
    // The MLS itself is a document of A's party, downloadable like any other.
    const download = await request(a.ctx.app)
      .get(`/api/v1/${SELLER}/generic/${mls.documentId}/download`)
      .auth(a.token, { type: 'bearer' });
    expect(download.status).toBe(200);
    expect(readMls(Buffer.from(download.text))).toMatchObject({ ok: true, mls: { responseCode: 'AP' } });
  });

  let responseAtA: string;

  it('B rejects the invoice with an Invoice Response; A announces it and shows it on the invoice', async () => {
    const started = await request(b.ctx.app)
      .post(`/api/v1/${BUYER}/purchaseInvoice/${purchaseInvoiceId}/response`)
      .auth(b.token, { type: 'bearer' })
      .send({ status: 'RE', note: 'Wrong order number', reasons: [{ code: 'REF', text: 'PO 4711 is not ours' }] });
    expect(started.status).toBe(202);
    await eventOf(b, 'InvoiceResponseSent', (e) => e.documentId === started.body.id);

    const response = await eventOf(a, 'InvoiceResponseReceived', (e) => e.refToDocumentId === salesInvoiceId);
    expect(response.details).toMatchObject({ statusCode: 'RE' });
    responseAtA = response.documentId as string;
    const status = await request(a.ctx.app)
      .get(`/api/v1/${SELLER}/salesInvoice/${salesInvoiceId}/status`)
      .auth(a.token, { type: 'bearer' });
    expect(status.body).toMatchObject({ state: 'delivered', buyerResponse: { statusCode: 'RE' } });
  });

  it('A acknowledges the response with a manual MLS (v1-beta); B announces it on the response it sent', async () => {
    const sent = await request(a.ctx.app)
      .post(`/api/v1-beta/generic/${responseAtA}/response`)
      .auth(a.token, { type: 'bearer' })
      .send({ status: 'AB', description: 'Response received' });
    expect(sent.status).toBe(202);
    const mls = await eventOf(b, 'MessageLevelStatusReceived', (e) => e.details?.statusCode === 'AB');
    const responseAtB = await eventOf(b, 'InvoiceResponseSent');
    expect(mls.refToDocumentId).toBe(responseAtB.documentId);
  });

  it('phase4 sends B an invalid invoice and receives its MLS: RE with BV lines naming the failing rules', async () => {
    const xml = corpusFile(BIS3)
      .toString('utf8')
      .replace('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>', '<cbc:InvoiceTypeCode>999</cbc:InvoiceTypeCode>');
    expect(xml).toContain('<cbc:InvoiceTypeCode>999</cbc:InvoiceTypeCode>');
    const sbd = buildSbd({
      sender: peppolParticipant(SELLER),
      receiver: peppolParticipant(BUYER),
      documentType: BIS3_INVOICE,
      process: BILLING_PROCESS,
      countryC1: 'DK',
      mlsTo: spidOfSeatId(PHASE4_SEAT),
      mlsType: 'FAILURE_ONLY',
      payload: { xml: Buffer.from(xml) },
    });
    const file = path.join(dir, 'invalid.xml');
    writeFileSync(file, sbd.xml);
    const r = await phase4Out.send(b.as4Url, pkiFile('ap-receiver.crt.pem'), file, `invalid-${randomUUID()}@phase4`);
    expect(r).toMatchObject({ result: 'success', receiptCheck: 'RECEIPT_OK' });

    // Readable, so announced as received, with the verdict of the official rules.
    const received = await eventOf(b, 'InvoiceReceived', (e) => e.documentId !== purchaseInvoiceId);
    const invalid = await b.ctx.core.documents.find(b.tenantId, received.documentId as string);
    expect(invalid).toMatchObject({ state: 'invalid' });
    const got = await phase4In.nextReceived(90_000);
    const stored = parseSbd(readFileSync(got.file));
    expect(stored.header.documentType).toEqual(MLS_DOCUMENT_TYPE);
    expect(stored.header.receiver).toEqual(spidOfSeatId(PHASE4_SEAT));
    if (stored.payload.kind !== 'xml') throw new Error(`phase4 stored a ${stored.payload.kind} payload`);
    const read = typedMls(readRawMls(stored.payload.element));
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect(read.mls).toMatchObject({ responseCode: 'RE', referencedInstanceId: sbd.header.instanceIdentifier });
    const bv = read.mls.lines.filter((l) => l.reasonCode === 'BV');
    expect(bv.length).toBeGreaterThan(0);
    expect(bv.map((l) => l.ruleId)).toEqual(expect.arrayContaining(['BR-CL-01']));
  });

  it('phase4 sends A an MLS about A’s invoice, built to the specification; A accepts and announces it', async () => {
    const instance = await a.ctx.core.db.models.SentInstance.findOne({ documentId: salesInvoiceId }).lean().exec();
    expect(instance).not.toBeNull();
    const phase4Spid = spidOfSeatId(PHASE4_SEAT);
    const mls = buildMls({
      responseCode: 'AB',
      referencedInstanceId: instance!._id,
      sender: phase4Spid,
      receiver: a.spid,
    });
    const sbd = buildSbd({
      sender: phase4Spid,
      receiver: a.spid,
      documentType: MLS_DOCUMENT_TYPE,
      process: MLS_PROCESS,
      countryC1: 'DK',
      payload: {
        xml: Buffer.from(mls.xml),
        root: { namespaceURI: NS.ublApplicationResponse, localName: 'ApplicationResponse' },
      },
    });
    const file = path.join(dir, 'mls-to-a.xml');
    writeFileSync(file, sbd.xml);
    const r = await phase4Out.send(a.as4Url, pkiFile('ap-sender.crt.pem'), file, `mls-${randomUUID()}@phase4`);
    expect(r).toMatchObject({ result: 'success', receiptCheck: 'RECEIPT_OK' });
    const announced = await eventOf(
      a,
      'MessageLevelStatusReceived',
      (e) => e.refToDocumentId === salesInvoiceId && e.details?.statusCode === 'AB',
    );
    expect(announced.details).toMatchObject({ statusCode: 'AB' });
  });
  it('B orders from A; A accepts with an Order Response that B announces on its order', async () => {
    const buyer = { scheme: '0184', value: BUYER.split(':')[1] as string, name: 'Company B' };
    const seller = { scheme: '0184', value: SELLER.split(':')[1] as string, name: 'Company A' };
    const sent = await request(b.ctx.app)
      .post(`/api/v1/${BUYER}/purchaseOrder/send`)
      .auth(b.token, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(orderXml('PO-LIFECYCLE-1', { buyer, seller }));
    expect(sent.status).toBe(200);
    const orderId = sent.body.id as string;
    await eventOf(b, 'OrderSent', (e) => e.documentId === orderId);

    const received = await eventOf(a, 'OrderReceived', (e) => e.details?.orderId === 'PO-LIFECYCLE-1');
    const answered = await request(a.ctx.app)
      .post(`/api/v1/${SELLER}/salesOrder/${received.documentId}/response`)
      .auth(a.token, { type: 'bearer' })
      .send({ status: 'AP', note: 'All lines confirmed' });
    expect(answered.status).toBe(202);
    await eventOf(a, 'OrderResponseSent', (e) => e.refToDocumentId === received.documentId);

    const response = await eventOf(b, 'OrderResponseReceived', (e) => e.refToDocumentId === orderId);
    expect(response.details).toMatchObject({ statusCode: 'AP', orderId: 'PO-LIFECYCLE-1' });
  });
});
