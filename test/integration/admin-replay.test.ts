import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { Client, Connection } from '@temporalio/client';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { sendInvoiceWorkflowId } from '../../src/core/identifiers';
import { runAdmin } from '../../src/main/admin';
import { composeAdminServices } from '../../src/main/admin-services';
import type { ReplayServices } from '../../src/main/admin-replay';
import { TemporalDeliveryStarter } from '../../src/main/webhooks';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import type { ReplayReport } from '../../src/replay/runner';
import { connectTemporalClient, type TemporalClient } from '../../src/temporal/client';
import { verifyWebhook } from '../../src/webhooks/verify-webhook';
import { requireEnv } from '../support/services';
import { eventually } from '../support/poll';
import {
  createWebhookTestContext,
  startReceiver,
  type TestReceiver,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { testWorkflowBundle } from '../support/workflow-bundle';

/** Two attempts 100 ms apart, then HookSentError. */
const SCHEDULE = { kind: 'table', delaysMs: [100] };

describe('admin replay and hook commands on the real servers', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `admin-replay-${randomUUID()}`;
  let connection: Connection;
  let client: Client;
  let temporal: TemporalClient;
  let documents: TemporalWorkflowStarter;
  let ctx: WebhookTestContext;
  let worker: RunningWorker;
  let receiver: TestReceiver;
  let failing = true;
  let admin: ReturnType<typeof composeAdminServices>;
  const tenantA = `ta${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const tenantB = `tb${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const party = `0106:${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection });
    receiver = await startReceiver((req) =>
      failing && (req.json()['topic'] as string) !== 'Ping' ? { status: 500 } : { status: 204 },
    );
    documents = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createWebhookTestContext('adminreplay', {
      starter: new TemporalDeliveryStarter(() => client, { taskQueue, searchAttributes: true }),
      workflows: documents,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_RETRY_SCHEDULE: JSON.stringify(SCHEDULE),
        WEBHOOK_TIMEOUT_MS: '3000',
      },
    });
    temporal = await connectTemporalClient(ctx.config.temporal);
    admin = composeAdminServices(ctx.core, temporal);
    for (const id of [tenantA, tenantB]) await ctx.core.directory.createTenant({ id, name: id });
    await ctx.core.directory.createParty({
      tenantId: tenantA,
      partyId: party,
      legalEntityId: `NL:${party}`,
      name: 'A',
    });
    worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await temporal?.close();
    await documents?.close();
    await connection?.close();
    await receiver?.close();
    await ctx?.close();
  });

  const cli = (args: string[], replay: Partial<ReplayServices> = {}) =>
    runAdmin(ctx.core, args, { replay: { ...admin.replay, ...replay }, hooks: admin.hooks, control: documents });

  /** Deliveries of ReplayTopic the receiver answered 2xx, counted per delivery id. */
  const delivered = () => {
    const counts = new Map<string, number>();
    for (const r of receiver.requests) {
      if ((r.json()['topic'] as string) !== 'ReplayTopic' || r.at < replayStart) continue;
      const id = String(r.headers['x-service-delivery']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };
  let replayStart = Number.MAX_SAFE_INTEGER;
  let hookId = '';
  let secureKey = '';

  it('creates, lists and updates a hook through the CLI with the API validation', async () => {
    const created = (await cli([
      'hook',
      'create',
      '--tenant',
      tenantA,
      '--url',
      `${receiver.url}/events`,
      '--topic',
      'ReplayTopic',
      '--name',
      'replay receiver',
    ])) as { id: string; secureKey: string; isActive: boolean };
    expect(created.secureKey).toMatch(/^whsec_/);
    expect(created.isActive).toBe(true);
    hookId = created.id;
    secureKey = created.secureKey;
    const listed = (await cli(['hook', 'list', '--tenant', tenantA])) as { id: string }[];
    expect(listed.map((h) => h.id)).toEqual([hookId]);
    expect(JSON.stringify(listed)).not.toContain(secureKey);
    const updated = await cli(['hook', 'update', hookId, '--name', 'renamed', '--timeout-seconds', '2']);
    expect(updated).toMatchObject({ id: hookId, name: 'renamed', url: `${receiver.url}/events`, isActive: true });
    // The SSRF guard and the hook rules hold here as in the API.
    await expect(cli(['hook', 'update', hookId, '--url', 'http://169.254.169.254/latest'])).rejects.toThrow(/url/);
    await expect(cli(['hook', 'create', '--tenant', tenantA, '--url', `${receiver.url}/x`])).rejects.toThrow(/topic/);
  });

  it("refuses unknown hooks, other tenants' hooks, bad dates and bad states with clear errors", async () => {
    await expect(cli(['replay', 'events', '--hook', 'no-such-hook'])).rejects.toThrow(/Hook no-such-hook not found/);
    await expect(cli(['replay', 'events', '--hook', hookId, '--tenant', tenantB])).rejects.toThrow(
      `Hook ${hookId} not found in tenant ${tenantB}`,
    );
    await expect(cli(['hook', 'ping', hookId, '--tenant', tenantB])).rejects.toThrow(/not found in tenant/);
    await expect(cli(['hook', 'rotate-secret', hookId, '--tenant', tenantB])).rejects.toThrow(/not found in tenant/);
    await expect(cli(['replay', 'events', '--from', 'last tuesday'])).rejects.toThrow(/--from must be an ISO 8601/);
    await expect(
      cli(['replay', 'events', '--from', '2026-05-02T00:00:00Z', '--to', '2026-05-01T00:00:00Z']),
    ).rejects.toThrow(/--from must be before --to/);
    await expect(cli(['replay', 'events', '--state', 'delivered'])).rejects.toThrow(/--state must be HookSentError/);
    await expect(cli(['replay', 'events', '--tenant', 'nope', '--topic', 'X'])).rejects.toThrow(
      /Tenant nope not found/,
    );
    await expect(cli(['replay', 'events'])).rejects.toThrow(/needs --hook, --topic/);
    await expect(cli(['replay', 'invoices', '--tenant', tenantA])).rejects.toThrow(/--state InvoiceSentError/);
    await expect(cli(['replay', 'events', '--topic', 'ReplayTopic', '--rate', 'fast'])).rejects.toThrow(/--rate/);
  });

  it('a dry run lists the failed deliveries; a run stopped half-way and started again delivers each exactly once', async () => {
    const events = [];
    for (let i = 0; i < 6; i++)
      events.push(
        await ctx.webhooks.publisher.publishEvent({
          tenantId: tenantA,
          topic: 'ReplayTopic',
          party: null,
          message: `event ${i}`,
          createdBy: 'peppol',
        }),
      );
    // Every delivery fails twice and ends in HookSentError.
    await eventually(
      async () =>
        (await ctx.webhooks.events.list({ tenantIds: [tenantA], topic: 'HookSentError', limit: 100 })).length >= 6,
      60_000,
      'six HookSentError events',
      200,
    );
    failing = false;
    replayStart = Date.now();
    const args = ['replay', 'events', '--state', 'HookSentError', '--tenant', tenantA, '--rate', '50/s'];

    const dry = (await cli([...args, '--dry-run'])) as ReplayReport;
    const listed = dry.items.filter((i) => i.action === 'would-act').map((i) => i.key);
    expect(listed).toHaveLength(6);
    expect(new Set(listed)).toEqual(new Set(events.map((e) => `${tenantA}/${e.event.id}/${hookId}`)));
    await sleep(500);
    expect(delivered().size).toBe(0);

    // The first run dies after claiming its fourth item (three sent, the fourth claimed and not sent).
    let claimed = 0;
    await expect(
      cli(args, {
        onProgress: (p) => {
          if (p.phase === 'claimed' && ++claimed === 4) throw new Error('killed half-way');
        },
      }),
    ).rejects.toThrow('killed half-way');
    await eventually(() => delivered().size === 3, 30_000, 'three deliveries of the first run', 100);

    const second = (await cli(args)) as ReplayReport;
    expect(second).toMatchObject({ runId: dry.runId, selected: 6, acted: 3, skipped: 3, failed: 0 });
    const actedNow = second.items.filter((i) => i.action !== 'skip').map((i) => i.key);
    expect(actedNow).toEqual(listed.slice(3));
    await eventually(() => delivered().size === 6, 30_000, 'six deliveries', 100);
    // Give a duplicate time to arrive, then count: each delivery exactly once, and verified with the hook's key.
    await sleep(1_500);
    expect([...delivered().values()]).toEqual([1, 1, 1, 1, 1, 1]);
    for (const r of receiver.requests.filter((q) => q.at >= replayStart))
      expect(verifyWebhook(r.rawBody, r.headers, secureKey)).toMatchObject({ ok: true });

    // A third run with the same command has nothing left to do.
    const third = (await cli(args)) as ReplayReport;
    expect(third).toMatchObject({ acted: 0, skipped: 6 });
    await sleep(500);
    expect([...delivered().values()]).toEqual([1, 1, 1, 1, 1, 1]);
  }, 120_000);

  it('pings the hook, also switched off, and reports the answer', async () => {
    const off = await cli(['hook', 'disable', hookId]);
    expect(off).toMatchObject({ id: hookId, isActive: false });
    const before = receiver.requests.length;
    const pong = await cli(['hook', 'ping', hookId]);
    expect(pong).toMatchObject({ hookId, outcome: 'delivered', httpStatus: 204 });
    const ping = receiver.requests.slice(before).find((r) => r.json()['topic'] === 'Ping');
    expect(ping).toBeDefined();
    expect(verifyWebhook(ping!.rawBody, ping!.headers, secureKey)).toMatchObject({ ok: true });
    await cli(['hook', 'update', hookId, '--active', 'true']);
  }, 60_000);

  it('rotates the secret: both keys verify inside the overlap, only the new one after', async () => {
    const rotated = (await cli(['hook', 'rotate-secret', hookId, '--overlap', '1h'])) as {
      secureKey: string;
      secretVersion: number;
    };
    expect(rotated.secretVersion).toBe(1);
    const pingOnce = async () => {
      const before = receiver.requests.length;
      await cli(['hook', 'ping', hookId]);
      return receiver.requests.slice(before).find((r) => r.json()['topic'] === 'Ping')!;
    };
    const inside = await pingOnce();
    expect(inside.headers['x-service-signature-next']).toMatch(/^sha256=/);
    expect(String(inside.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(inside.rawBody, inside.headers, secureKey)).toMatchObject({ ok: true });
    expect(verifyWebhook(inside.rawBody, inside.headers, rotated.secureKey)).toMatchObject({ ok: true });

    // A rotation with no overlap: the previous key (the first rotation's) stops signing at once.
    const again = (await cli(['hook', 'rotate-secret', hookId, '--overlap', '0'])) as { secureKey: string };
    const after = await pingOnce();
    expect(after.headers['x-service-signature-next']).toBeUndefined();
    expect(verifyWebhook(after.rawBody, after.headers, again.secureKey)).toMatchObject({ ok: true });
    expect(verifyWebhook(after.rawBody, after.headers, rotated.secureKey)).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
  }, 60_000);

  it('resends sales invoices in InvoiceSentError once, however often the run is started', async () => {
    const token = await ctx.token(await ctx.createClient([tenantA]));
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await request(ctx.app)
        .post(`/api/v1/${party}/salesInvoice/send`)
        .auth(token, { type: 'bearer' })
        .set('X-Service-DocumentId', randomUUID())
        .type('application/xml')
        .send('<Unknown xmlns="urn:example:not-an-invoice"><Amount>1</Amount></Unknown>');
      expect(res.status).toBe(200);
      ids.push((res.body as { id: string }).id);
    }
    const stateOf = async (id: string) => (await ctx.core.documents.find(tenantA, id))?.state;
    for (const id of ids) await eventually(async () => (await stateOf(id)) === 'InvoiceSentError', 60_000, id, 200);

    const args = ['replay', 'invoices', '--state', 'InvoiceSentError', '--tenant', tenantA];
    const dry = (await cli([...args, '--dry-run'])) as ReplayReport;
    expect(dry.items.map((i) => i.documentId).sort()).toEqual([...ids].sort());
    const run = (await cli(args)) as ReplayReport;
    expect(run.items.map((i) => [i.documentId, i.action, i.detail]).sort()).toEqual(
      [...ids].sort().map((id) => [id, 'resent', 'generation 1']),
    );
    // The resend's run ran (and ended in InvoiceSentError again: the document is still no invoice).
    for (const id of ids) {
      const result = await client.workflow.getHandle(sendInvoiceWorkflowId(tenantA, id)).result();
      expect(result).toMatchObject({ documentId: id, state: 'InvoiceSentError' });
      const doc = await ctx.core.documents.find(tenantA, id);
      // The resend's own final entry: the document ends in InvoiceSentError again, not stuck in resending.
      expect(doc?.history.map((h) => h.key)).toEqual(expect.arrayContaining(['g1:resend', 'g1:send-error']));
      expect(doc?.state).toBe('InvoiceSentError');
    }
    const again = (await cli(args)) as ReplayReport;
    // Done in this run already (or no longer in InvoiceSentError): nothing is resent twice.
    expect(again).toMatchObject({ acted: 0, failed: 0 });
    for (const id of ids) {
      const doc = await ctx.core.documents.find(tenantA, id);
      expect(doc?.history.some((h) => h.key.startsWith('g2:'))).toBe(false);
    }
  }, 120_000);
});
