/**
 * The Peppol delivery step of sendInvoice on real servers: upload through the API → our worker on the Temporal dev
 * server → SML lookup in a local DNS zone → a signing SMP → AS4 to a second gateway instance (the receiving access
 * point, its own database and keys) on 127.0.0.1 → InvoiceSent* events delivered, signed, to a webhook receiver.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Element as XmlElement } from '@xmldom/xmldom';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { NS } from '../../src/formats';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import {
  DOCTYPE_SCHEME_BUSDOX,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  formatId,
  peppolParticipant,
} from '../../src/peppol/identifiers';
import { parseSbd } from '../../src/peppol/sbdh';
import { buildServiceMetadataXml, signServiceMetadata } from '../../src/peppol/smp-documents';
import type { TestPki } from '../support/peppol/test-pki';
import { naptrName } from '../../src/peppol/sml';
import { readSbdHeader } from '../../src/peppol/sbdh';
import { BILLING_PROCESS } from '../../src/peppol/smp-publisher';
import { transformDocument } from '../../src/transform';
import { verifyWebhook } from '../../src/webhooks/verify-webhook';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { ATTACHMENT_FILENAME, ATTACHMENT_MIME_CODE, withEmbeddedPdf } from '../support/embedded-attachment';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import {
  RecordingDeliveryStarter,
  createWebhookTestContext,
  startReceiver,
  type TestReceiver,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { eventually } from '../support/poll';
import { LocalDnsZone } from '../support/peppol/local-dns';
import { LocalSmp } from '../support/peppol/local-smp';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { workerProcesses, type WorkerProcess } from '../support/worker-process';
import { DELIVERED_AT_FIRST_ATTEMPT } from '../support/sending-network';

const ZONE = 'participant.sml.delivery.test';
/** The invoice's seller (BT-34 of BIS3_FILE): an upload is sent only for the party it names. */
const PARTY = '0007:5566778899';
const LEGAL_ENTITY = `SE:${PARTY}`;
const KEY = 'peppol-delivery-secure-key';
/**
 * A Peppol BIS Billing 3.0 invoice from the EN 16931 test files (seller 0007:5566778899); the tests give it buyers in
 * scheme 0106 (Dutch KvK numbers: no check digit rule, so any value passes validation).
 */
const BIS3_FILE = 'en16931/unit-tests/testfiles/BIS_Billing_30-Telefoni.xml';
const BUYER = '0106:12345670';
/** Same receiving access point, behind an endpoint that answers 503 to the first two attempts. */
const FLAKY_BUYER = '0106:12345671';
/** Reachable in the SML, but its access point refuses everything with HTTP 400. */
const REFUSING_BUYER = '0106:12345672';
/** Its access point answers 503 to everything: the schedule runs out. */
const DOWN_BUYER = '0106:12345673';
/** Its SMP answers 503 once: the lookup is retried on the schedule like a failed attempt. */
const SMP_HICCUP_BUYER = '0106:12345674';
/** Same receiving access point; the answer to the first request is withheld from the sender (see HeldExchange). */
const HELD_BUYER = '0106:12345677';
/** Its SMP lists only EN 16931 CII: the BIS 3 UBL upload is converted before it is sent. */
const CII_ONLY_BUYER = '0106:12345675';
/** Its SMP lists only a format the invoice cannot be converted to (an Order). */
const ORDERS_ONLY_BUYER = '0106:12345676';
const UNKNOWN_BUYER = '0106:99999999';
const CII_DOCUMENT_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice##urn:cen.eu:en16931:2017::D16B',
);
const ORDER_DOCUMENT_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1',
);
const BIS3_DOCUMENT_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const ORIGINAL_BUYER_ENDPOINT = '<cbc:EndpointID schemeID="0007">2244668800</cbc:EndpointID>';
const FINAL = new Set(['delivered', 'InvoiceSentError']);
/** A few hundred ms between attempts instead of hours; four attempts in all. */
const FAST: RetrySchedule = { kind: 'table', delaysMs: [300, 300, 300] };

/**
 * The first request to /held/as4: passed on to the receiving access point, which stores the message and answers with
 * its receipt; the answer is then withheld from the sender until it goes away (or for 20 s).
 */
interface HeldExchange {
  /** The receiving access point's HTTP status for the first request, once it answered. */
  answered?: number;
  /** The sender went away before the answer reached it. */
  abandoned?: boolean;
  error?: string;
}

interface Status {
  state: string;
  history: { state: string; detail?: string }[];
}

describe('sendInvoice delivers over Peppol (real Temporal, DNS, SMP, receiving AP and webhook receiver)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `send-invoice-peppol-${randomUUID()}`;
  let pki: TestPki;
  let dir: string;
  let dns: LocalDnsZone;
  let smp: LocalSmp;
  let receiving: TestContext;
  let front: Server;
  let frontUrl: string;
  /** Requests to the flaky endpoint so far; the first two get 503. */
  let flakyCalls = 0;
  let refusingCalls = 0;
  let downCalls = 0;
  let smpCalls = 0;
  let heldCalls = 0;
  const held: HeldExchange = {};
  let ctx: WebhookTestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  /** The sending gateway's settings, for a worker started as a process of its own. */
  let sendingEnv: Record<string, string>;
  let receiver: TestReceiver;
  let token: string;

  const pem = (name: string, content: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return file;
  };

  function publish(participant: string, url: string, only?: ReturnType<typeof documentTypeId>): void {
    const p = peppolParticipant(participant);
    dns.set(naptrName(p, ZONE), [
      { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
    ]);
    const processes = [
      {
        process: BILLING_PROCESS,
        endpoints: [{ transportProfile: TRANSPORT_PROFILE_AS4_V2, url, certificate: pki.apReceiver.certificate }],
      },
    ];
    if (only) {
      smp.publish(p, only, processes);
      return;
    }
    // The document types of both test invoices: BIS Billing 3.0 and plain EN 16931 UBL.
    for (const customization of [
      'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      'urn:cen.eu:en16931:2017',
    ]) {
      smp.publish(
        p,
        documentTypeId(
          DOCTYPE_SCHEME_BUSDOX,
          `urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##${customization}::2.1`,
        ),
        processes,
      );
    }
  }

  beforeAll(async () => {
    pki = await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'send-invoice-peppol-'));
    dns = await new LocalDnsZone().start();
    smp = await new LocalSmp(pki.smp, '/smp').start();

    // The receiving access point: a gateway of its own (database, AP key) serving the buyers.
    receiving = await createTestContext('peppolreceiving', {
      env: {
        ...testApEnv('ap-receiver'),
      },
    });
    const buyerTenant = await receiving.core.directory.createTenant({ name: 'buyers' });
    for (const id of [BUYER, FLAKY_BUYER, REFUSING_BUYER, SMP_HICCUP_BUYER, CII_ONLY_BUYER, HELD_BUYER]) {
      await receiving.core.directory.createParty({
        tenantId: buyerTenant._id,
        partyId: id,
        legalEntityId: `SE:${id}`,
        name: `Buyer ${id}`,
      });
    }
    /** Reads the request, passes it on to /as4, and keeps the answer until the sender leaves (or for 20 s). */
    async function holdAnswer(req: IncomingMessage, res: ServerResponse): Promise<void> {
      res.once('close', () => {
        held.abandoned = !res.writableEnded;
      });
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const answer = await fetch(`${frontUrl}/as4`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '' },
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      held.answered = answer.status;
      if (res.destroyed) return;
      const type = answer.headers.get('content-type') ?? 'application/octet-stream';
      const timer = setTimeout(() => res.writeHead(answer.status, { 'content-type': type }).end(body), 20_000);
      res.once('close', () => clearTimeout(timer));
    }

    // One listener in front of the receiving app: /as4 is the app itself; /flaky/as4 fails twice first; /refusing/as4
    // is a 400; /held/as4 withholds its first answer.
    front = createServer((req, res) => {
      if (req.url === '/held/as4' && ++heldCalls === 1) {
        holdAnswer(req, res).catch((e: unknown) => {
          held.error = String(e);
          res.destroy();
        });
        return;
      }
      if (req.url === '/held/as4') req.url = '/as4';
      if (req.url === '/flaky/as4' && ++flakyCalls <= 2) {
        req.resume();
        req.on('end', () => res.writeHead(503, { 'content-type': 'text/plain' }).end('receiving access point busy'));
        return;
      }
      if (req.url === '/refusing/as4') {
        refusingCalls++;
        req.resume();
        req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request'));
        return;
      }
      if (req.url === '/down/as4') {
        downCalls++;
        req.resume();
        req.on('end', () => res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance'));
        return;
      }
      if (req.url === '/flaky/as4') req.url = '/as4';
      receiving.app(req, res);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    publish(BUYER, `${frontUrl}/as4`);
    publish(FLAKY_BUYER, `${frontUrl}/flaky/as4`);
    publish(REFUSING_BUYER, `${frontUrl}/refusing/as4`);
    publish(DOWN_BUYER, `${frontUrl}/down/as4`);
    publish(SMP_HICCUP_BUYER, `${frontUrl}/as4`);
    publish(CII_ONLY_BUYER, `${frontUrl}/as4`, CII_DOCUMENT_TYPE);
    publish(HELD_BUYER, `${frontUrl}/held/as4`);
    publish(ORDERS_ONLY_BUYER, `${frontUrl}/as4`, ORDER_DOCUMENT_TYPE);
    const hiccup = peppolParticipant(SMP_HICCUP_BUYER);
    const metadata = signServiceMetadata(
      buildServiceMetadataXml(hiccup, BIS3_DOCUMENT_TYPE, [
        {
          process: BILLING_PROCESS,
          endpoints: [
            {
              transportProfile: TRANSPORT_PROFILE_AS4_V2,
              url: `${frontUrl}/as4`,
              certificate: pki.apReceiver.certificate,
            },
          ],
        },
      ]),
      pki.smp,
    );
    smp.override(`/${formatId(hiccup)}/services/${formatId(BIS3_DOCUMENT_TYPE)}`, (res) => {
      if (++smpCalls === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('SMP maintenance');
      else res.writeHead(200, { 'content-type': 'application/xml' }).end(metadata);
    });

    // The sending gateway: API + worker with our AP key (the sender certificate), lookups through the local zone.
    receiver = await startReceiver();
    starter = await TemporalWorkflowStarter.connect({
      address: temporalAddress,
      namespace: 'default',
      taskQueue,
      searchAttributes: false,
      peppolSendSchedule: FAST,
    });
    sendingEnv = {
      WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_SEARCH_ATTRIBUTES: 'false',
      ...testApEnv('ap-sender'),
      PEPPOL_SMP_TRUSTSTORE: pem('smp-ca.pem', pki.smpCa.certificate.toString()),
      PEPPOL_SML_ZONE: ZONE,
      PEPPOL_DNS_SERVERS: dns.address,
      PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
    };
    ctx = await createWebhookTestContext('peppolsending', {
      starter: new RecordingDeliveryStarter(),
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        ...sendingEnv,
      },
    });
    await ctx.core.directory.createTenant({ id: 'tenantP', name: 'P' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantP',
      partyId: PARTY,
      legalEntityId: LEGAL_ENTITY,
      name: 'Seller',
    });
    token = await ctx.token(await ctx.createClient(['tenantP']));
    const hook = await request(ctx.app)
      .post(`/api/v1/${PARTY}/hook`)
      .auth(token, { type: 'bearer' })
      .send({ url: `${receiver.url}/events`, topic: 'InvoiceSent*', secureKey: KEY, action: 'https' });
    expect(hook.status).toBe(201);
    const workflowBundle = await testWorkflowBundle();
    worker = await startWorker(ctx.config, { workflowBundle });
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await ctx?.close();
    await receiver?.close();
    if (front) {
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
    }
    await Promise.all([receiving?.close(), dns?.stop(), smp?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const withBuyer = (buyer: string): Buffer =>
    Buffer.from(
      corpusFile(BIS3_FILE)
        .toString('utf8')
        .replace(
          ORIGINAL_BUYER_ENDPOINT,
          `<cbc:EndpointID schemeID="${buyer.slice(0, 4)}">${buyer.slice(5)}</cbc:EndpointID>`,
        ),
    );

  async function upload(body: Buffer, contentType = 'application/xml'): Promise<string> {
    const res = await request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', randomUUID())
      .type(contentType)
      .send(body);
    expect(res.status).toBe(200);
    return (res.body as { id: string }).id;
  }

  async function send(body: Buffer, contentType = 'application/xml'): Promise<Status & { id: string }> {
    return finalStatus(await upload(body, contentType));
  }

  async function finalStatus(id: string): Promise<Status & { id: string }> {
    const status = await eventually(
      async () => {
        const s = await request(ctx.app)
          .get(`/api/v1/${PARTY}/salesInvoice/${id}/status`)
          .auth(token, { type: 'bearer' });
        return s.status === 200 && FINAL.has((s.body as Status).state) ? (s.body as Status) : undefined;
      },
      120_000,
      `final state of ${id}`,
    );
    return { ...status, id };
  }

  /** The events delivered for one document, in the order they were produced (signature verified with the hook key). */
  async function eventsFor(
    documentId: string,
    until: string,
  ): Promise<Array<{ topic: string; message: string; details: Record<string, string> }>> {
    await eventually(
      () => receiver.requests.find((r) => r.json()['documentId'] === documentId && r.json()['topic'] === until),
      60_000,
      `${until} for ${documentId}`,
    );
    const mine = receiver.requests.filter((r) => r.json()['documentId'] === documentId);
    for (const r of mine) expect(verifyWebhook(r.rawBody, r.headers, KEY)).toMatchObject({ ok: true });
    return mine
      .map(
        (r) =>
          r.json() as {
            topic: string;
            message: string;
            details: Record<string, string>;
            createdOn: string;
            sentOn: string;
          },
      )
      .sort(
        (a, b) =>
          Number(a.details['attempt']) - Number(b.details['attempt']) || (a.topic === 'InvoiceSentRetry' ? -1 : 1),
      );
  }

  it('delivers a valid BIS 3 invoice: receipt → delivered, the receiving AP stored it, InvoiceSent with the details', async () => {
    const before = await receiving.core.db.models.As4Inbound.countDocuments().exec();
    const s = await send(withBuyer(BUYER));
    expect(s.state).toBe('delivered');
    expect(s.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    expect(s.history[4]?.detail).toMatch(
      /^attempt 1 to iso6523-actorid-upis::0106:12345670 at http:\/\/127\.0\.0\.1:\d+\/as4 \(AS4 MessageId .+\): delivered, HTTP 200$/,
    );

    // The receiving access point holds the message, with our invoice inside its SBD.
    expect(await receiving.core.db.models.As4Inbound.countDocuments().exec()).toBe(before + 1);
    const events = await eventsFor(s.id, 'InvoiceSent');
    expect(events.map((e) => e.topic)).toEqual(['InvoiceSent']);
    const details = events[0]!.details;
    expect(details).toMatchObject({
      id: s.id,
      recipient: BUYER,
      endpoint: `${frontUrl}/as4`,
      protocol: 'peppol',
      attempt: '1',
      stage: 'delivery',
      sourceDocumentTypeId:
        'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
      targetDocumentTypeId:
        'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
    });
    expect(details['messageId']).toMatch(/@invoice-gateway$/);
    const stored = await receiving.core.db.models.As4Inbound.findById(details['messageId']).lean().exec();
    expect(stored).not.toBeNull();
    const sbd = await receiving.core.db.blobs.read(stored!.blobId);
    expect(sbd.toString('utf8')).toContain('<cbc:EndpointID schemeID="0106">12345670</cbc:EndpointID>');
    // MLS goes to our own service provider id (0242 + our Seat ID's digits); no Peppol hook sets an MLS_TYPE.
    const { header } = readSbdHeader(sbd);
    expect(stored!.fromSeatId).toMatch(/^P[A-Z]{2}[0-9]{6}$/);
    expect(header.mlsTo).toEqual(peppolParticipant(`0242:${stored!.fromSeatId.slice(3)}`));
    expect(header.mlsTypeExplicit).toBe(false);
    // Both access points keep the exchange once for the Peppol network reports, each naming the other's Seat ID.
    const messageId = details['messageId'] as string;
    const sentItem = await ctx.core.db.models.ReportingItem.findById(`sent:${messageId}`).lean().exec();
    const receivedItem = await receiving.core.db.models.ReportingItem.findById(`received:${messageId}`).lean().exec();
    expect(sentItem).toMatchObject({ direction: 'sent', endUserId: formatId(header.sender), mls: false });
    expect(sentItem!.otherSeatId).toMatch(/^P[A-Z]{2}[0-9]{6}$/);
    expect(receivedItem).toMatchObject({ otherSeatId: stored!.fromSeatId, endUserId: formatId(header.receiver) });
  });

  it('retries on 503: two InvoiceSentRetry events (attempts 1 and 2), then InvoiceSent on attempt 3', async () => {
    const s = await send(withBuyer(FLAKY_BUYER));
    expect(s.state).toBe('delivered');
    expect(flakyCalls).toBe(3);
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'sending',
      'retrying',
      'sending',
      'retrying',
      'sending',
      'delivered',
    ]);
    const events = await eventsFor(s.id, 'InvoiceSent');
    expect(events.map((e) => [e.topic, e.details['attempt']])).toEqual([
      ['InvoiceSentRetry', '1'],
      ['InvoiceSentRetry', '2'],
      ['InvoiceSent', '3'],
    ]);
    expect(events[0]!.message).toMatch(
      /^Attempt 1 failed temporarily \(HTTP 503: receiving access point busy\); the next follows in 300 ms \(at [0-9T:.Z-]+\)$/,
    );
    expect(events[0]!.details).toMatchObject({
      protocol: 'peppol',
      endpoint: `${frontUrl}/flaky/as4`,
      reasonCode: 'HTTP 503',
      recipient: FLAKY_BUYER,
    });
    // Every attempt is the same AS4 message.
    expect(new Set(events.map((e) => e.details['messageId'])).size).toBe(1);
  });

  it('gives up when the schedule runs out: an InvoiceSentRetry per failed attempt, then InvoiceSentError (final)', async () => {
    const s = await send(withBuyer(DOWN_BUYER));
    expect(s.state).toBe('InvoiceSentError');
    // FAST has three waits: four attempts.
    expect(downCalls).toBe(4);
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events.map((e) => [e.topic, e.details['attempt']])).toEqual([
      ['InvoiceSentRetry', '1'],
      ['InvoiceSentRetry', '2'],
      ['InvoiceSentRetry', '3'],
      ['InvoiceSentError', '4'],
    ]);
    expect(events[3]!.message).toBe('Not delivered after 4 attempts; the last failed: HTTP 503: down for maintenance');
    expect(s.history.filter((h) => h.state === 'sending')).toHaveLength(4);
  });

  it('an SMP that cannot answer is retried like a failed attempt: InvoiceSentRetry (stage lookup), then delivered', async () => {
    const s = await send(withBuyer(SMP_HICCUP_BUYER));
    expect(s.state).toBe('delivered');
    expect(smpCalls).toBe(2);
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'retrying',
      'sending',
      'delivered',
    ]);
    const events = await eventsFor(s.id, 'InvoiceSent');
    expect(events.map((e) => [e.topic, e.details['attempt']])).toEqual([
      ['InvoiceSentRetry', '1'],
      ['InvoiceSent', '2'],
    ]);
    expect(events[0]!.details).toMatchObject({
      stage: 'lookup',
      reasonCode: 'SMP_UNREACHABLE',
      recipient: SMP_HICCUP_BUYER,
      endpoint: '',
      protocol: '',
    });
    expect(events[0]!.message).toMatch(
      /^Attempt 1 failed temporarily \(The recipient's Peppol registration could not be read: .+\); the next follows in 300 ms \(at [0-9T:.Z-]+\)$/,
    );
  });

  it('a 4xx from the receiving access point ends in InvoiceSentError at once, without a retry', async () => {
    const s = await send(withBuyer(REFUSING_BUYER));
    expect(s.state).toBe('InvoiceSentError');
    expect(refusingCalls).toBe(1);
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events.map((e) => e.topic)).toEqual(['InvoiceSentError']);
    expect(events[0]!.message).toBe('Delivery refused by the receiving access point: HTTP 400: bad request');
    expect(events[0]!.details).toMatchObject({
      attempt: '1',
      protocol: 'peppol',
      reasonCode: 'HTTP 400',
      stage: 'delivery',
    });
  });

  it('a recipient that takes only EN 16931 CII gets the UBL upload converted to CII, validated, and said so in InvoiceSent', async () => {
    const s = await send(withBuyer(CII_ONLY_BUYER));
    expect(s.state).toBe('delivered');
    const events = await eventsFor(s.id, 'InvoiceSent');
    expect(events.map((e) => e.topic)).toEqual(['InvoiceSent']);
    expect(events[0]!.message).toMatch(
      /^Delivered to 0106:12345675 over Peppol as EN 16931 CII D16B, converted because the recipient does not take the uploaded format/,
    );
    expect(events[0]!.details).toMatchObject({
      recipient: CII_ONLY_BUYER,
      targetDocumentTypeId: CII_DOCUMENT_TYPE.value,
    });
    expect(events[0]!.details['sourceDocumentTypeId']).toMatch(
      /^urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##/,
    );
    // What the receiving access point stored is the CII, with the invoice's number and buyer.
    const stored = await receiving.core.db.models.As4Inbound.findById(events[0]!.details['messageId']).lean().exec();
    expect(stored?.documentType).toBe(formatId(CII_DOCUMENT_TYPE));
    const sbd = (await receiving.core.db.blobs.read(stored!.blobId)).toString('utf8');
    expect(sbd).toContain('<rsm:CrossIndustryInvoice');
    expect(sbd).toContain('<ram:URIID schemeID="0106">12345675</ram:URIID>');
    expect(sbd).not.toContain('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');
  });

  it('a Factur-X PDF upload goes out as its XML, converted to what the recipient takes (BIS Billing 3), never as the PDF', async () => {
    const pdf = transformDocument(withBuyer(BUYER), { targetFormat: 'facturx-en16931' }).pdf;
    expect(pdf).toBeDefined();
    const s = await send(pdf!, 'application/pdf');
    expect(s.state).toBe('delivered');
    expect(s.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    const events = await eventsFor(s.id, 'InvoiceSent');
    expect(events[0]!.message).toMatch(
      /^Delivered to 0106:12345670 over Peppol as Peppol BIS Billing 3\.0, converted because the recipient does not take the uploaded format/,
    );
    expect(events[0]!.details).toMatchObject({ targetDocumentTypeId: BIS3_DOCUMENT_TYPE.value });
    const stored = await receiving.core.db.models.As4Inbound.findById(events[0]!.details['messageId']).lean().exec();
    const sbd = (await receiving.core.db.blobs.read(stored!.blobId)).toString('utf8');
    expect(sbd).toContain('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');
    expect(sbd).not.toContain('%PDF');
  });

  it('a recipient that takes nothing the invoice can become ends in InvoiceSentError (DOCUMENT_TYPE_NOT_SUPPORTED)', async () => {
    const s = await send(withBuyer(ORDERS_ONLY_BUYER));
    expect(s.state).toBe('InvoiceSentError');
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events[0]!.message).toMatch(
      /^The recipient 0106:12345676 does not receive .+ over Peppol AS4, nor a format the gateway can convert it to: /,
    );
    expect(events[0]!.details).toMatchObject({
      stage: 'lookup',
      reasonCode: 'DOCUMENT_TYPE_NOT_SUPPORTED',
      attempt: '0',
    });
  });

  it('an unknown participant ends in InvoiceSentError (stage lookup) without any attempt: no Peppol, no e-mail fallback yet', async () => {
    const s = await send(withBuyer(UNKNOWN_BUYER));
    expect(s.state).toBe('InvoiceSentError');
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'InvoiceSentError',
    ]);
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events.map((e) => e.topic)).toEqual(['InvoiceSentError']);
    expect(events[0]!.message).toMatch(
      /^The recipient 0106:99999999 is not reachable on Peppol \(.+\); the e-mail fallback is not available in this version$/,
    );
    expect(events[0]!.details).toMatchObject({
      stage: 'lookup',
      reasonCode: 'PARTICIPANT_UNKNOWN',
      recipient: UNKNOWN_BUYER,
      attempt: '0',
      protocol: '',
      endpoint: '',
      messageId: '',
    });
  });

  it('a valid invoice without a buyer EndpointID (BT-49) ends in InvoiceSentError naming the element', async () => {
    // EN 16931 leaves BT-49 optional, so this invoice passes its rules and only delivery needs the address.
    const s = await send(corpusFile(SAMPLE_UBL_INVOICE));
    expect(s.state).toBe('InvoiceSentError');
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'InvoiceSentError',
    ]);
    expect(s.history.at(-1)?.detail).toBe(
      'Not sent: the invoice has no buyer EndpointID cac:AccountingCustomerParty/cac:Party/cbc:EndpointID (BT-49)',
    );
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events[0]!.details).toMatchObject({ stage: 'recipient', reasonCode: 'ENDPOINT_MISSING', attempt: '0' });
  });

  it('a malformed buyer EndpointID ends in InvoiceSentError', async () => {
    const xml = corpusFile(BIS3_FILE)
      .toString('utf8')
      .replace(ORIGINAL_BUYER_ENDPOINT, '<cbc:EndpointID schemeID="0106">1234 5670</cbc:EndpointID>');
    const s = await send(Buffer.from(xml));
    expect(s.state).toBe('InvoiceSentError');
    // The rules pass it (0106 has no format rule); the Peppol identifier policy does not.
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'InvoiceSentError',
    ]);
    expect(s.history.at(-1)?.detail).toMatch(
      /^Not sent: buyer EndpointID .*\(BT-49\) 0106:1234 5670 is not a valid Peppol participant identifier: .*POLICY 1/,
    );
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events[0]!.details).toMatchObject({ stage: 'recipient', reasonCode: 'ENDPOINT_INVALID', attempt: '0' });
  });

  it('a format without official rules here (BIS 3 CII) is not sent: InvoiceSentError naming why', async () => {
    const xml = corpusFile(SAMPLE_CII_INVOICE)
      .toString('utf8')
      .replace(
        /(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]+</,
        '$1urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0<',
      );
    const s = await send(Buffer.from(xml));
    expect(s.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'not-validated',
      'InvoiceSentError',
    ]);
    expect(s.history.at(-1)?.detail).toMatch(
      /^Not sent over Peppol: the document was not validated against official rules \(No validation rules are available for Peppol BIS Billing 3.0 CII/,
    );
    const events = await eventsFor(s.id, 'InvoiceSentError');
    expect(events[0]!.details).toMatchObject({
      stage: 'validation',
      reasonCode: 'NOT_VALIDATED',
      attempt: '0',
      protocol: '',
    });
  });

  /** The local names from `root` down to `el`. */
  const ancestry = (el: XmlElement, root: XmlElement): string => {
    const names = [el.localName];
    for (let n = el; n !== root && n.parentNode;) {
      n = n.parentNode as XmlElement;
      names.unshift(n.localName);
    }
    return names.join('/');
  };

  /**
   * The embedded attachments of the business document inside the SBD the receiving access point stored for
   * `messageId`: the elements `namespace`:`localName` with their place in the document (the local names from the root
   * down), their attributes and their decoded content.
   */
  async function storedAttachments(
    messageId: string,
    namespace: string,
    localName: string,
  ): Promise<{
    documentType: string;
    root: string;
    attachments: { path: string; mimeCode: string; filename: string; bytes: Buffer }[];
  }> {
    const stored = await receiving.core.db.models.As4Inbound.findById(messageId).lean().exec();
    expect(stored).not.toBeNull();
    const { payload } = parseSbd(await receiving.core.db.blobs.read(stored!.blobId));
    if (payload.kind !== 'xml') throw new Error(`the stored SBD carries a ${payload.kind} payload`);
    const found = payload.element.getElementsByTagNameNS(namespace, localName);
    return {
      documentType: stored!.documentType,
      root: `{${payload.element.namespaceURI ?? ''}}${payload.element.localName}`,
      attachments: Array.from({ length: found.length }, (_, i) => found.item(i)!).map((el) => ({
        path: ancestry(el, payload.element),
        mimeCode: el.getAttribute('mimeCode') ?? '',
        filename: el.getAttribute('filename') ?? '',
        bytes: Buffer.from(el.textContent ?? '', 'base64'),
      })),
    };
  }

  it('a 10 MB PDF embedded in a BIS 3 invoice reaches the receiving access point byte for byte, as UBL and converted to CII', async () => {
    // (a) A recipient taking BIS Billing 3: the UBL goes out as uploaded.
    const { pdf, invoice } = withEmbeddedPdf(withBuyer(BUYER));
    const ubl = await send(invoice);
    expect(ubl.state).toBe('delivered');
    // Validated against the BIS 3 rules with the attachment in it, then sent once.
    expect(ubl.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    const [sentUbl, ...moreUbl] = await eventsFor(ubl.id, 'InvoiceSent');
    expect(moreUbl).toEqual([]);
    expect(sentUbl!.details).toMatchObject({ recipient: BUYER, targetDocumentTypeId: BIS3_DOCUMENT_TYPE.value });
    const asUbl = await storedAttachments(sentUbl!.details['messageId']!, NS.cbc, 'EmbeddedDocumentBinaryObject');
    expect(asUbl.root).toBe(`{${NS.ublInvoice}}Invoice`);
    expect(asUbl.attachments).toHaveLength(1);
    expect(asUbl.attachments[0]).toMatchObject({
      path: 'Invoice/AdditionalDocumentReference/Attachment/EmbeddedDocumentBinaryObject',
      mimeCode: ATTACHMENT_MIME_CODE,
      filename: ATTACHMENT_FILENAME,
    });
    expect(asUbl.attachments[0]!.bytes.equals(pdf)).toBe(true);

    // (b) A recipient taking only EN 16931 CII: the same attachment as ram:AttachmentBinaryObject of the converted CII.
    const converted = await send(withEmbeddedPdf(withBuyer(CII_ONLY_BUYER)).invoice);
    expect(converted.state).toBe('delivered');
    expect(converted.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    const [sentCii, ...moreCii] = await eventsFor(converted.id, 'InvoiceSent');
    expect(moreCii).toEqual([]);
    expect(sentCii!.details).toMatchObject({
      recipient: CII_ONLY_BUYER,
      targetDocumentTypeId: CII_DOCUMENT_TYPE.value,
    });
    const asCii = await storedAttachments(sentCii!.details['messageId']!, NS.ram, 'AttachmentBinaryObject');
    expect(asCii.documentType).toBe(formatId(CII_DOCUMENT_TYPE));
    expect(asCii.root).toBe(`{${NS.rsm}}CrossIndustryInvoice`);
    expect(asCii.attachments).toHaveLength(1);
    expect(asCii.attachments[0]).toMatchObject({
      path:
        'CrossIndustryInvoice/SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/AdditionalReferencedDocument/' +
        'AttachmentBinaryObject',
      mimeCode: ATTACHMENT_MIME_CODE,
      filename: ATTACHMENT_FILENAME,
    });
    expect(asCii.attachments[0]!.bytes.equals(pdf)).toBe(true);
  }, 110_000);

  it("writes MLS_TYPE from the party's Peppol hook mlsType into the SBDH, beside MLS_TO (the hook stays for the tests after)", async () => {
    const hook = await request(ctx.app)
      .post('/api/v1-beta/hook')
      .auth(token, { type: 'bearer' })
      .send({ partyId: PARTY, action: 'peppol', name: 'peppol', topics: ['Send*'], mlsType: 'ALWAYS_SEND' });
    expect(hook.status).toBe(201);
    const s = await send(withBuyer(BUYER));
    expect(s.state).toBe('delivered');
    const details = (await eventsFor(s.id, 'InvoiceSent'))[0]!.details;
    const stored = await receiving.core.db.models.As4Inbound.findById(details['messageId']).lean().exec();
    const { header } = readSbdHeader(await receiving.core.db.blobs.read(stored!.blobId));
    expect(header).toMatchObject({ mlsType: 'ALWAYS_SEND', mlsTypeExplicit: true });
    expect(header.mlsTo).toEqual(peppolParticipant(`0242:${stored!.fromSeatId.slice(3)}`));
  });

  it('a worker killed in the middle of an AS4 exchange loses nothing: the next worker sends it, received once', async () => {
    // Last in this file: the in-process worker gives way to worker processes, the first of them killed.
    await worker?.stop();
    worker = undefined;
    const spawnWorker = workerProcesses({
      mongoUri: ctx.config.mongo.uri,
      temporalAddress,
      taskQueue,
      env: sendingEnv,
    });
    const inbound = receiving.core.db.models.As4Inbound;
    const before = await inbound.countDocuments().exec();
    const first = spawnWorker();
    let second: WorkerProcess | undefined;
    try {
      const id = await upload(withBuyer(HELD_BUYER));
      // The receiving access point stored the message and answered; the worker waits for that answer when it dies.
      await eventually(() => held.answered ?? held.error, 60_000, 'the first AS4 request answered by the receiver', 25);
      expect(held).toEqual({ answered: 200 });
      expect(await inbound.countDocuments().exec()).toBe(before + 1);
      await first.kill();
      await eventually(() => held.abandoned, 10_000, 'the killed worker gone from the held exchange');
      second = spawnWorker();
      // Once the first worker's heartbeat is missed (30 s), the activity is retried on the second: the same AS4
      // message again, which the receiving access point recognises as a duplicate and confirms with a receipt.
      const s = await finalStatus(id);
      expect(s.state).toBe('delivered');
      expect(heldCalls).toBe(2);
      expect(s.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
      expect(s.history[4]?.detail).toMatch(
        /^attempt 1 to iso6523-actorid-upis::0106:12345677 at .+: delivered, HTTP 200$/,
      );
      const events = await eventsFor(id, 'InvoiceSent');
      expect(events.map((e) => [e.topic, e.details['attempt']])).toEqual([['InvoiceSent', '1']]);
      // One document at the receiving access point: the message of the killed attempt, kept once.
      expect(await inbound.countDocuments().exec()).toBe(before + 1);
      const stored = await inbound.findById(events[0]!.details['messageId']).lean().exec();
      expect(stored?.receiver).toBe(`iso6523-actorid-upis::${HELD_BUYER}`);
      expect(await inbound.countDocuments({ instanceId: stored!.instanceId }).exec()).toBe(1);
    } finally {
      await first.kill();
      await second?.stop();
    }
  }, 120_000);
});
