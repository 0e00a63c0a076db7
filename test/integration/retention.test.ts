import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import request from 'supertest';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { runAdmin } from '../../src/main/admin';
import { documentKey } from '../../src/storage/document.repository';
import { reconcileStorage } from '../../src/maintenance/reconcile';
import { connectTemporalClient } from '../../src/temporal/client';
import { RETENTION_SCHEDULE_ID } from '../../workflows/contracts/purge-records';
import { createTestContext, type TestContext } from '../support/test-app';
import { requireEnv } from '../support/services';
import { eventually } from '../support/poll';
import { testWorkflowBundle } from '../support/workflow-bundle';

/*
 * Retention on the real servers with a compressed clock: failed invoices are kept 4 seconds instead of 90 days
 * (RETENTION_FAILED_INVOICE_DAYS in fractions of a day) and events as long; an AS4 message (whose period cannot be
 * shorter than the duplicate window, an hour here) is aged by moving its arrival back. The worker creates the
 * Temporal Schedule; the test triggers it instead of waiting for its interval. Checked: the purged documents, their
 * history, bytes (and a conversion made from them) and events are gone; a held document, a document still in flight
 * and a younger one stay; reconciliation finds nothing pointing at missing bytes and no bytes without a record; a
 * released hold lets the next purge take the document.
 */

const PARTY = '0106:77777777';
const TENANT = 'tenantRetention';
const SECONDS = (n: number) => String(n / 86_400);

describe('retention purge (real worker, Temporal Schedule, FerretDB)', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `retention-${randomUUID()}`;
  let ctx: TestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let temporal: Awaited<ReturnType<typeof connectTemporalClient>>;
  let token: string;

  beforeAll(async () => {
    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createTestContext('retention', {
      workflows: starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        RETENTION_ENABLED: 'true',
        // An interval the test never waits for: it triggers the schedule.
        RETENTION_INTERVAL_MINUTES: '600',
        RETENTION_BATCH: '2',
        RETENTION_FAILED_INVOICE_DAYS: SECONDS(4),
        RETENTION_DOCUMENT_DAYS: '1',
        RETENTION_EVENT_DAYS: SECONDS(4),
        AS4_DUPLICATE_WINDOW_HOURS: '1',
        RETENTION_AS4_MESSAGE_DAYS: SECONDS(3600),
      },
    });
    await ctx.core.directory.createTenant({ id: TENANT, name: 'R' });
    await ctx.core.directory.createParty({ tenantId: TENANT, partyId: PARTY, legalEntityId: `NL:${PARTY}`, name: 'R' });
    token = await ctx.token(await ctx.createClient([TENANT]));
    temporal = await connectTemporalClient({ address: temporalAddress, namespace: 'default' });
    worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
  });

  afterAll(async () => {
    await worker?.stop();
    await temporal?.client.schedule
      .getHandle(RETENTION_SCHEDULE_ID)
      .delete()
      .catch(() => undefined);
    await temporal?.close();
    await starter?.close();
    await ctx?.close();
  });

  /** Uploads a document the gateway refuses (not a known format) and waits for InvoiceSentError. */
  async function failedInvoice(): Promise<string> {
    const id = randomUUID();
    const res = await request(ctx.app)
      .post(`/api/v1/${PARTY}/salesInvoice/send`)
      .auth(token, { type: 'bearer' })
      .set('X-Service-DocumentId', id)
      .type('application/xml')
      .send(Buffer.from(`<NotAnInvoice xmlns="urn:example:${id}"/>`));
    expect(res.status).toBe(200);
    await eventually(
      async () => ((await ctx.core.documents.find(TENANT, id))?.state === 'InvoiceSentError' ? true : undefined),
      60_000,
      `InvoiceSentError of ${id}`,
    );
    return id;
  }

  const models = () => ctx.core.db.models;
  const blobExists = async (blobId: string) =>
    (await models()
      .Document.db.collection(ctx.core.db.blobs.filesCollection)
      .countDocuments({ _id: blobId as never })) > 0;

  async function purgeNow(): Promise<void> {
    // The worker created (or updated) the schedule at start.
    const handle = temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID);
    const before = (await handle.describe()).info.recentActions.length;
    await handle.trigger();
    const action = await eventually(
      async () => (await handle.describe()).info.recentActions.at(before),
      30_000,
      'the triggered purge',
      250,
    );
    const run = temporal.client.workflow.getHandle(
      action.action.workflow.workflowId,
      action.action.workflow.firstExecutionRunId,
    );
    await run.result();
  }

  it('deletes what is past its period in bounded batches and keeps what is held, in flight or young', async () => {
    const schedule = await eventually(
      () =>
        temporal.client.schedule
          .getHandle(RETENTION_SCHEDULE_ID)
          .describe()
          .catch(() => undefined),
      30_000,
      'the retention schedule',
    );
    expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'purgeExpiredRecords', taskQueue });

    const [a, b, c] = [await failedInvoice(), await failedInvoice(), await failedInvoice()];
    const stored = async (id: string) => (await ctx.core.documents.findStored(TENANT, id))!;
    const blobA = (await stored(a)).blobId;
    // A conversion stored for sending names its source: it goes with it.
    const converted = await ctx.core.db.blobs.put(Readable.from([Buffer.from('<converted/>')]), {
      limit: 100,
      filename: 'c.xml',
      contentType: 'application/xml',
      metadata: { tenantId: TENANT, documentId: a, convertedFrom: blobA },
    });
    // A sales invoice still in flight (accepted, no final entry), uploaded long ago.
    const inFlight = randomUUID();
    const bytes = await ctx.core.db.blobs.put(Readable.from([Buffer.from('<x/>')]), {
      limit: 100,
      filename: 'x.xml',
      contentType: 'application/xml',
    });
    await ctx.core.documents.insertOutbound({
      tenantId: TENANT,
      documentId: inFlight,
      partyId: PARTY,
      createdBy: 'api',
      contentType: 'application/xml',
      size: bytes.size,
      sha256: bytes.sha256,
      blobId: bytes.blobId,
    });
    await ctx.core.documents.accept(TENANT, inFlight);
    await models()
      .Document.updateOne({ _id: documentKey(TENANT, inFlight) }, { createdAt: new Date(0) })
      .exec();
    // A received AS4 message two hours old (its period: one hour) and one just in.
    const as4 = async (ageMs: number) => {
      const blob = await ctx.core.db.blobs.put(Readable.from([Buffer.from('<sbd/>')]), {
        limit: 100,
        filename: 'sbd.xml',
        contentType: 'application/xml',
      });
      const id = `${randomUUID()}@test`;
      await models().As4Inbound.create({
        _id: id,
        instanceKey: id,
        instanceId: id,
        tenantId: TENANT,
        partyId: PARTY,
        sender: '0106:1',
        receiver: PARTY,
        documentType: 'x',
        process: 'x',
        fromSeatId: 'PXX000001',
        toSeatId: 'PXX000002',
        signerSha256: 'x',
        blobId: blob.blobId,
        size: blob.size,
        sha256: blob.sha256,
        referencesSha256: 'x',
        receiptXml: '<receipt/>',
        receivedAt: new Date(Date.now() - ageMs),
        state: 'detected',
      });
      return { id, blobId: blob.blobId };
    };
    const oldMessage = await as4(2 * 3_600_000);
    const newMessage = await as4(0);

    // The legal hold, through the admin command.
    const held = await runAdmin(ctx.core, ['document', 'hold', TENANT, b, '--reason', 'tax audit 2026', '--by', 'ops']);
    expect(held).toMatchObject({ tenantId: TENANT, documentId: b, reason: 'tax audit 2026', by: 'ops' });
    await expect(runAdmin(ctx.core, ['document', 'hold', TENANT, b, '--reason', 'again'])).rejects.toMatchObject({
      code: 'CONFLICT',
    });

    const events = async (id: string) => models().WebhookEvent.countDocuments({ tenantId: TENANT, documentId: id });
    await eventually(async () => ((await events(a)) > 0 ? true : undefined), 30_000, 'the InvoiceSentError event');
    const blobs = { a: blobA, b: (await stored(b)).blobId, c: (await stored(c)).blobId };

    // The compressed clock: 4 "days" after the final state.
    await new Promise((r) => setTimeout(r, 4_500));
    const young = await failedInvoice();
    await purgeNow();

    for (const id of [a, c]) {
      expect(await ctx.core.documents.findStored(TENANT, id)).toBeNull();
      expect(await models().DocumentHistory.countDocuments({ docKey: documentKey(TENANT, id) })).toBe(0);
      expect(await events(id)).toBe(0);
    }
    expect(await blobExists(blobs.a)).toBe(false);
    expect(await blobExists(blobs.c)).toBe(false);
    expect(await blobExists(converted.blobId)).toBe(false);
    // Held: everything stays, its events too.
    expect((await ctx.core.documents.find(TENANT, b))?.state).toBe('InvoiceSentError');
    expect(await blobExists(blobs.b)).toBe(true);
    expect(await events(b)).toBeGreaterThan(0);
    // In flight, however old; and the one failed just now.
    expect(await ctx.core.documents.findStored(TENANT, inFlight)).not.toBeNull();
    expect(await ctx.core.documents.findStored(TENANT, young)).not.toBeNull();
    // The old AS4 message and its bytes are gone, the new one stays.
    expect(await models().As4Inbound.exists({ _id: oldMessage.id })).toBeNull();
    expect(await blobExists(oldMessage.blobId)).toBe(false);
    expect(await models().As4Inbound.exists({ _id: newMessage.id })).not.toBeNull();
    // No purge left half done.
    expect(await models().PurgeIntent.countDocuments({})).toBe(0);

    // Nothing points at missing bytes, and no bytes are left without a record.
    const report = await reconcileStorage(
      {
        models: models(),
        blobs: ctx.core.db.blobs,
        runs: { describeSendInvoice: async () => ({ status: 'running' }) },
      },
      { minAgeMs: 0, windowMs: 100 * 365 * 86_400_000, limit: 1000, dryRun: true, now: new Date(Date.now() + 1000) },
    );
    expect(report.findings.filter((f) => f.kind !== 'intake-incomplete')).toEqual([]);

    // Released, the held invoice goes with the next purge.
    expect(await runAdmin(ctx.core, ['document', 'holds', '--tenant', TENANT])).toHaveLength(1);
    await runAdmin(ctx.core, ['document', 'release', TENANT, b]);
    await expect(runAdmin(ctx.core, ['document', 'release', TENANT, b])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await purgeNow();
    expect(await ctx.core.documents.findStored(TENANT, b)).toBeNull();
    expect(await blobExists(blobs.b)).toBe(false);
    expect(await events(b)).toBe(0);
  }, 240_000);

  it('refuses a hold without a reason, on an unknown document, or without the ids', async () => {
    await expect(runAdmin(ctx.core, ['document', 'hold', TENANT, 'nope', '--reason', 'x'])).rejects.toMatchObject({
      code: 'DOCUMENT_NOT_FOUND',
    });
    await expect(
      runAdmin(ctx.core, ['document', 'hold', 'otherTenant', 'nope', '--reason', 'x']),
    ).rejects.toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
    const id = await failedInvoice();
    await expect(runAdmin(ctx.core, ['document', 'hold', TENANT, id])).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(runAdmin(ctx.core, ['document', 'hold', TENANT, id, '--reason', '  '])).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    // The same document id in another tenant is another document.
    await expect(runAdmin(ctx.core, ['document', 'hold', 'otherTenant', id, '--reason', 'x'])).rejects.toMatchObject({
      code: 'DOCUMENT_NOT_FOUND',
    });
    await expect(runAdmin(ctx.core, ['document', 'hold', '--reason', 'x'])).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(await runAdmin(ctx.core, ['document', 'holds', '--tenant', TENANT])).toEqual([]);
  }, 120_000);
});
