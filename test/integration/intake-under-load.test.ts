import { createHash, randomUUID } from 'node:crypto';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { sendInvoiceWorkflowId } from '../../src/core/identifiers';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import type { SendInvoiceResult } from '../../workflows/contracts/send-invoice';
import { corpusFile, SAMPLE_CII_INVOICE } from '../support/corpus';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { testWorkflowBundle } from '../support/workflow-bundle';

const PARTY = '0106:44444444';
const UPLOADS = 200;
const CLIENTS = 10;
/** Every tenth upload repeats the id of the upload before it, sent at the same time. */
const REPEAT_EVERY = 10;

/**
 * The storage invariants under a busy integrator, end to end on the real dev server and database: API and worker
 * write at the same time, uploads race on one id. Every upload answered 200 has exactly one record, its bytes,
 * a history with every step, and the state its workflow ended with.
 */
describe('intake under concurrent load', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `intake-load-${randomUUID()}`;
  let ctx: TestContext;
  let token: string;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let connection: Connection;
  let temporalClient: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
    temporalClient = new Client({ connection, namespace: 'default' });
    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createTestContext('intakeload', {
      workflows: starter,
      env: { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, WORKER_METRICS_ADDRESS: '' },
    });
    await ctx.core.directory.createTenant({ id: 'tenantL', name: 'L' });
    await ctx.core.directory.createParty({
      tenantId: 'tenantL',
      partyId: PARTY,
      legalEntityId: `NL:${PARTY}`,
      name: 'L',
    });
    token = await ctx.token(await ctx.createClient(['tenantL']));
    const workflowBundle = await testWorkflowBundle();
    worker = await startWorker(ctx.config, { workflowBundle });
  });

  afterAll(async () => {
    await worker?.stop();
    await starter.close();
    await connection.close();
    await ctx.close();
  });

  it(`answers ${UPLOADS} uploads from ${CLIENTS} clients with one record each, bytes, full history and the run's state`, async () => {
    // A Peppol BIS 3 CII invoice: a format whose official rules are not pinned here, so each run takes every step
    // (detect, validate, final state) without spending seconds of Saxon per document; the storage paths are the same.
    const cii = corpusFile(SAMPLE_CII_INVOICE).toString('utf8');
    const base = Buffer.from(
      cii.replace(
        /(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]*/,
        '$1urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      ),
    );
    // Distinct bytes per upload (a comment after the root), so a record holding another upload's bytes shows.
    const plan = Array.from({ length: UPLOADS }, (_, i) => ({
      body: Buffer.concat([base, Buffer.from(`\n<!-- upload ${i} -->\n`)]),
      id: randomUUID(),
    }));
    for (let i = REPEAT_EVERY - 1; i < UPLOADS; i += REPEAT_EVERY) plan[i]!.id = plan[i - 1]!.id;

    const answers: Array<{ status: number; id: string; sha256: string }> = [];
    let next = 0;
    const client = async () => {
      for (;;) {
        const i = next++;
        if (i >= UPLOADS) return;
        const { body, id } = plan[i]!;
        const res = await request(ctx.app)
          .post(`/api/v1/${PARTY}/salesInvoice/send`)
          .auth(token, { type: 'bearer' })
          .set('X-Service-DocumentId', id)
          .type('application/xml')
          .send(body);
        answers.push({ status: res.status, id, sha256: createHash('sha256').update(body).digest('hex') });
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));

    expect(answers.filter((a) => a.status !== 200 && a.status !== 409)).toEqual([]);
    const accepted = answers.filter((a) => a.status === 200);
    // One 200 per id, whichever of two racing uploads got it.
    expect(new Set(accepted.map((a) => a.id)).size).toBe(accepted.length);
    expect(accepted.length).toBe(UPLOADS - UPLOADS / REPEAT_EVERY);

    const records = ctx.core.db.models.Document;
    for (const a of accepted) {
      const handle = temporalClient.workflow.getHandle(sendInvoiceWorkflowId('tenantL', a.id));
      const result = (await handle.result()) as SendInvoiceResult;
      expect(await records.countDocuments({ tenantId: 'tenantL', documentId: a.id })).toBe(1);
      const record = await ctx.core.documents.find('tenantL', a.id);
      expect(record).not.toBeNull();
      // The bytes are there, whole, and they are the accepted request's own.
      const bytes = await ctx.core.db.blobs.read(record!.blobId);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(a.sha256);
      expect({ id: a.id, state: record!.state, final: record!.final }).toEqual({
        id: a.id,
        state: result.state,
        final: true,
      });
      const states = record!.history.map((h) => h.state);
      expect(states).toEqual(['received', 'accepted', 'detected', states[3], 'InvoiceSentError']);
      expect(['validated', 'not-validated', 'invalid']).toContain(states[3]);
    }
    // No bytes without a record.
    const referenced = new Set((await records.find({ tenantId: 'tenantL' }).lean()).map((d) => d.blobId));
    const files = await ctx.core.db.connection.db!.collection(ctx.core.db.blobs.filesCollection).find().toArray();
    expect(files.filter((f) => !referenced.has(String(f._id))).length).toBe(0);
  }, 900_000);
});
