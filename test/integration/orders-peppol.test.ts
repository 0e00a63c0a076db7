/**
 * A purchase order and its Order Response on real servers (Temporal dev server, worker, local SML zone, signing SMP,
 * AS4 over loopback): the buyer's party uploads an order with POST …/purchaseOrder/send; its sendOrder run validates
 * it, finds the seller's access point for the Order document type and delivers it over AS4; the seller's receive run
 * announces OrderReceived; the seller answers with POST …/salesOrder/{documentId}/response (CA with line answers); its
 * sendOrderResponse run delivers the response to the buyer's access point, whose receive run matches it to the order
 * sent and announces OrderResponseReceived with refToDocumentId = the buyer's order. Buyer and seller are parties of
 * two tenants; both are served by the gateway's access point, which sends to its own /as4 on loopback.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { TRANSPORT_PROFILE_AS4_V2, peppolParticipant } from '../../src/peppol/identifiers';
import {
  ORDERING_PROCESS,
  ORDER_DOCUMENT_TYPE,
  ORDER_RESPONSE_DOCUMENT_TYPE,
  readOrderForResponse,
} from '../../src/peppol/order-response';
import { readOrderResponse } from '../../src/peppol/orders';
import { naptrName } from '../../src/peppol/sml';
import type { SendOrderResult } from '../../workflows/contracts/send-order';
import type { SendOrderResponseResult } from '../../workflows/contracts/send-order-response';
import { eventually } from '../support/poll';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { ORDER_BUYER, ORDER_SELLER, orderXml } from '../support/peppol/orders';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';
import type { TestPki } from '../support/peppol/test-pki';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { testWorkflowBundle } from '../support/workflow-bundle';

const ZONE = 'participant.sml.orders.test';
const BUYER = `${ORDER_BUYER.scheme}:${ORDER_BUYER.value}`;
const SELLER = `${ORDER_SELLER.scheme}:${ORDER_SELLER.value}`;
const BUYERS = 'tenantOrderBuyers';
const SELLERS = 'tenantOrderSellers';
const FAST: RetrySchedule = { kind: 'table', delaysMs: [300, 300] };

describe('an order and its order response between two parties over Peppol AS4 (real Temporal, DNS, SMP)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `orders-peppol-${randomUUID()}`;
  let pki: TestPki;
  let dir: string;
  let dns: LocalDnsZone;
  let smp: LocalSmp;
  let gw: TestContext;
  let front: Server;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let buyerToken: string;
  let sellerToken: string;

  beforeAll(async () => {
    pki = await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'orders-peppol-'));
    dns = await new LocalDnsZone().start();
    smp = await new LocalSmp(pki.smp, '/smp').start();
    const truststore = path.join(dir, 'smp-ca.pem');
    writeFileSync(truststore, pki.smpCa.certificate.toString());
    starter = await TemporalWorkflowStarter.connect({
      address: temporalAddress,
      namespace: 'default',
      taskQueue,
      searchAttributes: false,
      peppolSendSchedule: FAST,
    });
    gw = await createTestContext('orderspeppol', {
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
        ...testApEnv('ap-sender'),
        PEPPOL_SMP_TRUSTSTORE: truststore,
        PEPPOL_SML_ZONE: ZONE,
        PEPPOL_DNS_SERVERS: dns.address,
        PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      },
    });
    front = createServer((req, res) => {
      gw.app(req, res);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const as4Url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/as4`;
    const endpoint = {
      transportProfile: TRANSPORT_PROFILE_AS4_V2,
      url: as4Url,
      certificate: pki.apSender.certificate,
    };
    // The seller takes orders, the buyer order responses: both at this gateway's access point.
    for (const [participant, documentType] of [
      [SELLER, ORDER_DOCUMENT_TYPE],
      [BUYER, ORDER_RESPONSE_DOCUMENT_TYPE],
    ] as const) {
      const p = peppolParticipant(participant);
      dns.set(naptrName(p, ZONE), [
        { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
      ]);
      smp.publish(p, documentType, [{ process: ORDERING_PROCESS, endpoints: [endpoint] }]);
    }
    const d = gw.core.directory;
    await d.createTenant({ id: BUYERS, name: 'Buyers' });
    await d.createTenant({ id: SELLERS, name: 'Sellers' });
    await d.createParty({ tenantId: BUYERS, partyId: BUYER, legalEntityId: 'DK:B', name: 'Buyer AS' });
    await d.createParty({ tenantId: SELLERS, partyId: SELLER, legalEntityId: 'NL:S', name: 'Seller BV' });
    buyerToken = await gw.token(await gw.createClient([BUYERS]));
    sellerToken = await gw.token(await gw.createClient([SELLERS]));
    worker = await startWorker(gw.config, { workflowBundle: await testWorkflowBundle() });
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    if (front) {
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
    }
    await gw?.close();
    await Promise.all([dns?.stop(), smp?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function resultOf<T>(workflowId: string): Promise<T> {
    const conn = await Connection.connect({ address: temporalAddress });
    try {
      return (await new Client({ connection: conn }).workflow.getHandle(workflowId).result()) as T;
    } finally {
      await conn.close();
    }
  }

  const eventOf = (tenantId: string, topic: string) =>
    eventually(
      async () => (await gw.core.db.models.WebhookEvent.findOne({ tenantId, topic }).lean().exec()) ?? undefined,
      60_000,
      `${topic} in ${tenantId}`,
      200,
    );

  it('sends the order to the seller and the seller’s CA response back to the buyer', async () => {
    // The buyer sends its order.
    const order = orderXml('PO-RT-1');
    const sent = await request(gw.app)
      .post(`/api/v1/${BUYER}/purchaseOrder/send`)
      .auth(buyerToken, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(order);
    expect(sent.status).toBe(200);
    const orderId = sent.body.id as string;
    const orderRun = await resultOf<SendOrderResult>(`send-order:${BUYERS}:${orderId}`);
    expect({ reason: '', ...orderRun }).toMatchObject({ outcome: 'sent', attempts: 1, reason: '' });
    const orderSent = await eventOf(BUYERS, 'OrderSent');
    expect(orderSent).toMatchObject({
      documentId: orderId,
      details: expect.objectContaining({ orderId: 'PO-RT-1', protocol: 'peppol', attempt: '1' }),
    });
    const status = await request(gw.app)
      .get(`/api/v1/${BUYER}/purchaseOrder/${orderId}/status`)
      .auth(buyerToken, { type: 'bearer' });
    expect(status.body).toMatchObject({
      state: 'delivered',
      format: { id: 'peppol-order' },
      validation: { isValid: true },
    });

    // The seller's access point received it: OrderReceived for the seller's party.
    const received = await eventOf(SELLERS, 'OrderReceived');
    expect(received).toMatchObject({ details: expect.objectContaining({ orderId: 'PO-RT-1' }) });
    const receivedId = received.documentId as string;
    const copy = await request(gw.app)
      .get(`/api/v1/${SELLER}/generic/${receivedId}/download`)
      .auth(sellerToken, { type: 'bearer' })
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(copy.status).toBe(200);
    expect(readOrderForResponse(copy.body as Buffer)).toMatchObject({ id: 'PO-RT-1' });

    // The seller answers: conditionally accepted, line 1 changed, line 2 accepted.
    const answered = await request(gw.app)
      .post(`/api/v1/${SELLER}/salesOrder/${receivedId}/response`)
      .auth(sellerToken, { type: 'bearer' })
      .send({
        status: 'CA',
        note: 'Partly',
        lines: [
          { lineId: '1', status: '3', quantity: '1', note: 'Only one left' },
          { lineId: '2', status: '5' },
        ],
      });
    expect(answered.status).toBe(202);
    const responseRun = await resultOf<SendOrderResponseResult>(answered.body.run as string);
    expect({ reason: '', ...responseRun }).toMatchObject({
      outcome: 'sent',
      attempts: 1,
      reason: '',
      responseDocumentId: answered.body.id,
    });
    const responseSent = await eventOf(SELLERS, 'OrderResponseSent');
    expect(responseSent).toMatchObject({
      documentId: answered.body.id,
      refToDocumentId: receivedId,
      details: expect.objectContaining({ statusCode: 'CA', protocol: 'peppol' }),
    });
    const responseDoc = await gw.core.documents.find(SELLERS, answered.body.id as string);
    expect(responseDoc).toMatchObject({ direction: 'outbound', state: 'delivered' });

    // The buyer's access point received the response and matched it to the order it sent.
    const back = await eventOf(BUYERS, 'OrderResponseReceived');
    expect(back).toMatchObject({
      refToDocumentId: orderId,
      details: expect.objectContaining({ statusCode: 'CA', orderId: 'PO-RT-1' }),
    });
    const responseCopy = await request(gw.app)
      .get(`/api/v1/${BUYER}/generic/${back.documentId as string}/download`)
      .auth(buyerToken, { type: 'bearer' })
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(readOrderResponse(responseCopy.body as Buffer)).toMatchObject({
      ok: true,
      value: { responseCode: 'CA', orderId: 'PO-RT-1', note: 'Partly' },
    });
  }, 180_000);

  it('never sends an order the pinned rules refuse: OrderSentError with the failing rule, no attempt', async () => {
    const broken = Buffer.from(
      orderXml('PO-RT-2')
        .toString()
        .replace(
          '<cbc:LineExtensionAmount currencyID="EUR">150.00</cbc:LineExtensionAmount>',
          '<cbc:LineExtensionAmount currencyID="EUR">999.00</cbc:LineExtensionAmount>',
        ),
    );
    const sent = await request(gw.app)
      .post(`/api/v1/${BUYER}/purchaseOrder/send`)
      .auth(buyerToken, { type: 'bearer' })
      .set('Content-Type', 'application/xml')
      .send(broken);
    expect(sent.status).toBe(200);
    const orderId = sent.body.id as string;
    const run = await resultOf<SendOrderResult>(`send-order:${BUYERS}:${orderId}`);
    expect(run).toMatchObject({ outcome: 'invalid', attempts: 0, reason: expect.stringMatching(/PEPPOL-T01-R008/) });
    const error = await eventually(
      async () =>
        (await gw.core.db.models.WebhookEvent.findOne({
          tenantId: BUYERS,
          topic: 'OrderSentError',
          documentId: orderId,
        })
          .lean()
          .exec()) ?? undefined,
      30_000,
      'OrderSentError',
    );
    expect(error.details).toMatchObject({ stage: 'validation', orderId: 'PO-RT-2', attempt: '0' });
    const status = await request(gw.app)
      .get(`/api/v1/${BUYER}/purchaseOrder/${orderId}/status`)
      .auth(buyerToken, { type: 'bearer' });
    expect(status.body).toMatchObject({ validation: { isValid: false } });
    const history = (status.body as { history: Array<{ state: string }> }).history;
    expect(history.some((h) => h.state === 'sending')).toBe(false);
  }, 60_000);
});
