import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sendInvoiceWorkflowId } from '../../src/core/identifiers';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { extractFromPdf } from '../../src/formats';
import { transformDocument } from '../../src/transform';
import { requireEnv } from '../support/services';
import { eventually } from '../support/poll';
import {
  RecordingDeliveryStarter,
  createWebhookTestContext,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { documentClient, DELIVERED_AT_FIRST_ATTEMPT } from '../support/sending-network';
import { ATTACHMENT_FILENAME, ATTACHMENT_MIME_CODE, withEmbeddedPdf } from '../support/embedded-attachment';
import { workerProcesses, type WorkerProcess } from '../support/worker-process';
import { parseMail, startSmtpSink, type SinkAnswer, type SinkStage, type SmtpSink } from '../support/smtp-sink';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkPdfA } = require('../../scripts/verapdf-harness.js') as {
  checkPdfA: (files: string[]) => { file: string; compliant?: boolean; failures?: { description: string }[] }[];
};

jest.setTimeout(300_000);

/*
 * The e-mail channel on real servers: the Temporal dev server, the database, and an SMTP server on 127.0.0.1 that
 * records what arrives. The worker has no Peppol settings, so Peppol (the implicit channel) refuses every invoice as
 * "not reachable there" (404): the fallback rule hands it to the mail hook listening on Send*Fallback.
 */

const PARTY = '0106:12345678';
const INVOICE = readFileSync(path.resolve(__dirname, '../../scripts/demo/invoice.xml'));
const BUYER_MAIL = 'invoices@customer.example.test';

describe('sendInvoice over the e-mail channel (SMTP server on 127.0.0.1)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `send-email-${randomUUID()}`;
  let ctx: WebhookTestContext;
  let token: string;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let sink: SmtpSink;
  let answer: (stage: SinkStage) => SinkAnswer | undefined = () => undefined;
  let delay: (stage: SinkStage) => number | undefined = () => undefined;
  let fallbackHook: string;
  let directHook: string;
  let attachmentsHook: string;

  beforeAll(async () => {
    sink = await startSmtpSink({ answer: (stage) => answer(stage), delay: (stage) => delay(stage) });
    // The run's e-mail schedule comes from the starter (the API's setting), not from the worker's environment.
    starter = await TemporalWorkflowStarter.connect({
      address: temporalAddress,
      namespace: 'default',
      taskQueue,
      emailSendSchedule: { kind: 'table', delaysMs: [300, 300] },
    });
    // The hook routes need the webhook services (createTestContext's app answers 503 there).
    ctx = await createWebhookTestContext('sendemail', {
      starter: new RecordingDeliveryStarter(),
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(sink.port),
        SMTP_REQUIRE_TLS: 'false',
        SMTP_FROM: 'invoices@gateway.example.test',
        EMAIL_SEND_RETRY_SCHEDULE: JSON.stringify({ kind: 'table', delaysMs: [300, 300] }),
      },
    });
    await ctx.core.directory.createTenant({ id: 'tenantM', name: 'M' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantM',
      partyId: PARTY,
      legalEntityId: `NL:${PARTY}`,
      name: 'Supplier',
    });
    token = await ctx.token(await ctx.createClient(['tenantM']));
    const hook = async (body: object) => {
      const res = await request(ctx.app).post(`/api/v1/${PARTY}/hook`).auth(token, { type: 'bearer' }).send(body);
      expect(res.status).toBe(201);
      return (res.body as { id: string }).id;
    };
    // The peppol-fallback configuration of spec 4.3, and a mail hook on a topic of its own that only ?channel= uses.
    fallbackHook = await hook({
      action: 'mailto',
      name: 'fallback',
      url: 'mailto:[receiverEmailAddress]?fallback=ap@customer.example.test&attach=pdf,xml,attachments',
      topics: ['Send*', 'Send*Fallback'],
    });
    directHook = await hook({
      action: 'mailto',
      name: 'direct',
      url: 'mailto:direct@customer.example.test?attach=xml',
      topic: 'ManualMail',
    });
    attachmentsHook = await hook({
      action: 'mailto',
      name: 'attachments',
      url: 'mailto:archive@customer.example.test?attach=attachments',
      topic: 'AttachmentsMail',
    });
    worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
  });

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await ctx?.close();
    await sink?.close();
  });

  /** The raw upload, for answers other than 200. */
  const post = (query = '') =>
    request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send${query}`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', randomUUID())
      .type('application/xml')
      .send(INVOICE);
  const docs = () => documentClient(ctx.app, token, 120_000);
  const upload = (query = '') => docs().upload(PARTY, INVOICE, query);
  const finalStatus = (id: string) => docs().finalStatus(PARTY, id);
  const eventsOf = (id: string) => docs().eventsOf(PARTY, id);
  /** The NextAttemptOn values the document's run set, in order (null: removed). */
  const nextAttemptOnUpserts = async (id: string): Promise<unknown[]> => {
    const connection = await Connection.connect({ address: temporalAddress });
    try {
      const client = new Client({ connection });
      const history = await client.workflow.getHandle(sendInvoiceWorkflowId('tenantM', id)).fetchHistory();
      return (history.events ?? []).flatMap((e) => {
        const field =
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.['NextAttemptOn'];
        return field ? [defaultPayloadConverter.fromPayload(field)] : [];
      });
    } finally {
      await connection.close();
    }
  };

  it('an invoice Peppol cannot take arrives by e-mail: PDF/A-3 with the converted CII, the XML as uploaded', async () => {
    const from = sink.messages.length;
    const id = await upload();
    const status = await finalStatus(id);
    expect(status.state).toBe('delivered');
    expect(status.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    expect(status.history.find((h) => h.state === 'sending')?.detail).toContain(
      `by e-mail through the mail hook ${fallbackHook} to ${BUYER_MAIL}`,
    );

    const arrived = sink.messages.slice(from);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.to).toEqual([BUYER_MAIL]);
    const mail = await parseMail(arrived[0]!);
    expect(mail.messageId).toBe(`<${id}.${fallbackHook}@gateway.example.test>`);
    const pdf = mail.attachments.find((a) => a.contentType === 'application/pdf');
    const xml = mail.attachments.find((a) => a.contentType === 'application/xml');
    expect(xml?.content.equals(INVOICE)).toBe(true);
    expect(pdf).toBeDefined();
    // The PDF's embedded CII is the invoice converted (the same conversion the transform endpoint makes).
    const expected = transformDocument(INVOICE, { targetFormat: 'facturx-en16931' }).xml;
    expect(extractFromPdf(pdf!.content).xml.toString('utf8')).toBe(expected);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mail-pdf-'));
    try {
      const file = path.join(dir, 'invoice.pdf');
      writeFileSync(file, pdf!.content);
      const [verdict] = checkPdfA([file]);
      expect({ compliant: verdict?.compliant, failures: verdict?.failures }).toEqual({ compliant: true, failures: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const events = await eventsOf(id);
    expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'SendInvoiceFallback', 'InvoiceSent']);
    expect(events[0]!.details).toMatchObject({ channel: 'peppol', sender: PARTY, recipient: '0106:87654321' });
    expect(events[1]!.details).toMatchObject({ channel: fallbackHook });
    expect(events[1]!.message).toContain('Peppol sending is not configured');
    expect(events[2]!.details).toMatchObject({
      protocol: 'email',
      endpoint: `mailto:${BUYER_MAIL}`,
      channel: fallbackHook,
    });
  });

  it('?channel=<mail hook> skips Peppol; SMTP 421 then 250 gives one InvoiceSentRetry, then InvoiceSent', async () => {
    let refused = 0;
    answer = (stage) => (stage === 'data' && refused++ === 0 ? { code: 421, message: 'try again later' } : undefined);
    const from = sink.messages.length;
    try {
      const id = await upload(`?channel=${directHook}`);
      const status = await finalStatus(id);
      expect(status.state).toBe('delivered');
      expect(status.history.map((h) => h.state)).toEqual([
        'received',
        'accepted',
        'detected',
        'validated',
        'sending',
        'retrying',
        'sending',
        'delivered',
      ]);
      const events = await eventsOf(id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSentRetry', 'InvoiceSent']);
      expect(events[0]!.details).toMatchObject({ channel: directHook });
      expect(events[1]!.details).toMatchObject({ reasonCode: 'SMTP 421', protocol: 'email' });
      // While it waited, the run carried the due time as its NextAttemptOn search attribute, and dropped it after.
      const due = events[1]!.details['nextAttemptOn']!;
      expect(status.nextAttemptOn).toBeUndefined();
      expect(status.history.find((h) => h.state === 'retrying')?.nextAttemptOn).toBe(due);
      expect(await nextAttemptOnUpserts(id)).toEqual([due, null]);
      const arrived = sink.messages.slice(from);
      expect(arrived.map((m) => m.to)).toEqual([['direct@customer.example.test']]);
      const mail = await parseMail(arrived[0]!);
      // attach=xml: the XML only.
      expect(mail.attachments.map((a) => a.contentType)).toEqual(['application/xml']);
    } finally {
      answer = () => undefined;
    }
  });

  it('SMTP 550 ends in InvoiceSentError; a resend delivers it, history kept; a bad ?channel= is a 400', async () => {
    answer = (stage) => (stage === 'rcpt' ? { code: 550, message: 'no such mailbox' } : undefined);
    let id: string;
    try {
      id = await upload(`?channel=${directHook}`);
      const status = await finalStatus(id);
      expect(status.state).toBe('InvoiceSentError');
      expect(status.history.at(-1)?.detail).toMatch(/550/);
    } finally {
      answer = () => undefined;
    }
    const resend = (docId: string) =>
      request(ctx.app).post(`/api/v1/${PARTY}/salesInvoice/${docId}/resend`).auth(token, { type: 'bearer' });
    const from = sink.messages.length;
    const again = await resend(id);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id, state: 'resending', generation: 1 });
    const after = await finalStatus(id);
    expect(after.state).toBe('delivered');
    // The first run's entries stay; the resend's follow them (its forced channel kept).
    expect(after.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'sending',
      'InvoiceSentError',
      'resending',
      'sending',
      'delivered',
    ]);
    expect(sink.messages.slice(from).map((m) => m.to)).toEqual([['direct@customer.example.test']]);
    // Only a document in InvoiceSentError can be sent again; an unknown one is a 404.
    expect((await resend(id)).status).toBe(409);
    expect((await resend(randomUUID())).status).toBe(404);
    const retryNow = await request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/${id}/retryNow`)
      .auth(token, { type: 'bearer' });
    expect(retryNow.status).toBe(409);

    const bad = await post('?channel=no-such-hook');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ detail: expect.stringContaining('no-such-hook') });
    // The fallback mail hook of this party makes peppol-fallback a channel it may force.
    expect((await post('?channel=peppol-fallback')).status).toBe(200);
  });

  it('a 10 MB PDF embedded in the invoice reaches the recipient byte for byte', async () => {
    const { pdf, invoice: withAttachment } = withEmbeddedPdf(INVOICE);
    const from = sink.messages.length;
    const id = await docs().upload(PARTY, withAttachment, `?channel=${attachmentsHook}`);
    const status = await finalStatus(id);
    expect(status.state).toBe('delivered');
    // Earlier tests' documents may still be arriving: only this hook's mailbox counts.
    const arrived = sink.messages.slice(from).filter((m) => m.to.includes('archive@customer.example.test'));
    expect(arrived).toHaveLength(1);
    const mail = await parseMail(arrived[0]!);
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      [ATTACHMENT_FILENAME, ATTACHMENT_MIME_CODE],
    ]);
    expect(mail.attachments[0]!.content.equals(pdf)).toBe(true);
  });

  it('a worker killed in the middle of an e-mail loses nothing: the next worker sends it once', async () => {
    await worker?.stop();
    worker = undefined;
    const spawnWorker = workerProcesses({
      mongoUri: ctx.config.mongo.uri,
      temporalAddress,
      taskQueue,
      env: {
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(sink.port),
        SMTP_REQUIRE_TLS: 'false',
        SMTP_FROM: 'invoices@gateway.example.test',
      },
    });
    // The first RCPT is answered only after 20 s: the worker is killed while it waits, before the mail was taken.
    let reached = false;
    delay = (stage) => {
      if (stage !== 'rcpt' || reached) return undefined;
      reached = true;
      return 20_000;
    };
    const from = sink.messages.length;
    const first = spawnWorker();
    let second: WorkerProcess | undefined;
    try {
      const id = await upload(`?channel=${directHook}`);
      await eventually(() => reached || undefined, 60_000, 'the first worker in the middle of the SMTP exchange', 25);
      await first.kill();
      second = spawnWorker();
      // The activity is retried on the second worker once the first one's heartbeat is missed.
      const status = await finalStatus(id);
      expect(status.state).toBe('delivered');
      const mine = sink.messages.slice(from).filter((m) => m.to.includes('direct@customer.example.test'));
      expect(mine).toHaveLength(1);
      expect((await parseMail(mine[0]!)).messageId).toBe(`<${id}.${directHook}@gateway.example.test>`);
      // One attempt in the history: the killed one did not finish, the retried activity recorded it once.
      expect(status.history.filter((h) => h.state === 'sending')).toHaveLength(1);
    } finally {
      delay = () => undefined;
      await first.kill();
      await second?.stop();
    }
  }, 240_000);
});
