import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { Client, Connection } from '@temporalio/client';
import {
  deliverWebhookWorkflowId,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
} from '../../workflows/contracts/deliver-webhook';
import { loadConfig } from '../../src/config/load-config';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { composeWebhookRoutes, temporalDeliveryRuns, TemporalDeliveryStarter } from '../../src/main/webhooks';
import type { EventRecord } from '../../src/storage/events/event.repository';
import { HeldDeliveryRepository } from '../../src/storage/events/held-delivery.repository';
import { connectDatabase } from '../../src/storage/connection';
import type { Models } from '../../src/storage/models';
import { deliveryIdFor } from '../../src/webhooks/delivery-id';
import { toGatewayEvent } from '../../src/webhooks/event-payload';
import { HeldDeliveries } from '../../src/webhooks/held-deliveries';
import type { PublishEventInput, PublishResult } from '../../src/webhooks/publish';
import { verifyWebhook } from '../../src/webhooks/verify-webhook';
import { requireEnv } from '../support/services';
import {
  createWebhookTestContext,
  startReceiver,
  type ReceivedRequest,
  type TestReceiver,
  type WebhookTestContext,
} from '../support/webhook-harness';
import { eventually } from '../support/poll';
import { testWorkflowBundle } from '../support/workflow-bundle';

/** Four attempts 150 ms apart; Retry-After may stretch a wait to 1.5 s. */
const SCHEDULE = { kind: 'table', delaysMs: [150, 150, 150], retryAfter: { minMs: 0, maxMs: 1500 } };
const KEY = 'a-secure-key-of-enough-length';

describe('webhook delivery on the real Temporal dev server', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `webhooks-${randomUUID()}`;
  let connection: Connection;
  let client: Client;
  let ctx: WebhookTestContext;
  let worker: RunningWorker;
  const receivers: TestReceiver[] = [];
  let workflowBundle: { code: string };
  const extraWorkers: RunningWorker[] = [];

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection });
    const starter = new TemporalDeliveryStarter(() => client, { taskQueue, searchAttributes: true });
    ctx = await createWebhookTestContext('webhookdelivery', {
      starter,
      env: {
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_RETRY_SCHEDULE: JSON.stringify(SCHEDULE),
        WEBHOOK_TIMEOUT_MS: '3000',
        WEBHOOK_MAX_CONCURRENCY_PER_HOOK: '3',
      },
    });
    workflowBundle = await testWorkflowBundle();
    worker = await startWorker(ctx.config, { workflowBundle });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    for (const w of extraWorkers) await w.stop();
    for (const r of receivers) await r?.close();
    await connection?.close();
    await ctx?.close();
  });

  async function receiver(reply?: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }

  /** A tenant of its own per test, so one test's hooks never route another's events. */
  async function tenant() {
    const id = `t${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const n = () => String(Math.floor(Math.random() * 1e8)).padStart(8, '0');
    const p1 = `0106:${n()}`;
    const p2 = `0106:${n()}`;
    await ctx.core.directory.createTenant({ id, name: id });
    await ctx.core.directory.createParty({ tenantId: id, partyId: p1, legalEntityId: `NL:${p1}`, name: 'one' });
    await ctx.core.directory.createParty({ tenantId: id, partyId: p2, legalEntityId: `NL:${p2}`, name: 'two' });
    const c = await ctx.createClient([id]);
    const token = await ctx.token(c);
    return {
      id,
      token,
      p1: { partyId: p1, legalEntityId: `NL:${p1}` },
      p2: { partyId: p2, legalEntityId: `NL:${p2}` },
      async hook(body: Record<string, unknown>, party?: string, beta = false): Promise<{ id: string }> {
        const path = beta ? '/api/v1-beta/hook' : party ? `/api/v1/${party}/hook` : '/api/v1/hook';
        const res = await request(ctx.app).post(path).auth(token, { type: 'bearer' }).send(body);
        if (res.status !== 201) throw new Error(`hook: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body as { id: string };
      },
      publish(
        input: Omit<PublishEventInput, 'tenantId' | 'createdBy' | 'message'> & { message?: string },
      ): Promise<PublishResult> {
        return ctx.webhooks.publisher.publishEvent({
          tenantId: id,
          createdBy: 'peppol',
          message: 'test event',
          ...input,
        });
      },
      /** HookSentRetry / HookSentError events about one delivery. */
      async failureEvents(deliveryId: string): Promise<EventRecord[]> {
        const all = await ctx.webhooks.events.list({ tenantIds: [id], topic: 'HookSent*', limit: 1000 });
        return all.filter((e) => e.details['deliveryId'] === deliveryId);
      },
    };
  }

  /** The delivery's outcome; a run that held it (stuck hook) is followed by the run its release starts. */
  const result = async (tenantId: string, deliveryId: string): Promise<DeliverWebhookResult> => {
    const handle = () => client.workflow.getHandle(deliverWebhookWorkflowId(tenantId, deliveryId));
    for (;;) {
      const r = (await handle().result()) as DeliverWebhookResult;
      if (r.outcome !== 'held') return r;
      await sleep(250);
    }
  };

  /**
   * The outcomes of many deliveries, or, after `withinMs`, an error that says where each unfinished one stands (its
   * held record, its latest run), so a delivery that went missing names its own cause.
   */
  async function resultsWithin(
    tenantId: string,
    deliveryIds: string[],
    withinMs: number,
  ): Promise<DeliverWebhookResult[]> {
    const outcomes = new Map<string, DeliverWebhookResult>();
    const all = Promise.all(deliveryIds.map(async (d) => outcomes.set(d, await result(tenantId, d)).get(d)!));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), withinMs)));
    const first = await Promise.race([all, late]);
    clearTimeout(timer);
    if (first !== 'late') return first;
    const states = await Promise.all(
      deliveryIds
        .filter((d) => !outcomes.has(d))
        .map(async (d) => {
          const id = deliverWebhookWorkflowId(tenantId, d);
          const run = await client.workflow
            .getHandle(id)
            .describe()
            .then(
              (x) => `${x.runId} ${x.status.name}`,
              (e: Error) => e.message,
            );
          const held = await ctx.core.db.models.HeldDelivery.findById(id, { input: 0 }).lean().exec();
          return { delivery: d, latestRun: run, held };
        }),
    );
    throw new Error(`deliveries unfinished after ${withinMs} ms: ${JSON.stringify(states)}`);
  }

  const hmacHex = (key: string, body: Buffer) =>
    createHmac('sha256', Buffer.from(key, 'utf8')).update(body).digest('hex');

  it('signs each delivery so independent implementations verify it, with the payload of spec 6.3', async () => {
    const t = await tenant();
    const r = await receiver();
    const whsec = `whsec_${randomBytes(32).toString('base64')}`;
    const a = await t.hook({ url: `${r.url}/a`, topic: 'SignedTopic', secureKey: whsec }, t.p1.partyId);
    const b = await t.hook({ url: `${r.url}/b`, topic: 'SignedTopic', secureKey: KEY, action: 'https' });
    // Party level wins over environment level within one channel, so the second hook gets an event of the other party.
    const e1 = await t.publish({
      topic: 'SignedTopic',
      party: t.p1,
      documentId: 'doc-1',
      details: { sender: '0106:1' },
    });
    const e2 = await t.publish({ topic: 'SignedTopic', party: t.p2, documentId: 'doc-2', refToDocumentId: 'doc-0' });
    await Promise.all([result(t.id, deliveryIdFor(e1.event.id, a.id)), result(t.id, deliveryIdFor(e2.event.id, b.id))]);
    const [ra, rb] = ['/a', '/b'].map((p) => r.requests.find((q) => q.url === p) as ReceivedRequest);

    // Standard Webhooks headers, checked by the standardwebhooks package: the whsec_ key as is, a text key as raw bytes.
    const headersOf = (q: ReceivedRequest) => q.headers as Record<string, string>;
    expect(new Webhook(whsec).verify(ra!.rawBody.toString('utf8'), headersOf(ra!))).toEqual(
      JSON.parse(ra!.rawBody.toString('utf8')),
    );
    expect(
      new Webhook(Buffer.from(KEY).toString('base64')).verify(rb!.rawBody.toString('utf8'), headersOf(rb!)),
    ).toBeTruthy();
    expect(() =>
      new Webhook(Buffer.from('another-key-entirely').toString('base64')).verify(
        rb!.rawBody.toString('utf8'),
        headersOf(rb!),
      ),
    ).toThrow();
    // X-Service-Signature: sha256=<hex HMAC of the raw body with the secureKey's bytes>, checked with node:crypto.
    for (const [q, key] of [
      [ra!, whsec],
      [rb!, KEY],
    ] as const) {
      const sig = String(q.headers['x-service-signature']);
      expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(timingSafeEqual(Buffer.from(sig.slice(7), 'hex'), Buffer.from(hmacHex(key, q.rawBody), 'hex'))).toBe(true);
      expect(q.headers['x-service-delivery']).toBe(q.headers['webhook-id']);
      expect(q.headers['content-type']).toBe('application/json');
      expect(verifyWebhook(q.rawBody, q.headers, key)).toMatchObject({ ok: true });
    }
    expect(ra!.headers['x-service-delivery']).toBe(deliveryIdFor(e1.event.id, a.id));

    // Fields in the order of spec 6.3; sentOn is this attempt's time, createdOn the event's.
    const body = ra!.json();
    expect(Object.keys(body)).toEqual([
      'topic',
      'partyId',
      'hookId',
      'documentId',
      'message',
      'details',
      'createdBy',
      'createdOn',
      'sentOn',
    ]);
    expect(body).toMatchObject({
      topic: 'SignedTopic',
      partyId: t.p1.legalEntityId,
      hookId: a.id,
      documentId: 'doc-1',
      details: { sender: '0106:1' },
      createdBy: 'peppol',
      createdOn: e1.event.createdOn.toISOString(),
    });
    expect(Date.parse(String(body['sentOn']))).toBeGreaterThanOrEqual(e1.event.createdOn.getTime());
    expect(Number(ra!.headers['webhook-timestamp'])).toBe(Math.floor(Date.parse(String(body['sentOn'])) / 1000));
    expect(rb!.json()).toMatchObject({
      partyId: t.p2.legalEntityId,
      hookId: b.id,
      documentId: 'doc-2',
      refToDocumentId: 'doc-0',
    });
  });

  it('retries a receiver that fails N times: one HookSentRetry per failure, the same delivery id, a fresh sentOn each time', async () => {
    const t = await tenant();
    const r = await receiver((_q, i) => (i < 3 ? { status: i === 1 ? 502 : 500 } : { status: 200 }));
    const hook = await t.hook({ url: r.url, topic: 'FlakyTopic', secureKey: KEY });
    const p = await t.publish({ topic: 'FlakyTopic', party: null });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({
      outcome: 'delivered',
      attempts: 4,
      httpStatus: 200,
    });

    expect(r.requests).toHaveLength(4);
    expect(new Set(r.requests.map((q) => q.headers['x-service-delivery']))).toEqual(new Set([deliveryId]));
    const sentOn = r.requests.map((q) => Date.parse(String(q.json()['sentOn'])));
    for (let i = 1; i < sentOn.length; i++) expect(sentOn[i]!).toBeGreaterThan(sentOn[i - 1]!);
    for (const q of r.requests)
      expect(verifyWebhook(q.rawBody, q.headers, KEY)).toMatchObject({ ok: true, deliveryId });

    const failures = await t.failureEvents(deliveryId);
    expect(failures.map((e) => [e.topic, e.details['attempt'], e.details['httpStatus']])).toEqual([
      ['HookSentRetry', '1', '500'],
      ['HookSentRetry', '2', '502'],
      ['HookSentRetry', '3', '500'],
    ]);
    expect(failures[0]!.details).toMatchObject({
      hookId: hook.id,
      originalTopic: 'FlakyTopic',
      originalEventId: p.event.id,
      error: 'HTTP 500',
    });

    // Operators find the delivery in Temporal by hook, topic, party and attempt count (visibility is eventually consistent).
    const query = `HookId = "${hook.id}" AND EventTopic = "FlakyTopic" AND TenantId = "${t.id}" AND DeliveryAttempt = 4`;
    await eventually(
      async () => ((await client.workflow.count(query)).count === 1 ? true : undefined),
      15_000,
      'search attributes',
    );

    const log = await request(ctx.app).get(`/api/v1/events/${p.event.id}/deliveries`).auth(t.token, { type: 'bearer' });
    expect(
      (log.body as { items: { attempt: number; httpStatus: number; outcome: string }[] }).items.map((l) => [
        l.attempt,
        l.httpStatus,
        l.outcome,
      ]),
    ).toEqual([
      [1, 500, 'failed'],
      [2, 502, 'failed'],
      [3, 500, 'failed'],
      [4, 200, 'delivered'],
    ]);
  });

  it('publishes HookSentRetry from the event the run carries, without reading it back', async () => {
    const t = await tenant();
    // The stored event is removed once the first attempt has reached the receiver, before that attempt's
    // HookSentRetry: the notice still has the event's party and documents, so it came from the run, not storage.
    let removed: Promise<unknown> | undefined;
    const r = await receiver((_q, i) => {
      if (i === 0) removed = ctx.core.db.models.WebhookEvent.deleteOne({ _id: p.event.id }).exec();
      return { status: i === 0 ? 500 : 200 };
    });
    const hook = await t.hook({ url: r.url, topic: 'CarriedTopic', secureKey: KEY });
    const p = await t.publish({
      topic: 'CarriedTopic',
      party: t.p1,
      documentId: 'doc-carried',
      refToDocumentId: 'doc-before',
    });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({ outcome: 'delivered', attempts: 2 });
    await removed;
    await expect(ctx.webhooks.events.get(t.id, p.event.id)).resolves.toBeNull();
    const [retry, ...rest] = await t.failureEvents(deliveryId);
    expect(rest).toEqual([]);
    expect(retry).toMatchObject({
      topic: 'HookSentRetry',
      partyKey: t.p1.partyId,
      partyId: t.p1.legalEntityId,
      documentId: 'doc-carried',
      refToDocumentId: 'doc-before',
      details: { originalTopic: 'CarriedTopic', originalEventId: p.event.id, attempt: '1', httpStatus: '500' },
    });
  });

  it('ends with HookSentError when the schedule is exhausted, and tells other hooks, never the failing one', async () => {
    const t = await tenant();
    const failing = await receiver(() => ({ status: 503 }));
    const monitor = await receiver();
    const hook = await t.hook({ url: failing.url, topics: ['DoomedTopic', 'HookSent*'], secureKey: KEY });
    const watch = await t.hook({ url: monitor.url, topic: 'HookSent*', secureKey: KEY }, t.p1.partyId);
    const p = await t.publish({ topic: 'DoomedTopic', party: t.p1 });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({
      outcome: 'exhausted',
      attempts: 4,
      httpStatus: 503,
    });
    expect(failing.requests.filter((q) => q.json()['topic'] === 'DoomedTopic')).toHaveLength(4);

    const failures = await t.failureEvents(deliveryId);
    expect(failures.map((e) => e.topic)).toEqual(['HookSentRetry', 'HookSentRetry', 'HookSentRetry', 'HookSentError']);
    expect(failures[3]!.details).toMatchObject({ reason: 'exhausted', attempt: '4', httpStatus: '503' });
    // The monitor (party level, the event's party) receives all four; the failing hook gets none about itself.
    const got = await monitor.waitFor(4);
    expect(got.map((q) => q.json()['topic']).sort()).toEqual([
      'HookSentError',
      'HookSentRetry',
      'HookSentRetry',
      'HookSentRetry',
    ]);
    expect(
      got.every(
        (q) => (q.json()['details'] as Record<string, string>)['hookId'] === hook.id && q.json()['hookId'] === watch.id,
      ),
    ).toBe(true);
    expect(failing.requests.filter((q) => String(q.json()['topic']).startsWith('HookSent'))).toHaveLength(0);
  });

  it('switches a hook off on 410 Gone and reports HookSentError', async () => {
    const t = await tenant();
    const r = await receiver(() => ({ status: 410 }));
    const hook = await t.hook({ url: r.url, topic: 'GoneTopic', secureKey: KEY });
    const p = await t.publish({ topic: 'GoneTopic', party: null });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({ outcome: 'gone', attempts: 1 });
    const stored = await ctx.webhooks.hooks.get({ tenantId: t.id }, hook.id);
    expect(stored).toMatchObject({ isActive: false, disabledReason: 'gone' });
    expect((await t.failureEvents(deliveryId)).map((e) => [e.topic, e.details['reason']])).toEqual([
      ['HookSentError', 'gone'],
    ]);
    // Switched off: the next event is not routed to it.
    expect((await t.publish({ topic: 'GoneTopic', party: null })).event.label).toBe('dead-letter');
  });

  it('honours Retry-After within the schedule’s bounds', async () => {
    const t = await tenant();
    const r = await receiver((_q, i) =>
      i === 0
        ? { status: 503, headers: { 'Retry-After': '1' } }
        : i === 1
          ? { status: 429, headers: { 'Retry-After': '3600' } }
          : { status: 204 },
    );
    const hook = await t.hook({ url: r.url, topic: 'SlowDownTopic', secureKey: KEY });
    const p = await t.publish({ topic: 'SlowDownTopic', party: null });
    await expect(result(t.id, deliveryIdFor(p.event.id, hook.id))).resolves.toMatchObject({
      outcome: 'delivered',
      attempts: 3,
    });
    const [a, b, c] = r.requests.map((q) => q.at);
    // 1 s asked for, above the 150 ms of the schedule; 3600 s asked for, held to the 1.5 s bound.
    expect(b! - a!).toBeGreaterThanOrEqual(950);
    expect(c! - b!).toBeGreaterThanOrEqual(1400);
    expect(c! - b!).toBeLessThan(5000);
  });

  it('does not let a hung receiver delay a healthy one, and caps what is in flight to the hung one', async () => {
    const t = await tenant();
    let inFlight = 0;
    let maxInFlight = 0;
    // Never answers: every attempt ends with the hook's 1 s timeout, when the gateway drops the connection.
    const hung = await receiver((q) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      void q.closed.then(() => {
        inFlight -= 1;
      });
      return 'hang';
    });
    // What the hung hook had in flight when each healthy delivery arrived.
    const hungBusyAt: number[] = [];
    const healthy = await receiver(() => {
      hungBusyAt.push(inFlight);
      return { status: 204 };
    });
    await t.hook({ url: hung.url, topic: 'BusyTopic', secureKey: KEY, timeoutSeconds: 1 }, t.p1.partyId);
    const good = await t.hook({ url: healthy.url, topic: 'BusyTopic', secureKey: KEY }, t.p2.partyId);

    for (let i = 0; i < 8; i++) await t.publish({ topic: 'BusyTopic', party: t.p1 });
    // Let the hung hook fill its slots, then measure the healthy hook while it is stuck.
    await hung.waitFor(3);
    // At most three outstanding at a time, so the healthy hook stays within its own cap of 3 (a burst over it would
    // wait on throttle back-offs of its own): only the hung hook's effect is measured.
    const published: { at: number; deliveryId: string }[] = [];
    for (let i = 0; i < 10; i++) {
      if (i >= 3) await healthy.waitFor(i - 2);
      const at = Date.now();
      const p = await t.publish({ topic: 'BusyTopic', party: t.p2 });
      published.push({ at, deliveryId: deliveryIdFor(p.event.id, good.id) });
    }
    await healthy.waitFor(10);
    const latencies = published.map((p) => {
      const q = healthy.requests.find((x) => x.headers['x-service-delivery'] === p.deliveryId);
      return (q?.at ?? Infinity) - p.at;
    });
    // Each healthy delivery lands well within the hung hook's 1 s timeout: nothing waited behind it.
    if (Math.max(...latencies) >= 1000)
      console.log(
        JSON.stringify({
          latencies,
          hungBusyAt,
          hung: hung.requests.map((q) => q.at - published[0]!.at),
          pub: published.map((p) => p.at - published[0]!.at),
        }),
      );
    expect(Math.max(...latencies)).toBeLessThan(1000);
    // They arrived while the hung hook was holding connections (so it really was busy), and it never held more than
    // the cap of 3.
    expect(hungBusyAt.filter((n) => n > 0).length).toBeGreaterThanOrEqual(5);
    expect(maxInFlight).toBe(3);
  });

  it('narrows a hung hook to one attempt at a time while its events keep coming', async () => {
    const t = await tenant();
    const hung = await receiver(() => 'hang');
    await t.hook({ url: hung.url, topic: 'StillHungTopic', secureKey: KEY, timeoutSeconds: 1 });
    // An event every 200 ms for 5 s: attempts keep arriving after the first timeouts narrowed the cap (3) to one.
    const start = Date.now();
    for (let i = 0; i < 25; i++) {
      await t.publish({ topic: 'StillHungTopic', party: null });
      await sleep(Math.max(0, start + (i + 1) * 200 - Date.now()));
    }
    const arrived = (from: number, to: number) =>
      hung.requests.filter((q) => q.at >= start + from && q.at < start + to).length;
    // The first events fill the cap of three.
    expect(arrived(0, 2_000)).toBeGreaterThanOrEqual(3);
    // From 2 s on, one attempt per 1 s timeout (allowing one boundary): holding the three slots would give about
    // nine in these three seconds, as the waiting attempts took each freed slot.
    expect(arrived(2_000, 5_000)).toBeLessThanOrEqual(4);
    expect(arrived(2_000, 5_000)).toBeGreaterThanOrEqual(2);
  });

  it('holds deliveries of a stuck hook with no run open, keeps one trying it, and sends them all as soon as it answers again', async () => {
    const t = await tenant();
    let hang = true;
    const r = await receiver(() => (hang ? 'hang' : { status: 204 }));
    const hook = await t.hook({ url: r.url, topic: 'StuckTopic', secureKey: KEY, timeoutSeconds: 1 });
    // An event every 250 ms for 9 s: the first ones time out (1 s) and narrow the cap to one slot; after 5 s without
    // an answer the hook is stuck, and what comes then is held (for minutes) instead of polling.
    const deliveries: string[] = [];
    const start = Date.now();
    for (let i = 0; i < 36; i++) {
      const p = await t.publish({ topic: 'StuckTopic', party: null });
      deliveries.push(deliveryIdFor(p.event.id, hook.id));
      await sleep(Math.max(0, start + (i + 1) * 250 - Date.now()));
    }
    // No more events, and the receiver hangs 6 s longer: by then the deliveries tried first have used their four
    // attempts, so what tries the hook now is a held one, released by each timeout to take the freed slot.
    await sleep(6_000);
    const triedWhileQuiet = new Set(
      r.requests.filter((q) => q.at >= start + 10_000).map((q) => String(q.headers['x-service-delivery'])),
    );
    // Waiting on the stuck hook, the deliveries are held in the database and their runs have ended: no run stays open
    // per waiting delivery (only those in an attempt or a retry's wait).
    const statuses = await Promise.all(
      deliveries.map((d) =>
        client.workflow
          .getHandle(deliverWebhookWorkflowId(t.id, d))
          .describe()
          .then((x) => x.status.name),
      ),
    );
    const heldNow = await new HeldDeliveryRepository(ctx.core.db.models).listForHook(hook.id);
    expect(heldNow.length).toBeGreaterThanOrEqual(10);
    expect(statuses.filter((x) => x === 'RUNNING').length).toBeLessThanOrEqual(6);
    // The attempt that found the hook stuck held the delivery itself: the runs that held them scheduled no hold step
    // of their own, and one held at its first try scheduled that one activity, as a delivery sent at once does.
    const heldRuns = await Promise.all(
      heldNow.map(async (h) => {
        const history = await client.workflow.getHandle(h._id, h.heldByRunId).fetchHistory();
        return (history.events ?? []).flatMap((e) =>
          e.activityTaskScheduledEventAttributes
            ? [String(e.activityTaskScheduledEventAttributes.activityType?.name)]
            : [],
        );
      }),
    );
    expect(heldRuns.filter((names) => names.includes('holdDelivery'))).toEqual([]);
    expect(heldRuns.filter((names) => names.join() === 'attemptDelivery').length).toBeGreaterThanOrEqual(1);
    hang = false;
    const recoveredAt = Date.now();

    const outcomes = await resultsWithin(t.id, deliveries, 60_000);
    const endedWithin = Date.now() - recoveredAt;
    const reachedBefore = new Set(
      r.requests.filter((q) => q.at < recoveredAt).map((q) => String(q.headers['x-service-delivery'])),
    );
    const neverTried = deliveries.map((d, i) => ({ d, o: outcomes[i]! })).filter((x) => !reachedBefore.has(x.d));
    expect(triedWhileQuiet.size).toBeGreaterThanOrEqual(2);
    // Deliveries that had not reached the receiver while it hung, every one delivered after it recovered, well before
    // the minutes a held delivery's due time would take (the old polling: 15–30 s).
    expect(neverTried.length).toBeGreaterThanOrEqual(10);
    expect(neverTried.map((x) => x.o.outcome)).toEqual(neverTried.map(() => 'delivered'));
    expect(endedWithin).toBeLessThan(12_000);
    // While it hung, the receiver saw about one attempt per timeout, not one per event or per poll.
    expect(reachedBefore.size).toBeLessThan(25);
  });

  /**
   * A release as a worker's: HeldDeliveries of its own, starting next runs on `queue`. `models`: its database
   * connection (the test context's unless given).
   */
  function releaser(queue = taskQueue, models: Models = ctx.core.db.models) {
    const starter = new TemporalDeliveryStarter(() => client, { taskQueue: queue, searchAttributes: true });
    const restart = (input: DeliverWebhookInput, meta: { topic: string; partyKey: string }, startDelayMs: number) =>
      starter.startDelivery(input, meta, 'redeliver', { startDelayMs });
    const held = new HeldDeliveries(
      new HeldDeliveryRepository(models),
      restart,
      temporalDeliveryRuns(() => client),
    );
    return { held };
  }

  /**
   * A delivery held as a run on a stuck hook holds it: of an event no run was started for (a topic no hook has), with
   * `attempts` made, due in `dueInMs`; the holder named is not the latest run under the id (there is none).
   */
  async function holdOne(
    t: Awaited<ReturnType<typeof tenant>>,
    held: HeldDeliveries,
    hookId: string,
    dueInMs: number,
    attempts: number,
  ) {
    const p = await t.publish({ topic: 'NotRoutedTopic', party: null });
    const deliveryId = deliveryIdFor(p.event.id, hookId);
    const workflowId = deliverWebhookWorkflowId(t.id, deliveryId);
    const input: DeliverWebhookInput = {
      tenantId: t.id,
      eventId: p.event.id,
      hookId,
      deliveryId,
      schedule: SCHEDULE as DeliverWebhookInput['schedule'],
      maxAttemptTimeoutMs: 3000,
      event: toGatewayEvent(p.event),
      eventPartyKey: null,
      resume: { attempts, startedAtMs: Date.now() - 1000, throttled: 3 },
    };
    await held.hold({ workflowId, runId: 'run-that-held', input, dueInMs });
    return { deliveryId, workflowId, input };
  }

  it('releases held deliveries that fall due: the next run starts from the stored input and the record goes', async () => {
    const t = await tenant();
    const r = await receiver();
    // The one held for later on a hook of its own: an answer of a hook releases what is held for it.
    const hook = await t.hook({ url: r.url, topic: 'HeldTopic', secureKey: KEY });
    const laterHook = await t.hook({ url: r.url, topic: 'HeldLaterTopic', secureKey: KEY });
    const repo = new HeldDeliveryRepository(ctx.core.db.models);
    const { held } = releaser();
    const due = await holdOne(t, held, hook.id, 0, 2);
    const later = await holdOne(t, held, laterHook.id, 60 * 60_000, 0);
    expect((await repo.listForHook(hook.id)).map((d) => d._id)).toEqual([due.workflowId]);
    expect((await repo.listForHook(laterHook.id)).map((d) => d._id)).toEqual([later.workflowId]);
    await expect(held.releaseDue()).resolves.toBeGreaterThanOrEqual(1);
    // The due one is delivered as its third attempt, under its delivery id; the other stays held, untouched.
    await expect(result(t.id, due.deliveryId)).resolves.toMatchObject({ outcome: 'delivered', attempts: 3 });
    const got = r.requests.filter((q) => q.headers['x-service-delivery'] === due.deliveryId);
    expect(got).toHaveLength(1);
    expect(got[0]!.json()).toMatchObject({ topic: 'NotRoutedTopic', hookId: hook.id });
    expect(await repo.listForHook(hook.id)).toEqual([]);
    expect((await repo.listForHook(laterHook.id)).map((d) => d._id)).toEqual([later.workflowId]);
    expect(r.requests.some((q) => q.headers['x-service-delivery'] === later.deliveryId)).toBe(false);

    // While a claim lasts no other release takes the record (by id, or on the hook's answer), and a later
    // run cannot hold over it; once its holder removed it, the later run holds, and that removal leaves the new record.
    const claimed = await repo.claim(later.workflowId, new Date(), 60_000);
    expect(claimed).not.toBeNull();
    await expect(repo.claim(later.workflowId, new Date(), 60_000)).resolves.toBeNull();
    await expect(repo.unclaimedIdsForHook(laterHook.id, new Date(), 10)).resolves.toEqual([]);
    await expect(repo.hookIdsWithHeld()).resolves.toContain(laterHook.id);
    const nextRun = { workflowId: later.workflowId, runId: 'run-after', input: later.input, dueInMs: 60 * 60_000 };
    await expect(held.tryHold(nextRun)).resolves.toBeUndefined();
    await repo.remove(claimed!);
    const seq = await held.hold(nextRun);
    await repo.remove(claimed!);
    expect((await repo.listForHook(laterHook.id)).map((d) => [d._id, d.seq])).toEqual([[later.workflowId, seq]]);
    await expect(repo.unclaimedIdsForHook(laterHook.id, new Date(), 10)).resolves.toEqual([later.workflowId]);
    // Released by the hook's answer, it starts within the spread and is delivered.
    await expect(held.releaseHook(laterHook.id, () => undefined)).resolves.toBe(1);
    await expect(result(t.id, later.deliveryId)).resolves.toMatchObject({ outcome: 'delivered', attempts: 1 });
    expect(await repo.listForHook(laterHook.id)).toHaveLength(0);
    // A record left behind after its delivery ran again (a removal that failed, a redelivery) is dropped when it falls
    // due, not sent a second time.
    // (the run named as holder is not the latest under the id: the release that delivered it started a later one)
    await held.hold({ workflowId: due.workflowId, runId: 'run-that-held', input: due.input, dueInMs: 0 });
    const sentBefore = r.requests.length;
    await expect(held.releaseDue()).resolves.toBe(0);
    expect(await repo.listForHook(hook.id)).toHaveLength(0);
    expect(r.requests.length).toBe(sentBefore);
  });

  it('sends a held delivery once when releases on two connections race (timeouts, answers, sweeps)', async () => {
    const t = await tenant();
    const r = await receiver();
    const hook = await t.hook({ url: r.url, topic: 'RacedTopic', secureKey: KEY });
    // A second connection, as a second worker has.
    const other = await connectDatabase(ctx.config.mongo.uri);
    try {
      const sides = [releaser(), releaser(taskQueue, other.models)];
      const ROUNDS = 10;
      const held: Array<{ deliveryId: string; workflowId: string }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const h = await holdOne(t, sides[round % 2]!.held, hook.id, 0, 1);
        held.push(h);
        await Promise.all(
          Array.from({ length: 8 }, (_, i) => {
            const w = sides[i % 2]!.held;
            if (i % 4 === 0) return w.releaseDue();
            if (i % 4 === 1) return w.releaseHook(hook.id, () => undefined);
            return w.releaseNewest(hook.id, () => undefined);
          }),
        );
        await expect(result(t.id, h.deliveryId)).resolves.toMatchObject({ outcome: 'delivered', attempts: 2 });
      }
      // Each held delivery reached the receiver once, by one run: the one release that won its claim started it.
      const sent = r.requests.map((q) => String(q.headers['x-service-delivery']));
      expect(sent.sort()).toEqual(held.map((h) => h.deliveryId).sort());
      const runs = await Promise.all(
        held.map(async (h) => {
          let n = 0;
          for await (const _ of client.workflow.list({ query: `WorkflowId = '${h.workflowId}'` })) n += 1;
          return n;
        }),
      );
      expect(runs).toEqual(held.map(() => 1));
      expect(await new HeldDeliveryRepository(ctx.core.db.models).listForHook(hook.id)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("releases on a hook's answer the deliveries held for it through another worker, which a worker learns of from its sweep", async () => {
    // A worker of its own (a 1 s sweep, a queue of its own) that has held none of these deliveries.
    const queue = `webhooks-sweep-${randomUUID()}`;
    const config = loadConfig({
      ...envOf(ctx.config),
      TEMPORAL_TASK_QUEUE: queue,
      WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOK_HELD_SWEEP_SECONDS: '1',
    });
    const other = await startWorker(config, { workflowBundle });
    try {
      const routes = composeWebhookRoutes(
        config,
        ctx.core.db.models,
        new TemporalDeliveryStarter(() => client, { taskQueue: queue, searchAttributes: true }),
      );
      const t = await tenant();
      const r = await receiver();
      const hook = await t.hook({ url: r.url, topic: 'AnsweredTopic', secureKey: KEY });
      const repo = new HeldDeliveryRepository(ctx.core.db.models);
      const { held } = releaser(queue);
      const waiting = await Promise.all([0, 1, 2].map(() => holdOne(t, held, hook.id, 60 * 60_000, 1)));
      // Its sweep reads which hooks have deliveries held: give it two.
      await sleep(2_500);
      expect(r.requests).toHaveLength(0);
      // A new event to the hook, answered: the answer releases the three, an hour before they fall due.
      const p = await routes.publisher.publishEvent({
        tenantId: t.id,
        createdBy: 'peppol',
        message: 'test event',
        topic: 'AnsweredTopic',
        party: null,
      });
      const fresh = deliveryIdFor(p.event.id, hook.id);
      await expect(result(t.id, fresh)).resolves.toMatchObject({ outcome: 'delivered' });
      await eventually(
        async () => ((await repo.listForHook(hook.id)).length === 0 ? true : undefined),
        15_000,
        'the held deliveries released',
      );
      const outcomes = await Promise.all(waiting.map((w) => result(t.id, w.deliveryId)));
      expect(outcomes.map((o) => [o.outcome, o.attempts])).toEqual(waiting.map(() => ['delivered', 2]));
      const sent = r.requests.map((q) => String(q.headers['x-service-delivery'])).sort();
      expect(sent).toEqual([fresh, ...waiting.map((w) => w.deliveryId)].sort());
    } finally {
      await other.stop();
    }
  });

  it('selects hooks by priority: party over environment, exact over wildcard, then hook id; one per channel', async () => {
    const t = await tenant();
    const r = await receiver();
    const envExact = await t.hook({ url: `${r.url}/env-exact`, topic: 'PrioTopic', secureKey: KEY });
    const partyWild = await t.hook({ url: `${r.url}/party-wild`, topic: 'Prio*', secureKey: KEY }, t.p1.partyId);
    const partyExact = await t.hook(
      { url: `${r.url}/party-exact`, topics: ['Other', 'PrioTopic'], secureKey: KEY },
      t.p1.partyId,
    );
    const mail = await t.hook({ action: 'mailto', url: 'mailto:ap@example.com', topic: 'Prio*' });

    // p1: party level, exact → partyExact; the mailto channel gets its own (unsupported) route.
    const a = await t.publish({ topic: 'PrioTopic', party: t.p1 });
    expect(a.deliveries.map((d) => [d.hookId, d.status])).toEqual([
      [partyExact.id, 'started'],
      [mail.id, 'unsupported'],
    ]);
    // p1, a topic only the party wildcard matches: party wildcard beats nothing else.
    const b = await t.publish({ topic: 'PrioOther', party: t.p1 });
    expect(b.deliveries.map((d) => d.hookId)).toEqual([partyWild.id, mail.id]);
    // p2: no party hooks → environment exact.
    const c = await t.publish({ topic: 'PrioTopic', party: t.p2 });
    expect(c.deliveries.map((d) => d.hookId)).toEqual([envExact.id, mail.id]);
    // A tie (two environment wildcards) goes to the smaller hook id.
    const w1 = await t.hook({ url: `${r.url}/tie`, topic: 'Tie*', secureKey: KEY });
    const w2 = await t.hook({ url: `${r.url}/tie`, topic: '*Topic', secureKey: KEY });
    const d = await t.publish({ topic: 'TieTopic', party: null });
    expect(d.deliveries.map((x) => x.hookId)).toEqual([[w1.id, w2.id].sort()[0]]);

    await r.waitFor(4);
    const byPath = (path: string) => r.requests.filter((q) => q.url === path).map((q) => q.json()['topic']);
    await eventually(() => (byPath('/env-exact').length === 1 ? true : undefined), 10_000, 'environment delivery');
    expect(byPath('/party-exact')).toEqual(['PrioTopic']);
    expect(byPath('/party-wild')).toEqual(['PrioOther']);
    expect(byPath('/env-exact')).toEqual(['PrioTopic']);
  });

  it('matches wildcards Send*, *Received, Invoice* and Send*Fallback', async () => {
    const t = await tenant();
    const r = await receiver();
    const send = await t.hook({ url: `${r.url}/send`, topic: 'Send*', secureKey: KEY }, t.p1.partyId);
    const received = await t.hook({ url: `${r.url}/received`, topic: '*Received', secureKey: KEY }, t.p1.partyId);
    const invoice = await t.hook({ url: `${r.url}/invoice`, topic: 'Invoice*', secureKey: KEY }, t.p1.partyId);
    const fallback = await t.hook({ url: `${r.url}/fallback`, topic: 'Send*Fallback', secureKey: KEY }, t.p1.partyId);
    const route = async (topic: string, details?: Record<string, string>) =>
      (await t.publish({ topic, party: t.p1, ...(details ? { details } : {}) })).deliveries.map((d) => d.hookId);
    expect(await route('SendAlpha')).toEqual([send.id]);
    const order = { id: 'o-1', sender: '0106:1', createdBy: 'peppol', documentTypeId: 'urn:order', orderId: 'PO-1' };
    expect(await route('OrderReceived', order)).toEqual([received.id]);
    expect(await route('InvoiceReceivedError')).toEqual([invoice.id]);
    // Two wildcards match: equal rank, the smaller hook id wins.
    expect(await route('SendInvoiceFallback')).toEqual([[send.id, fallback.id].sort()[0]]);
    expect(await route('Unrelated')).toEqual([]);
    await r.waitFor(4);
  });

  it('applies filters, including a hostile regex, without delay and falling back to the next hook', async () => {
    const t = await tenant();
    const r = await receiver();
    const byFilter = await t.hook(
      {
        url: `${r.url}/filtered`,
        topic: 'FilterTopic',
        secureKey: KEY,
        filter: 'sender == "0106:777" && verdict.StartsWith("OK") || recipient.Contains("vip")',
      },
      t.p1.partyId,
    );
    const redos = await t.hook(
      { url: `${r.url}/redos`, topic: 'FilterTopic', secureKey: KEY, filter: 'sender.IsMatch("^(a+)+$")' },
      t.p2.partyId,
    );
    const fallbackHook = await t.hook({ url: `${r.url}/env`, topic: 'FilterTopic', secureKey: KEY });

    const route = async (party: typeof t.p1, details: Record<string, string>) =>
      (await t.publish({ topic: 'FilterTopic', party, details })).deliveries.map((d) => d.hookId);
    expect(await route(t.p1, { sender: '0106:777', verdict: 'OK, fine' })).toEqual([byFilter.id]);
    expect(await route(t.p1, { sender: '0106:777', verdict: 'NOT OK' })).toEqual([fallbackHook.id]);
    expect(await route(t.p1, { recipient: 'the-vip-desk' })).toEqual([byFilter.id]);
    // An unknown variable is false, not an error.
    expect(await route(t.p1, {})).toEqual([fallbackHook.id]);

    // Catastrophic backtracking input for a backtracking engine; RE2 answers in linear time.
    const hostile = `${'a'.repeat(5000)}!`;
    const started = performance.now();
    expect(await route(t.p2, { sender: hostile })).toEqual([fallbackHook.id]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await route(t.p2, { sender: 'aaaa' })).toEqual([redos.id]);
    await r.waitFor(6);
  });

  it('publishes an output rule’s topic (Send*Fallback) instead of retrying, to another hook', async () => {
    const t = await tenant();
    const primary = await receiver(() => ({ status: 500 }));
    const mailDesk = await receiver();
    const hook = await t.hook(
      {
        url: primary.url,
        topic: 'Invoice',
        secureKey: KEY,
        output: [
          { when: '404', topic: 'Other' },
          { when: '5xx', topic: 'Send*Fallback' },
        ],
      },
      undefined,
      true,
    );
    const fb = await t.hook({ url: mailDesk.url, topic: 'Send*Fallback', secureKey: KEY });
    const p = await t.publish({ topic: 'Invoice', party: t.p1, documentId: 'inv-42', message: 'an invoice' });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({
      outcome: 'handed-off',
      attempts: 1,
      httpStatus: 500,
      publishedTopic: 'SendInvoiceFallback',
    });
    const [got] = await mailDesk.waitFor(1);
    expect(got!.json()).toMatchObject({
      topic: 'SendInvoiceFallback',
      hookId: fb.id,
      partyId: t.p1.legalEntityId,
      documentId: 'inv-42',
      details: { originalTopic: 'Invoice', originalEventId: p.event.id, outputOfHookId: hook.id, httpStatus: '500' },
    });
    expect(primary.requests).toHaveLength(1);
    expect(await t.failureEvents(deliveryId)).toEqual([]);
  });

  it('labels dropped and dead-letter events and sends them nowhere', async () => {
    const t = await tenant();
    const r = await receiver();
    await t.hook({ action: 'drop', topic: 'NoiseTopic' });
    await t.hook({ url: r.url, topic: 'WantedTopic', secureKey: KEY });
    const dropped = await t.publish({ topic: 'NoiseTopic', party: t.p1 });
    const dead = await t.publish({ topic: 'NobodyTopic', party: t.p1 });
    const wanted = await t.publish({ topic: 'WantedTopic', party: t.p1 });
    expect([dropped.event.label, dead.event.label, wanted.event.label]).toEqual(['dropped', 'dead-letter', 'routed']);
    await r.waitFor(1);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.requests.map((q) => q.json()['topic'])).toEqual(['WantedTopic']);
    const page = await request(ctx.app).get('/api/v1/events').auth(t.token, { type: 'bearer' });
    const labels = (page.body as { items: { topic: string; label: string }[] }).items.map((e) => [e.topic, e.label]);
    expect(labels).toEqual([
      ['NoiseTopic', 'dropped'],
      ['NobodyTopic', 'dead-letter'],
      ['WantedTopic', 'routed'],
    ]);
  });

  it('puts events for httpsin hooks in the inbox, where they are read and acknowledged with the hook credentials', async () => {
    const t = await tenant();
    const hook = await t.hook(
      { url: 'httpsin://inbox-user:s3cret@inbound?token=$token$', topic: 'InboundTopic' },
      t.p1.partyId,
    );
    const basic = { user: 'inbox-user', pass: 's3cret' };
    const p = await t.publish({ topic: 'InboundTopic', party: t.p1, documentId: 'doc-in-1' });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await expect(result(t.id, deliveryId)).resolves.toMatchObject({ outcome: 'delivered', attempts: 1 });

    const list = await request(ctx.app).get(`/api/v1/inbox/${hook.id}`).auth(basic.user, basic.pass);
    expect(list.status).toBe(200);
    const items = (list.body as { items: { token: string; deliveryId: string; event: Record<string, unknown> }[] })
      .items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      deliveryId,
      event: { topic: 'InboundTopic', hookId: hook.id, documentId: 'doc-in-1', partyId: t.p1.legalEntityId },
    });
    const token = items[0]!.token;
    const one = await request(ctx.app).get(`/api/v1/inbox/${hook.id}/${token}`).auth(basic.user, basic.pass);
    expect(one.body).toMatchObject({ deliveryId, acknowledgedOn: null });
    const ack = await request(ctx.app).post(`/api/v1/inbox/${hook.id}/${token}/ack`).auth(basic.user, basic.pass);
    expect(ack.status).toBe(200);
    const after = await request(ctx.app).get(`/api/v1/inbox/${hook.id}`).auth(basic.user, basic.pass);
    expect(after.body).toEqual({ items: [], nextCursor: null });

    // The delivery log has the attempt; a redelivery finds the acknowledged entry and adds nothing.
    const log = await request(ctx.app).get(`/api/v1/events/${p.event.id}/deliveries`).auth(t.token, { type: 'bearer' });
    expect((log.body as { items: unknown[] }).items).toEqual([
      expect.objectContaining({
        hookId: hook.id,
        attempt: 1,
        outcome: 'delivered',
        url: 'httpsin://inbound?token=***',
      }),
    ]);
    const again = await request(ctx.app)
      .post(`/api/v1/events/${p.event.id}/redeliver?hookId=${hook.id}`)
      .auth(t.token, { type: 'bearer' });
    expect(again.status).toBe(202);
    await eventually(
      async () => {
        const lines = await request(ctx.app)
          .get(`/api/v1/events/${p.event.id}/deliveries`)
          .auth(t.token, { type: 'bearer' });
        return (lines.body as { items: unknown[] }).items.length === 2;
      },
      30_000,
      'the redelivery attempt in the delivery log',
    );
    const still = await request(ctx.app).get(`/api/v1/inbox/${hook.id}`).auth(basic.user, basic.pass);
    expect(still.body).toEqual({ items: [], nextCursor: null });
    // The API never shows the password.
    const shown = await request(ctx.app).get(`/api/v1/hook/${hook.id}`).auth(t.token, { type: 'bearer' });
    expect(shown.text).not.toContain('s3cret');
  });

  it('pings through the API and redelivers a delivered event with the same delivery id', async () => {
    const t = await tenant();
    const r = await receiver();
    const hook = await t.hook({ url: r.url, topic: 'RedoTopic', secureKey: KEY, isActive: false });
    const ping = await request(ctx.app).post(`/api/v1/hook/${hook.id}/ping`).auth(t.token, { type: 'bearer' });
    expect(ping.status).toBe(202);
    const [pinged] = await r.waitFor(1);
    expect(pinged!.json()).toMatchObject({ topic: 'Ping', hookId: hook.id, details: { hookId: hook.id } });

    await request(ctx.app)
      .put(`/api/v1/hook/${hook.id}`)
      .auth(t.token, { type: 'bearer' })
      .send({ url: r.url, topic: 'RedoTopic' })
      .expect(200);
    const p = await t.publish({ topic: 'RedoTopic', party: null });
    const deliveryId = deliveryIdFor(p.event.id, hook.id);
    await result(t.id, deliveryId);
    const again = await request(ctx.app)
      .post(`/api/v1/events/${p.event.id}/redeliver?hookId=${hook.id}`)
      .auth(t.token, { type: 'bearer' });
    expect(again.status).toBe(202);
    await r.waitFor(3);
    const deliveries = r.requests.filter((q) => q.headers['x-service-delivery'] === deliveryId);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[1]!.json()['sentOn']).not.toBe(deliveries[0]!.json()['sentOn']);
  });

  it('refuses forbidden addresses at delivery time in every spelling: nothing reaches the receiver, HookSentError', async () => {
    // A worker with the production default (no allow-list) on its own task queue; the hooks are written straight to
    // storage, as if they had been registered while an operator allowed loopback.
    const strictQueue = `webhooks-strict-${randomUUID()}`;
    const strictConfig = loadConfig({
      ...envOf(ctx.config),
      TEMPORAL_TASK_QUEUE: strictQueue,
      WEBHOOK_ALLOWED_RANGES: '',
    });
    extraWorkers.push(await startWorker(strictConfig, { workflowBundle }));
    const strict = composeWebhookRoutes(
      strictConfig,
      ctx.core.db.models,
      new TemporalDeliveryStarter(() => client, { taskQueue: strictQueue, searchAttributes: true }),
    );
    const t = await tenant();
    const r = await receiver();
    const spellings = ['127.0.0.1', '127.1', '2130706433', '0x7f.0.0.1', '[::ffff:127.0.0.1]', 'localhost'];
    const runs = await Promise.all(
      spellings.map(async (host, i) => {
        const hook = await strict.hooks.create({
          id: `ssrf-${i}-${randomUUID()}`,
          tenantId: t.id,
          partyId: null,
          secureKey: KEY,
          action: 'https',
          name: host,
          url: `http://${host}:${r.port}/`,
          topic: `SsrfTopic${i}`,
          topics: [],
          filter: null,
          output: [],
          mlsType: null,
          isActive: true,
          timeoutMs: null,
        });
        const p = await strict.publisher.publishEvent({
          tenantId: t.id,
          topic: `SsrfTopic${i}`,
          party: null,
          message: 'x',
          createdBy: 'test',
        });
        const deliveryId = deliveryIdFor(p.event.id, hook.id);
        return { host, deliveryId, outcome: await result(t.id, deliveryId) };
      }),
    );
    for (const run of runs) {
      expect([run.host, run.outcome.outcome, run.outcome.reason]).toEqual([
        run.host,
        'exhausted',
        expect.stringMatching(/^refused: /),
      ]);
      const failures = await t.failureEvents(run.deliveryId);
      expect(failures.at(-1)).toMatchObject({
        topic: 'HookSentError',
        details: { reason: 'exhausted', httpStatus: '' },
      });
    }
    expect(r.requests).toHaveLength(0);
  });
});

/** The environment a config was loaded from, for a variant of it (only the keys these tests set). */
function envOf(config: ReturnType<typeof loadConfig>): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MONGODB_URI: config.mongo.uri,
    TEMPORAL_ADDRESS: config.temporal.address,
    WORKER_METRICS_ADDRESS: '',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_RETRY_SCHEDULE: JSON.stringify(SCHEDULE),
    WEBHOOK_TIMEOUT_MS: String(config.webhooks.timeoutMs),
  };
}
