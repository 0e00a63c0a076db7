import request from 'supertest';
import { selectHooks } from '../../src/core/topics';
import {
  createWebhookTestContext,
  RecordingDeliveryStarter,
  type WebhookTestContext,
} from '../support/webhook-harness';

/*
 * Spec 6.10: the original service can lose every active hook for a moment when a hook is deleted and created again.
 * Here an update is one atomic write, so readers routing events during a storm of concurrent updates always find the
 * hook. The same reader is shown to notice the gap that delete + create leaves, so the check can fail.
 */

const PARTY = '0106:60000001';
const KEY = 'a-secure-key-of-enough-length';
const TOPIC = 'InvoiceReceived';

describe('hook updates under concurrency', () => {
  let ctx: WebhookTestContext;
  let token: string;
  const starter = new RecordingDeliveryStarter();

  beforeAll(async () => {
    ctx = await createWebhookTestContext('hookupdates', {
      starter,
      env: { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOWED_RANGES: '' },
    });
    await ctx.core.directory.createTenant({ id: 'tu', name: 'U' });
    await ctx.core.directory.createParty({ tenantId: 'tu', partyId: PARTY, legalEntityId: `NL:${PARTY}`, name: 'P' });
    token = await ctx.token(await ctx.createClient(['tu']));
  });
  afterAll(async () => ctx.close());

  /** Routes TOPIC for the party as fast as it can until stopped; counts the reads that found no hook. */
  function startReader() {
    let stop = false;
    let reads = 0;
    let empty = 0;
    const done = (async () => {
      while (!stop) {
        const hooks = await ctx.webhooks.hooks.listForRouting('tu', PARTY);
        const { label } = selectHooks({ topic: TOPIC }, hooks);
        reads += 1;
        if (label !== 'routed') empty += 1;
      }
    })();
    return {
      async finish() {
        stop = true;
        await done;
        return { reads, empty };
      },
    };
  }

  it('never leaves a moment without an active hook while 60 updates race', async () => {
    const created = await request(ctx.app)
      .post(`/api/v1/${PARTY}/hook`)
      .auth(token, { type: 'bearer' })
      .send({ url: 'https://r.example/0', topic: TOPIC, secureKey: KEY });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;

    const reader = startReader();
    // Published events during the storm must all be routed to the hook, none dead-lettered.
    const publishing = (async () => {
      const labels: string[] = [];
      for (let i = 0; i < 40; i++) {
        const p = await ctx.webhooks.publisher.publishEvent({
          tenantId: 'tu',
          topic: TOPIC,
          party: { partyId: PARTY, legalEntityId: `NL:${PARTY}` },
          message: 'x',
          createdBy: 'peppol',
          details: { id: `${i}`, sender: 's', createdBy: 'peppol', documentTypeId: 'd' },
        });
        labels.push(p.event.label);
      }
      return labels;
    })();
    const updates = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        request(ctx.app)
          .put(`/api/v1/${PARTY}/hook/${id}`)
          .auth(token, { type: 'bearer' })
          .send({
            url: `https://r.example/${i}`,
            topics: i % 2 ? [TOPIC, 'OrderReceived'] : [TOPIC],
            name: `rev ${i}`,
            ...(i % 3 === 0 ? { secureKey: `${KEY}-${i}` } : {}),
          }),
      ),
    );
    const labels = await publishing;
    const { reads, empty } = await reader.finish();

    expect(updates.map((u) => u.status)).toEqual(Array(60).fill(200));
    expect(reads).toBeGreaterThan(20);
    expect(empty).toBe(0);
    expect(labels).toEqual(Array(40).fill('routed'));
    // The stored hook is one whole update, never a mix of two (url and name come from the same request).
    const stored = await ctx.webhooks.hooks.get({ tenantId: 'tu' }, id);
    expect(stored?.isActive).toBe(true);
    const n = Number(stored?.name.replace('rev ', ''));
    expect(stored?.url).toBe(`https://r.example/${n}`);
    expect(stored?.topics).toEqual(n % 2 ? [TOPIC, 'OrderReceived'] : [TOPIC]);
    // rev counts updates exactly on MongoDB; FerretDB 1.24 applies concurrent updates as read-modify-write and
    // loses some increments, so only its bounds are certain here.
    expect(stored?.rev).toBeGreaterThanOrEqual(1);
    expect(stored?.rev).toBeLessThanOrEqual(60);
    await request(ctx.app).delete(`/api/v1/hook/${id}`).auth(token, { type: 'bearer' }).expect(204);
  });

  it('(control) the same reader does see the gap that delete + create leaves', async () => {
    const reader = startReader();
    let id = '';
    for (let i = 0; i < 15; i++) {
      if (id) await request(ctx.app).delete(`/api/v1/hook/${id}`).auth(token, { type: 'bearer' }).expect(204);
      // Make the gap at least as long as one read, as it is in any real client between two HTTP calls.
      await new Promise((r) => setTimeout(r, 20));
      const res = await request(ctx.app)
        .post(`/api/v1/${PARTY}/hook`)
        .auth(token, { type: 'bearer' })
        .send({ url: 'https://r.example/c', topic: TOPIC, secureKey: KEY });
      id = (res.body as { id: string }).id;
    }
    const { empty } = await reader.finish();
    expect(empty).toBeGreaterThan(0);
  });
});
