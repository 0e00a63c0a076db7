import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { verifyWebhook } from '../../src/webhooks/verify-webhook';
import { CORPUS_DIR, corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { requireEnv } from '../support/services';
import {
  RecordingDeliveryStarter,
  createWebhookTestContext,
  startReceiver,
  type TestReceiver,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { eventually } from '../support/poll';
import { testWorkflowBundle } from '../support/workflow-bundle';

const PARTY = '0106:44444444';
const LEGAL_ENTITY = `NL:${PARTY}`;
const KEY = 'validation-step-secure-key';
const FINAL = new Set(['delivered', 'InvoiceSentError']);

interface Status {
  state: string;
  history: { state: string; detail?: string }[];
  format?: { id: string };
  validation?: {
    isValid: boolean;
    errorCount: number;
    ruleSets: { id: string; outcome: string }[];
    assertions: {
      artifact: string;
      flag: string;
      ruleId: string;
      location: string;
      text: string;
      reasonCode: string;
    }[];
  };
}

describe('sendInvoice validation step and InvoiceSentError events (real Temporal, real receiver)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `send-invoice-validation-${randomUUID()}`;
  let ctx: WebhookTestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker;
  let receiver: TestReceiver;
  let token: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createWebhookTestContext('sendvalidation', {
      starter: new RecordingDeliveryStarter(),
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
      },
    });
    await ctx.core.directory.createTenant({ id: 'tenantV', name: 'V' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantV',
      partyId: PARTY,
      legalEntityId: LEGAL_ENTITY,
      name: 'Sender V',
    });
    token = await ctx.token(await ctx.createClient(['tenantV']));
    const hook = await request(ctx.app)
      .post(`/api/v1/${PARTY}/hook`)
      .auth(token, { type: 'bearer' })
      .send({ url: `${receiver.url}/events`, topic: 'InvoiceSent*', secureKey: KEY, action: 'https' });
    expect(hook.status).toBe(201);
    const workflowBundle = await testWorkflowBundle();
    worker = await startWorker(ctx.config, { workflowBundle });
  });

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await ctx?.close();
    await receiver?.close();
  });

  async function send(body: Buffer): Promise<Status & { id: string }> {
    const res = await request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', randomUUID())
      .type('application/xml')
      .send(body);
    expect(res.status).toBe(200);
    const id = (res.body as { id: string }).id;
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

  /** The InvoiceSentError delivery for one document, verified with the hook's key. */
  async function errorEventFor(documentId: string): Promise<Record<string, unknown>> {
    const req = await eventually(
      () => receiver.requests.find((r) => (r.json()['documentId'] as string) === documentId),
      60_000,
      `event for ${documentId}`,
    );
    const check = verifyWebhook(req.rawBody, req.headers, KEY);
    expect(check).toMatchObject({ ok: true });
    return req.json();
  }

  it('a valid UBL and a valid CII invoice pass validation with the rule packs; without Peppol settings the worker ends them clearly', async () => {
    for (const file of [SAMPLE_UBL_INVOICE, SAMPLE_CII_INVOICE]) {
      const s = await send(corpusFile(file));
      expect(s.history.map((h) => h.state)).toEqual([
        'received',
        'accepted',
        'detected',
        'validated',
        'InvoiceSentError',
      ]);
      expect(s.validation?.isValid).toBe(true);
      expect(s.validation?.errorCount).toBe(0);
      expect(s.validation?.ruleSets.length).toBeGreaterThanOrEqual(2);
      expect(s.validation?.ruleSets.every((r) => r.outcome === 'passed')).toBe(true);
      // Not an invalid payload: the event names the missing settings, stage configuration, nothing was sent.
      const event = await errorEventFor(s.id);
      expect(String(event['message'])).toMatch(/^Peppol sending is not configured: .*PEPPOL_AP_KEYSTORE.* not set$/);
      expect(event['details']).toMatchObject({
        stage: 'configuration',
        reasonCode: 'PEPPOL_NOT_CONFIGURED',
        attempt: '0',
        protocol: '',
        endpoint: '',
      });
    }
  });

  it('an amount in scientific notation ends in InvoiceSentError: Invalid payload, SV assertion on the record, signed event', async () => {
    const xml = corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace(/(<cbc:PayableAmount currencyID="EUR">)250\.33</, '$12.5033E2<');
    expect(xml).toContain('2.5033E2');
    const s = await send(Buffer.from(xml));
    expect(s.state).toBe('InvoiceSentError');
    expect(s.history.map((h) => h.state)).toEqual(['received', 'accepted', 'detected', 'invalid', 'InvoiceSentError']);
    expect(s.history.at(-1)?.detail).toMatch(/^Invalid payload: \[SV\] .*PayableAmount/);
    expect(s.validation?.isValid).toBe(false);
    const sv = s.validation?.assertions.find((a) => a.reasonCode === 'SV');
    expect(sv?.location).toMatch(/PayableAmount/);
    expect(sv?.text).toMatch(/decimal/i);

    const event = await errorEventFor(s.id);
    expect(event).toMatchObject({
      topic: 'InvoiceSentError',
      partyId: LEGAL_ENTITY,
      documentId: s.id,
      createdBy: 'api',
    });
    expect(String(event['message'])).toMatch(/^Invalid payload: /);
    const details = event['details'] as Record<string, string>;
    expect(details).toMatchObject({ id: s.id, stage: 'validation', reasonCode: 'SV', attempt: '0' });
    expect(details['sourceDocumentTypeId']).toBe(
      'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017::2.1',
    );
    // The same event is in the missed-events API.
    const listed = await request(ctx.app)
      .get('/api/v1/events')
      .query({ topic: 'InvoiceSentError' })
      .auth(token, { type: 'bearer' });
    expect(listed.status).toBe(200);
    expect((listed.body as { items: { documentId: string }[] }).items.map((i) => i.documentId)).toContain(s.id);
  });

  it('a business-rule violation ends in InvoiceSentError with BV', async () => {
    // BR-CO-15: the invoice total with VAT must equal the total without VAT plus the VAT amount.
    const xml = corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace(/(<cbc:TaxInclusiveAmount currencyID="EUR">)[0-9.]+</, '$19999.99<');
    const s = await send(Buffer.from(xml));
    expect(s.state).toBe('InvoiceSentError');
    expect(s.validation?.assertions.some((a) => a.reasonCode === 'BV' && a.ruleId === 'BR-CO-15')).toBe(true);
    const event = await errorEventFor(s.id);
    expect((event['details'] as Record<string, string>)['reasonCode']).toBe('BV');
  });

  it('an XRechnung 2.3 invoice is refused at detection, naming its end date and XRechnung 3.0', async () => {
    const s = await send(
      fs.readFileSync(path.join(CORPUS_DIR, 'facturx', 'mustang', 'ubl-selfbilled-01.20a-INVOICE_ubl.xml')),
    );
    expect(s.state).toBe('InvoiceSentError');
    expect(s.history.at(-1)?.detail).toMatch(/XRechnung 2\.3 is retired: .*1 February 2024.*XRechnung 3\.0/);
    const event = await errorEventFor(s.id);
    expect(event['details'] as Record<string, string>).toMatchObject({
      stage: 'detection',
      reasonCode: 'UNKNOWN_FORMAT',
    });
  });

  it('an SI-UBL 1.2 invoice is refused at detection: InvoiceSentError naming NLCIUS, and its event', async () => {
    const dir = path.join(CORPUS_DIR, 'nlcius', 'si-ubl-1.2-rejected');
    const file = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.xml'))
      .sort()[0]!;
    const s = await send(fs.readFileSync(path.join(dir, file)));
    expect(s.state).toBe('InvoiceSentError');
    expect(s.history.map((h) => h.state)).toEqual(['received', 'accepted', 'rejected', 'InvoiceSentError']);
    expect(s.history.at(-1)?.detail).toMatch(/NLCIUS/);
    const event = await errorEventFor(s.id);
    expect(event['details'] as Record<string, string>).toMatchObject({
      stage: 'detection',
      reasonCode: 'UNKNOWN_FORMAT',
    });
  });
});
