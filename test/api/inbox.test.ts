import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { InboxRepository, type InboxEntryDoc } from '../../src/storage/events/inbox.repository';
import { Dispatch } from '../../src/webhooks/dispatch';
import type { WebhookSender } from '../../src/webhooks/http-sender';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { expectContract } from '../support/contract';
import {
  createWebhookTestContext,
  RecordingDeliveryStarter,
  type WebhookTestContext,
} from '../support/webhook-harness';

const PA1 = '0106:51000001';
const PA2 = '0106:51000002';
const PB = '0106:52000001';
const INBOX = '/api/v1/inbox/:hookId';
const ENTRY = '/api/v1/inbox/:hookId/:token';
const DOCUMENT = '/api/v1/inbox/:hookId/:token/document';
const ACK = '/api/v1/inbox/:hookId/:token/ack';

interface Item {
  token: string;
  eventId: string;
  deliveryId: string;
  addedOn: string;
  acknowledgedOn: string | null;
  event: Record<string, unknown>;
  links: { self: string; document: string | null; ack: string };
}
interface Page {
  items: Item[];
  nextCursor: string | null;
}
interface Creds {
  user: string;
  pass: string;
}

describe('httpsin inbox API', () => {
  let ctx: WebhookTestContext;
  const starter = new RecordingDeliveryStarter();
  let dispatch: Dispatch;
  let tokenA: string;
  let tokenB: string;
  /** Each test's requests come from an address of their own, so refusals in one never use up another's budget. */
  let from = '';

  beforeAll(async () => {
    ctx = await createWebhookTestContext('inboxapi', {
      starter,
      env: { RATE_LIMIT_TOKEN_SOURCE_FAILURES_PER_MINUTE: '30' },
    });
    const dir = ctx.core.directory;
    await dir.createTenant({ id: 'tenantA', name: 'A' });
    await dir.createTenant({ id: 'tenantB', name: 'B' });
    await dir.createParty({ tenantId: 'tenantA', partyId: PA1, legalEntityId: `NL:${PA1}`, name: 'A1' });
    await dir.createParty({ tenantId: 'tenantA', partyId: PA2, legalEntityId: `NL:${PA2}`, name: 'A2' });
    await dir.createParty({ tenantId: 'tenantB', partyId: PB, legalEntityId: `BE:${PB}`, name: 'B' });
    tokenA = await ctx.token(await ctx.createClient(['tenantA']));
    tokenB = await ctx.token(await ctx.createClient(['tenantB']));
    // The worker's dispatch on the same database: an httpsin attempt is the inbox insert.
    dispatch = new Dispatch({
      hooks: ctx.webhooks.hooks,
      deliveryLog: ctx.webhooks.deliveryLog,
      sender: {} as WebhookSender,
      maxTimeoutMs: 10_000,
      inbox: ctx.webhooks.inbox,
    });
  });
  afterAll(async () => ctx.close());
  let address = 0;
  beforeEach(() => {
    from = `198.51.100.${++address}`;
  });

  const get = (path: string, c?: Creds) => {
    const r = request(ctx.app).get(path).set('X-Forwarded-For', from);
    return c ? r.auth(c.user, c.pass) : r;
  };
  const post = (path: string, c?: Creds) => {
    const r = request(ctx.app).post(path).set('X-Forwarded-For', from);
    return c ? r.auth(c.user, c.pass) : r;
  };

  /** An httpsin hook registered through the API (party level when `party` is given) and its credentials. */
  async function inboxHook(token: string, party?: string, topic = 'InvoiceReceived') {
    const creds = { user: `u-${randomUUID().slice(0, 8)}`, pass: `p!${randomUUID()}` };
    const res = await request(ctx.app)
      .post(party ? `/api/v1/${party}/hook` : '/api/v1/hook')
      .auth(token, { type: 'bearer' })
      .send({ url: `httpsin://${creds.user}:${encodeURIComponent(creds.pass)}@inbound?token=$token$`, topic });
    if (res.status !== 201) throw new Error(`hook: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: (res.body as { id: string }).id, creds };
  }

  /** Publishes an event and runs each delivery it started as the worker would. */
  async function deliver(tenantId: string, party: { partyId: string; legalEntityId: string } | null, extra = {}) {
    const before = starter.starts.length;
    const { event } = await ctx.webhooks.publisher.publishEvent({
      tenantId,
      topic: 'InvoiceReceived',
      party,
      message: 'received',
      details: { id: 'INV-1', sender: '0106:99999999', createdBy: 'peppol', documentTypeId: 'x' },
      createdBy: 'peppol',
      ...extra,
    });
    for (const s of starter.starts.slice(before)) {
      const r = await dispatch.dispatch({ ...s.input, attempt: 1, runKey: 'run', event: s.input.event });
      expect(r).toMatchObject({ kind: 'sent', ok: true });
    }
    return event;
  }

  const page = async (hookId: string, c: Creds, query = ''): Promise<Page> => {
    const res = await get(`/api/v1/inbox/${hookId}${query}`, c);
    expect(res.status).toBe(200);
    return res.body as Page;
  };

  function expectUnauthorized(res: request.Response, detail: RegExp) {
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('Basic realm="invoice-gateway inbox", charset="UTF-8"');
    expect(res.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED', detail: expect.stringMatching(detail) });
  }

  it('lists, reads, downloads and acknowledges with the hook credentials alone', async () => {
    const hook = await inboxHook(tokenA, PA1);
    const upload = await request(ctx.app)
      .post(`/api/v1/${PA1}/salesInvoice/send`)
      .auth(tokenA, { type: 'bearer' })
      .type('application/xml')
      .send(corpusFile(SAMPLE_UBL_INVOICE));
    expect(upload.status).toBe(200);
    const documentId = (upload.body as { id: string }).id;
    const party = { partyId: PA1, legalEntityId: `NL:${PA1}` };
    const e1 = await deliver('tenantA', party, { documentId });
    const e2 = await deliver('tenantA', party);

    const list = await get(`/api/v1/inbox/${hook.id}`, hook.creds);
    expect(list.status).toBe(200);
    expectContract('get', INBOX, list);
    expect(list.headers['cache-control']).toBe('no-store');
    const items = (list.body as Page).items;
    expect(items.map((i) => i.eventId)).toEqual([e1.id, e2.id]);
    expect((list.body as Page).nextCursor).toBeNull();
    const [first, second] = items as [Item, Item];
    expect(first.event).toEqual({
      topic: 'InvoiceReceived',
      partyId: `NL:${PA1}`,
      hookId: hook.id,
      documentId,
      message: 'received',
      details: { id: 'INV-1', sender: '0106:99999999', createdBy: 'peppol', documentTypeId: 'x' },
      createdBy: 'peppol',
      createdOn: e1.createdOn.toISOString(),
      sentOn: first.addedOn,
    });
    expect(first.links.self).toBe(`/api/v1/inbox/${hook.id}/${first.token}`);

    const one = await get(first.links.self, hook.creds);
    expectContract('get', ENTRY, one);
    expect(one.body).toEqual(first);

    const doc = await get(first.links.document!, hook.creds)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expectContract('get', DOCUMENT, doc);
    expect(doc.headers['content-type']).toMatch(/^application\/xml/);
    expect(Buffer.from(doc.body as Buffer).equals(corpusFile(SAMPLE_UBL_INVOICE))).toBe(true);
    // The event without a document has no document to give.
    const none = await get(`${second.links.self}/document`, hook.creds);
    expect(none.status).toBe(404);
    expectContract('get', DOCUMENT, none);

    const ack = await post(first.links.ack, hook.creds);
    expect(ack.status).toBe(200);
    expectContract('post', ACK, ack);
    const acknowledgedOn = (ack.body as Item).acknowledgedOn;
    expect(acknowledgedOn).not.toBeNull();
    // Idempotent: the same answer, the first acknowledgement's time.
    const again = await post(first.links.ack, hook.creds);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(ack.body);
    expect((await page(hook.id, hook.creds)).items.map((i) => i.eventId)).toEqual([e2.id]);
    // Still readable by its token once acknowledged.
    expect((await get(first.links.self, hook.creds)).body).toMatchObject({ acknowledgedOn });
  });

  it('pages oldest first with a cursor, and refuses limits and cursors it did not make', async () => {
    const hook = await inboxHook(tokenA, undefined, 'PageTopic');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await deliver('tenantA', null, { topic: 'PageTopic' })).id);
    const p1 = await page(hook.id, hook.creds, '?limit=2');
    const p2 = await page(hook.id, hook.creds, `?limit=2&cursor=${p1.nextCursor}`);
    const p3 = await page(hook.id, hook.creds, `?limit=2&cursor=${p2.nextCursor}`);
    expect([...p1.items, ...p2.items, ...p3.items].map((i) => i.eventId)).toEqual(ids);
    expect(p3.nextCursor).toBeNull();
    // Acknowledged entries leave the pages.
    await post(p1.items[0]!.links.ack, hook.creds).expect(200);
    expect((await page(hook.id, hook.creds, '?limit=500')).items.map((i) => i.eventId)).toEqual(ids.slice(1));

    for (const q of ['limit=0', 'limit=-1', 'limit=501', 'limit=1e2', 'limit=abc', 'limit=99999999999999999999']) {
      const res = await get(`/api/v1/inbox/${hook.id}?${q}`, hook.creds);
      expect([q, res.status]).toEqual([q, 400]);
      expectContract('get', INBOX, res);
      expect(res.body).toMatchObject({ detail: 'limit must be an integer from 1 to 500' });
    }
    for (const cursor of ['x', 'A'.repeat(300), Buffer.from('{"t":1,"i":"../x"}').toString('base64url')]) {
      const res = await get(`/api/v1/inbox/${hook.id}?cursor=${cursor}`, hook.creds);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ detail: 'cursor is not one this inbox returned' });
    }
  });

  it('answers 401 with a Basic challenge for missing, malformed or wrong credentials, and for bearer tokens', async () => {
    const hook = await inboxHook(tokenA, undefined, 'AuthTopic');
    const path = `/api/v1/inbox/${hook.id}`;
    expectUnauthorized(await get(path), /Authorization header missing/);
    expectUnauthorized(await get(path).set('Authorization', 'Basic'), /must hold HTTP Basic/);
    expectUnauthorized(await get(path).set('Authorization', 'Basic !!!'), /must hold HTTP Basic/);
    expectUnauthorized(
      await get(path).set('Authorization', `Basic ${Buffer.from('no-colon').toString('base64')}`),
      /user:password expected/,
    );
    expectUnauthorized(await get(path, { ...hook.creds, pass: 'wrong' }), /do not open this inbox/);
    expectUnauthorized(await get(path, { ...hook.creds, user: 'other' }), /do not open this inbox/);
    expectUnauthorized(await get(path, { user: hook.creds.user, pass: '' }), /do not open this inbox/);
    // The tenant's own bearer token is not a credential of the inbox.
    expectUnauthorized(await get(path).auth(tokenA, { type: 'bearer' }), /must hold HTTP Basic/);
    const res = await get(path);
    expectContract('get', INBOX, res);
    // An invalid Subscription-Key is refused as everywhere.
    const key = await get(path, hook.creds).set('Subscription-Key', 'nope');
    expect(key.status).toBe(401);
    expect(key.body).toMatchObject({ code: 'INVALID_SUBSCRIPTION_KEY' });
  });

  it('says nothing about hooks the caller does not hold the credentials of', async () => {
    const a = await inboxHook(tokenA, undefined, 'IsoTopic');
    const b = await inboxHook(tokenB, undefined, 'IsoTopic');
    const web = await request(ctx.app).post('/api/v1/hook').auth(tokenA, { type: 'bearer' }).send({
      url: 'https://u:p@receiver.example.com/h',
      topic: 'IsoTopic',
      secureKey: 'a-secure-key-of-enough-length',
    });
    const same = /do not open this inbox/;
    // Another tenant's hook with my credentials, an unknown id, a malformed id, an https hook with its URL's userinfo.
    expectUnauthorized(await get(`/api/v1/inbox/${a.id}`, b.creds), same);
    expectUnauthorized(await get(`/api/v1/inbox/${randomUUID()}`, a.creds), same);
    expectUnauthorized(await get(`/api/v1/inbox/${'x'.repeat(300)}`, a.creds), same);
    expectUnauthorized(await get(`/api/v1/inbox/${(web.body as { id: string }).id}`, { user: 'u', pass: 'p' }), same);
    expectUnauthorized(await get(`/api/v1/inbox/${a.id}`).auth(tokenB, { type: 'bearer' }), /HTTP Basic/);
  });

  it("keeps tenants' and parties' entries apart: another inbox's token is a 404", async () => {
    // A topic of this test's own: routing picks one hook per channel, and earlier tests' hooks listen on others.
    const topic = { topic: 'PartyTopic' };
    const a1 = await inboxHook(tokenA, PA1, topic.topic);
    const a2 = await inboxHook(tokenA, PA2, topic.topic);
    const b = await inboxHook(tokenB, PB, topic.topic);
    await deliver('tenantA', { partyId: PA1, legalEntityId: `NL:${PA1}` }, topic);
    await deliver('tenantA', { partyId: PA2, legalEntityId: `NL:${PA2}` }, topic);
    await deliver('tenantB', { partyId: PB, legalEntityId: `BE:${PB}` }, topic);
    const [p1, p2, pb] = await Promise.all([page(a1.id, a1.creds), page(a2.id, a2.creds), page(b.id, b.creds)]);
    expect([p1.items.length, p2.items.length, pb.items.length]).toEqual([1, 1, 1]);
    expect(p1.items[0]!.event).toMatchObject({ partyId: `NL:${PA1}`, hookId: a1.id });
    expect(p2.items[0]!.event).toMatchObject({ partyId: `NL:${PA2}`, hookId: a2.id });
    expect(pb.items[0]!.event).toMatchObject({ partyId: `BE:${PB}`, hookId: b.id });
    const t1 = p1.items[0]!.token;

    // Party A2's inbox and tenant B's inbox, each with its own credentials, do not know A1's token.
    for (const [hook, creds] of [
      [a2.id, a2.creds],
      [b.id, b.creds],
    ] as const) {
      for (const suffix of ['', '/document']) {
        const res = await get(`/api/v1/inbox/${hook}/${t1}${suffix}`, creds);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ code: 'NOT_FOUND', detail: 'No such entry in this inbox' });
        expect(res.text).not.toContain(`NL:${PA1}`);
      }
      const ack = await post(`/api/v1/inbox/${hook}/${t1}/ack`, creds);
      expect(ack.status).toBe(404);
      expectContract('post', ACK, ack);
    }
    // Nothing was acknowledged by those attempts.
    expect((await page(a1.id, a1.creds)).items.map((i) => i.token)).toEqual([t1]);
  });

  it('answers 404 for malformed, forged and unknown tokens', async () => {
    const hook = await inboxHook(tokenA, undefined, 'TokenTopic');
    await deliver('tenantA', null, { topic: 'TokenTopic' });
    const real = (await page(hook.id, hook.creds)).items[0]!.token;
    const [entryId, secret] = real.split('.') as [string, string];
    const forged = [
      'x',
      entryId,
      `${entryId}.${'A'.repeat(43)}`,
      `${randomUUID()}.${secret}`,
      `${entryId}.${secret}A`,
      `${entryId.toUpperCase()}.${secret}`,
      encodeURIComponent(`../${real}`),
      'y'.repeat(5000),
    ];
    for (const token of forged) {
      const res = await get(`/api/v1/inbox/${hook.id}/${token}`, hook.creds);
      expect([token.slice(0, 20), res.status]).toEqual([token.slice(0, 20), 404]);
      expectContract('get', ENTRY, res);
    }
    expect((await get(`/api/v1/inbox/${hook.id}/${real}`, hook.creds)).status).toBe(200);
  });

  it('keeps the inbox of a switched-off hook readable, follows a changed password, and closes with the hook', async () => {
    const hook = await inboxHook(tokenA, undefined, 'LifeTopic');
    await deliver('tenantA', null, { topic: 'LifeTopic' });
    const put = (body: object) =>
      request(ctx.app).put(`/api/v1/hook/${hook.id}`).auth(tokenA, { type: 'bearer' }).send(body);

    await put({
      url: `httpsin://${hook.creds.user}:${encodeURIComponent(hook.creds.pass)}@inbound?token=$token$`,
      topic: 'LifeTopic',
      isActive: false,
    }).expect(200);
    // Switched off: nothing new goes in, what is there stays readable and can be acknowledged.
    await deliver('tenantA', null, { topic: 'LifeTopic' });
    const [entry] = (await page(hook.id, hook.creds)).items;
    expect((await page(hook.id, hook.creds)).items).toHaveLength(1);

    await put({ url: 'httpsin://new-user:n3w-pass@inbound?token=$token$', topic: 'LifeTopic' }).expect(200);
    expectUnauthorized(await get(`/api/v1/inbox/${hook.id}`, hook.creds), /do not open this inbox/);
    const renewed = { user: 'new-user', pass: 'n3w-pass' };
    expect((await page(hook.id, renewed)).items.map((i) => i.token)).toEqual([entry!.token]);
    await post(entry!.links.ack, renewed).expect(200);

    await request(ctx.app).delete(`/api/v1/hook/${hook.id}`).auth(tokenA, { type: 'bearer' }).expect(204);
    expectUnauthorized(await get(`/api/v1/inbox/${hook.id}`, renewed), /do not open this inbox/);
    expectUnauthorized(await post(entry!.links.ack, renewed), /do not open this inbox/);
  });

  it('limits refused requests per address with 429', async () => {
    const hook = await inboxHook(tokenA, undefined, 'LimitTopic');
    for (let i = 0; i < 30; i++)
      expect((await get(`/api/v1/inbox/${hook.id}`, { user: 'x', pass: 'y' })).status).toBe(401);
    const limited = await get(`/api/v1/inbox/${hook.id}`, hook.creds);
    expect(limited.status).toBe(429);
    expectContract('get', INBOX, limited);
    expect(limited.headers['retry-after']).toBeDefined();
    // Another address is not affected.
    from = '203.0.113.7';
    expect((await get(`/api/v1/inbox/${hook.id}`, hook.creds)).status).toBe(200);
  });

  it('stores with keyed inserts only: one winner among racing deliveries and acknowledgements', async () => {
    const repo = new InboxRepository(ctx.core.db.models);
    const hookId = `race-${randomUUID()}`;
    const prefix = randomUUID().slice(0, 24);
    const entry = (n: number): InboxEntryDoc => ({
      _id: `${prefix}${String(n).padStart(12, '0')}`,
      tenantId: 'tenantA',
      hookId,
      eventId: `ev-${n}`,
      secret: `s-${n}`,
      event: '{}',
      createdOn: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
    });
    const puts = await Promise.all(Array.from({ length: 10 }, () => repo.put(entry(1))));
    expect(puts.filter((p) => p === 'inserted')).toHaveLength(1);
    const acks = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.ack(entry(1), new Date(1000 + i))));
    expect(acks.filter((a) => a.first)).toHaveLength(1);
    expect(new Set(acks.map((a) => a.ack.at.getTime())).size).toBe(1);

    // A long acknowledged stretch is skipped in bounded steps, each ending with where the next starts.
    for (let n = 2; n <= 6; n++) await repo.put(entry(n));
    for (const n of [2, 3, 4]) await repo.ack(entry(n), new Date());
    const step = await repo.listUnacknowledged(hookId, { limit: 1, maxScanned: 3 });
    expect(step.items).toEqual([]);
    expect(step.scannedTo).toMatchObject({ id: entry(3)._id });
    const next = await repo.listUnacknowledged(hookId, { after: step.scannedTo!, limit: 5, maxScanned: 100 });
    expect(next.items.map((e) => e.eventId)).toEqual(['ev-5', 'ev-6']);
    expect(next.scannedTo).toBeNull();
  });

  it('answers 503 in a process not wired for webhooks', async () => {
    const res = await request(ctx.unwiredApp).get(`/api/v1/inbox/${randomUUID()}`).auth('u', 'p');
    expect(res.status).toBe(503);
    expectContract('get', INBOX, res);
  });
});
