import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { sendInvoiceWorkflowId } from '../../src/core/identifiers';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { corpusFile, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { requireEnv } from '../support/services';
import { createTestContext, type TestClient, type TestContext } from '../support/test-app';
import { eventually } from '../support/poll';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { workerProcesses } from '../support/worker-process';

const PARTY = '0106:33333333';
const temporalEnums = temporal.api.enums.v1;
/** States a sales invoice ends in. */
const FINAL = new Set(['delivered', 'InvoiceSentError']);
/** This file's worker has no Peppol settings: valid invoices end here, saying which settings are missing. */
const NOT_CONFIGURED =
  /^Peppol sending is not configured: PEPPOL_AP_KEYSTORE \(or PEPPOL_AP_CERTIFICATE \+ PEPPOL_AP_PRIVATE_KEY\), PEPPOL_AP_CA, PEPPOL_SMP_TRUSTSTORE not set$/;
const isFinal = (s: string) => FINAL.has(s);

/** Polls the status endpoint until the document leaves the given states (bounded). */
async function waitForState(
  ctx: TestContext,
  token: string,
  id: string,
  done: (s: string) => boolean,
  timeoutMs = 60_000,
) {
  let last: string | undefined;
  return eventually(
    async () => {
      const res = await request(ctx.app)
        .get(`/api/v1/${PARTY}/salesInvoice/${id}/status`)
        .auth(token, { type: 'bearer' });
      const body = res.body as {
        state: string;
        history: { state: string; detail?: string }[];
        format?: { id: string };
      };
      last = body.state;
      return res.status === 200 && done(body.state) ? body : undefined;
    },
    timeoutMs,
    () => `document ${id} leaving ${last ?? 'no state'}`,
    200,
  );
}

describe('sendInvoice on the real Temporal dev server', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `send-invoice-${randomUUID()}`;
  let ctx: TestContext;
  let token: string;
  let client: TestClient;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let workflowBundle: { code: string };

  beforeAll(async () => {
    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createTestContext('sendinvoice', {
      workflows: starter,
      env: { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, WORKER_METRICS_ADDRESS: '' },
    });
    await ctx.core.directory.createTenant({ id: 'tenantS', name: 'S' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantS',
      partyId: PARTY,
      legalEntityId: `NL:${PARTY}`,
      name: 'Sender',
    });
    client = await ctx.createClient(['tenantS']);
    token = await ctx.token(client);
    workflowBundle = await testWorkflowBundle();
  });

  afterAll(async () => {
    await worker?.stop();
    await starter.close();
    await ctx.close();
  });

  const upload = (body: Buffer, documentId = randomUUID()) =>
    request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', documentId)
      .type('application/xml')
      .send(body);

  it('detects and validates UBL and CII invoices, records the history, and ends them clearly on a worker without Peppol settings', async () => {
    worker = await startWorker(ctx.config, { workflowBundle });
    const ubl = await upload(corpusFile(SAMPLE_UBL_INVOICE));
    const cii = await upload(corpusFile(SAMPLE_CII_INVOICE));
    expect([ubl.status, cii.status]).toEqual([200, 200]);
    const ublStatus = await waitForState(ctx, token, (ubl.body as { id: string }).id, isFinal);
    const ciiStatus = await waitForState(ctx, token, (cii.body as { id: string }).id, isFinal);
    expect(ublStatus.state).toBe('InvoiceSentError');
    expect(ublStatus.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'InvoiceSentError',
    ]);
    expect(ublStatus.history.at(-1)?.detail).toMatch(NOT_CONFIGURED);
    expect(ublStatus.format?.id).toMatch(/ubl/);
    expect(ciiStatus.state).toBe('InvoiceSentError');
    expect(ciiStatus.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'InvoiceSentError',
    ]);
    expect(ciiStatus.format?.id).toMatch(/cii/);

    // The workflow id is the business key, and its result says the same as the record.
    const conn = await Connection.connect({ address: temporalAddress });
    try {
      const handle = new Client({ connection: conn }).workflow.getHandle(
        sendInvoiceWorkflowId('tenantS', (ubl.body as { id: string }).id),
      );
      await expect(handle.result()).resolves.toMatchObject({
        state: 'InvoiceSentError',
        detection: { ok: true },
        validation: { kind: 'valid' },
        delivery: { attempts: 0 },
      });
    } finally {
      await conn.close();
    }
  });

  it('ends malformed and unsafe XML in InvoiceSentError with the reason, without retrying forever', async () => {
    worker ??= await startWorker(ctx.config, { workflowBundle });
    const bomb = Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><x>&b;</x>');
    const broken = Buffer.from(
      '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><unclosed></Invoice>',
    );
    const unknown = Buffer.from('<Memo xmlns="urn:example:memo"><text>hello</text></Memo>');
    for (const [body, code] of [
      [bomb, 'UNSAFE_XML'],
      [broken, 'INVALID_XML'],
      [unknown, 'UNKNOWN_FORMAT'],
    ] as const) {
      const res = await upload(body);
      expect(res.status).toBe(200);
      const status = await waitForState(ctx, token, (res.body as { id: string }).id, isFinal);
      expect(status.state).toBe('InvoiceSentError');
      expect(status.history.map((h) => h.state)).toEqual(['received', 'accepted', 'rejected', 'InvoiceSentError']);
      expect(status.history.at(-2)?.detail).toMatch(new RegExp(`^${code}: `));
      expect(status.history.at(-1)?.detail).toMatch(new RegExp(`^Invalid payload: `));
    }
  });

  it('finishes a workflow after its worker process is killed mid-run', async () => {
    await worker?.stop();
    worker = undefined;
    const spawnWorker = workerProcesses({ mongoUri: ctx.config.mongo.uri, temporalAddress, taskQueue });

    const conn = await Connection.connect({ address: temporalAddress });
    const temporal = new Client({ connection: conn });
    // A large invoice keeps the detection activity busy long enough to be caught in flight.
    const big = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<!--'),
      Buffer.alloc(20 * 1024 * 1024, 0x20),
      Buffer.from('-->\n'),
      corpusFile(SAMPLE_UBL_INVOICE).subarray(corpusFile(SAMPLE_UBL_INVOICE).indexOf('<Invoice')),
    ]);
    let killedMidRun = false;
    try {
      for (let attempt = 0; attempt < 3 && !killedMidRun; attempt++) {
        const first = spawnWorker();
        const res = await upload(big);
        expect(res.status).toBe(200);
        const id = (res.body as { id: string }).id;
        const handle = temporal.workflow.getHandle(sendInvoiceWorkflowId('tenantS', id));
        // Wait until the activity is running on the first worker, then kill that worker without warning. (History
        // only records ActivityTaskStarted at completion, so ask for the pending activity's state instead.)
        await eventually(
          async () => {
            const { raw } = await handle.describe().catch(() => ({ raw: { pendingActivities: [] } }));
            return (raw.pendingActivities ?? []).some(
              (a) => a.state === temporalEnums.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
            );
          },
          60_000,
          'the activity started on the first worker',
          25,
        );
        await first.kill();
        const desc = await handle.describe();
        killedMidRun = desc.status.name === 'RUNNING';
        const second = spawnWorker();
        try {
          const status = await waitForState(ctx, token, id, isFinal, 180_000);
          expect(status.history.map((h) => h.state)).toEqual([
            'received',
            'accepted',
            'detected',
            'validated',
            'InvoiceSentError',
          ]);
          expect(status.history.at(-1)?.detail).toMatch(NOT_CONFIGURED);
          await expect(handle.result()).resolves.toMatchObject({ state: 'InvoiceSentError' });
        } finally {
          await second.stop();
        }
      }
    } finally {
      await conn.close();
    }
    // The kill must have happened while the workflow was still running, or this test proved nothing.
    expect(killedMidRun).toBe(true);
  }, 300_000);
});
