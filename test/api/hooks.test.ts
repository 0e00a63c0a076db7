import request from 'supertest';
import { hashSecret } from '../../src/auth/secret-hash';
import { deliveryIdFor } from '../../src/webhooks/delivery-id';
import { expectContract } from '../support/contract';
import type { TestClient } from '../support/test-app';
import {
  createWebhookTestContext,
  RecordingDeliveryStarter,
  type WebhookTestContext,
} from '../support/webhook-harness';

const PA1 = '0106:40000001';
const PA2 = '0106:40000002';
const PB = '0106:40000009';
const KEY = 'a-secure-key-of-enough-length';
const RECEIVER = 'https://receiver.example.com/hooks';

interface HookJson {
  id: string;
  partyId: string | null;
  url: string | null;
  isActive: boolean;
  name: string;
  output: { when: string; topic: string }[];
  hasSecureKey: boolean;
  topics: string[];
  topic: string | null;
}

describe('hook API', () => {
  let ctx: WebhookTestContext;
  const starter = new RecordingDeliveryStarter();
  let tokenA: string;
  let tokenB: string;
  let tokenAB: string;
  let userToken: string;
  let clientA: TestClient;

  beforeAll(async () => {
    // https only here, and no allow-list: the production defaults.
    ctx = await createWebhookTestContext('hooksapi', {
      starter,
      env: { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOWED_RANGES: '' },
    });
    const dir = ctx.core.directory;
    await dir.createTenant({ id: 'tenantA', name: 'A' });
    await dir.createTenant({ id: 'tenantB', name: 'B' });
    await dir.createParty({ tenantId: 'tenantA', partyId: PA1, legalEntityId: `NL:${PA1}`, name: 'A1' });
    await dir.createParty({ tenantId: 'tenantA', partyId: PA2, legalEntityId: `NL:${PA2}`, name: 'A2' });
    await dir.createParty({ tenantId: 'tenantB', partyId: PB, legalEntityId: `BE:${PB}`, name: 'B' });
    clientA = await ctx.createClient(['tenantA']);
    tokenA = await ctx.token(clientA);
    tokenB = await ctx.token(await ctx.createClient(['tenantB']));
    tokenAB = await ctx.token(await ctx.createClient(['tenantA', 'tenantB']));
    await dir.createUser({
      tenantId: 'tenantA',
      username: 'hookuser',
      passwordHash: await hashSecret('Correct!Horse42'),
      partyIds: [PA1],
    });
    userToken = await ctx.passwordToken(clientA, 'hookuser', 'Correct!Horse42');
  });
  afterAll(async () => ctx.close());

  const post = (path: string, token: string, body: unknown) =>
    request(ctx.app)
      .post(path)
      .auth(token, { type: 'bearer' })
      .send(body as object);
  const put = (path: string, token: string, body: unknown) =>
    request(ctx.app)
      .put(path)
      .auth(token, { type: 'bearer' })
      .send(body as object);
  const get = (path: string, token: string) => request(ctx.app).get(path).auth(token, { type: 'bearer' });
  const del = (path: string, token: string) => request(ctx.app).delete(path).auth(token, { type: 'bearer' });

  async function createHook(body: Record<string, unknown>, path = '/api/v1/hook', token = tokenA): Promise<HookJson> {
    const res = await post(path, token, body);
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as HookJson;
  }

  describe('registration and validation', () => {
    it('registers an environment-level hook and never returns the secureKey', async () => {
      const res = await post('/api/v1/hook', tokenA, {
        url: RECEIVER,
        topic: 'InvoiceReceived',
        secureKey: KEY,
        name: 'main',
      });
      expect(res.status).toBe(201);
      expectContract('post', '/api/v1/hook', res);
      const hook = res.body as HookJson;
      expect(hook).toMatchObject({
        action: 'https',
        url: RECEIVER,
        topic: 'InvoiceReceived',
        partyId: null,
        isActive: true,
        hasSecureKey: true,
      });
      expect(res.headers['location']).toBe(`/api/v1/hook/${hook.id}`);
      expect(res.text).not.toContain(KEY);

      const one = await get(`/api/v1/hook/${hook.id}`, tokenA);
      expectContract('get', '/api/v1/hook/:hookId', one);
      const list = await get('/api/v1/hook', tokenA);
      expectContract('get', '/api/v1/hook', list);
      expect((list.body as { items: HookJson[] }).items.map((h) => h.id)).toContain(hook.id);
      for (const r of [one, list]) {
        expect(r.text).not.toContain(KEY);
        expect(r.text).not.toMatch(/"secureKey"/);
      }
      // Stored for signing all the same.
      expect((await ctx.webhooks.hooks.get({ tenantId: 'tenantA' }, hook.id))?.secureKey).toBe(KEY);
    });

    it('accepts unknown topics, wildcards and topics[]', async () => {
      for (const body of [
        { topic: 'SomeFutureTopic' },
        { topic: 'Send*' },
        { topic: '*Received' },
        { topics: ['Invoice*', 'OrderReceived'] },
        { topic: 'Send*Fallback' },
      ]) {
        const res = await post('/api/v1/hook', tokenA, { url: RECEIVER, secureKey: KEY, ...body });
        expect([res.status, body]).toEqual([201, body]);
      }
    });

    const invalid: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['plain http', { url: 'http://receiver.example.com/h', topic: 'Ping', secureKey: KEY }, 'url', /must use https/],
      ['no url', { action: 'https', topic: 'Ping', secureKey: KEY }, 'url', /needs a url/],
      ['no topic', { url: RECEIVER, secureKey: KEY }, 'topic', /topic or topics/],
      ['a malformed wildcard', { url: RECEIVER, topic: 'Invoice.*', secureKey: KEY }, 'topic', /contains "\."/],
      ['a double star', { url: RECEIVER, topics: ['Send**'], secureKey: KEY }, 'topics.0', /\*\*/],
      [
        'an unparseable filter',
        { url: RECEIVER, topic: 'Ping', secureKey: KEY, filter: 'sender == "x" &&' },
        'filter',
        /Invalid filter at column/,
      ],
      [
        'a filter calling an unknown method',
        { url: RECEIVER, topic: 'Ping', secureKey: KEY, filter: 'sender.Evil()' },
        'filter',
        /Invalid filter/,
      ],
      ['no secureKey', { url: RECEIVER, topic: 'Ping' }, 'secureKey', /needs a secureKey/],
      ['a short secureKey', { url: RECEIVER, topic: 'Ping', secureKey: 'short' }, 'secureKey', /at least 16/],
      [
        'output on v1',
        { url: RECEIVER, topic: 'Ping', secureKey: KEY, output: [{ when: '500', topic: 'X' }] },
        'output',
        /v1-beta/,
      ],
      [
        'mlsType on an https hook',
        { url: RECEIVER, topic: 'Ping', secureKey: KEY, mlsType: 'ALWAYS_SEND' },
        'mlsType',
        /peppol/,
      ],
      ['an unknown action', { action: 'ftp', url: RECEIVER, topic: 'Ping', secureKey: KEY }, 'action', /one of/],
      [
        'a timeout above the maximum',
        { url: RECEIVER, topic: 'Ping', secureKey: KEY, timeoutSeconds: 101 },
        'timeoutSeconds',
        /at most 100/,
      ],
      [
        'an httpsin hook on another host than the inbox',
        { url: 'httpsin://u:p@relay.example.com?token=$token$', topic: 'Ping', secureKey: KEY },
        'url',
        /"inbound"/,
      ],
      ['a mailto hook without address', { action: 'mailto', url: 'mailto:', topic: 'Ping' }, 'url', /no recipient/],
      [
        'a mailto hook with an unknown placeholder',
        { action: 'mailto', url: 'mailto:[buyerMail]', topic: 'SendInvoiceFallback' },
        'url',
        /unknown placeholder \[buyerMail\]/,
      ],
      [
        'a mailto hook that smuggles a header into its subject',
        { action: 'mailto', url: 'mailto:ap@example.com?subject=Hi%0D%0ABcc:%20x@evil.example', topic: 'Send*' },
        'url',
        /line break/,
      ],
      [
        'a mailto hook with an unknown parameter',
        { action: 'mailto', url: 'mailto:ap@example.com?attachments=none', topic: 'Send*' },
        'url',
        /unknown parameter "attachments"/,
      ],
    ];
    it.each(invalid)('refuses %s with a 400 naming the field', async (_what, body, path, message) => {
      const res = await post('/api/v1/hook', tokenA, body);
      expect(res.status).toBe(400);
      expectContract('post', '/api/v1/hook', res);
      const errors = (res.body as { errors: { path: string; message: string }[] }).errors;
      expect(errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ path, message: expect.stringMatching(message) as unknown })]),
      );
    });

    it.each([
      ['https://127.0.0.1/h', /loopback/],
      ['https://127.1/h', /loopback/],
      ['https://2130706433/h', /loopback/],
      ['https://0x7f.0.0.1/h', /loopback/],
      ['https://[::1]/h', /loopback/],
      ['https://[::ffff:127.0.0.1]/h', /loopback/],
      ['https://localhost/h', /loopback/],
      ['https://10.1.2.3/h', /private/],
      ['https://169.254.169.254/latest/meta-data', /link-local/],
      ['https://[fd00::1]/h', /unique-local/],
      ['https://[fe80::1]/h', /link-local/],
    ])('refuses the SSRF target %s at registration', async (url, reason) => {
      const res = await post('/api/v1/hook', tokenA, { url, topic: 'Ping', secureKey: KEY });
      expect(res.status).toBe(400);
      expect((res.body as { detail: string }).detail).toMatch(reason);
    });

    it('masks a password in an https URL', async () => {
      const res = await post('/api/v1/hook', tokenA, {
        url: 'https://user:pa55word@receiver.example.com/h',
        topic: 'Ping',
        secureKey: KEY,
      });
      expect(res.status).toBe(201);
      expect((res.body as HookJson).url).toBe('https://user:***@receiver.example.com/h');
      expect(res.text).not.toContain('pa55word');
    });

    it('refuses a body that is not JSON', async () => {
      const wrongType = await request(ctx.app)
        .post('/api/v1/hook')
        .auth(tokenA, { type: 'bearer' })
        .type('text/plain')
        .send('url=x');
      expect(wrongType.status).toBe(415);
      const broken = await request(ctx.app)
        .post('/api/v1/hook')
        .auth(tokenA, { type: 'bearer' })
        .type('application/json')
        .send('{"url":');
      expect(broken.status).toBe(400);
      expectContract('post', '/api/v1/hook', broken);
    });

    it('accepts output rules on v1-beta only, and checks them', async () => {
      const ok = await post('/api/v1-beta/hook', tokenA, {
        url: RECEIVER,
        topic: 'InvoiceSent',
        secureKey: KEY,
        output: [
          { when: 400, topic: 'Send*Fallback' },
          { when: '5XX', topic: 'Send*Fallback' },
        ],
      });
      expect(ok.status).toBe(201);
      expectContract('post', '/api/v1-beta/hook', ok);
      expect((ok.body as HookJson).output).toEqual([
        { when: '400', topic: 'Send*Fallback' },
        { when: '5xx', topic: 'Send*Fallback' },
      ]);
      const bad = await post('/api/v1-beta/hook', tokenA, {
        url: RECEIVER,
        topic: 'InvoiceSent',
        secureKey: KEY,
        output: [{ when: 'sometimes', topic: 'X' }],
      });
      expect(bad.status).toBe(400);
      expect((bad.body as { errors: { path: string }[] }).errors[0]?.path).toBe('output.0');
    });
  });

  describe('updates', () => {
    it('keeps the secureKey when absent, replaces it when given, and keeps output rules on v1', async () => {
      const res = await post('/api/v1-beta/hook', tokenA, {
        url: RECEIVER,
        topic: 'InvoiceSent',
        secureKey: KEY,
        output: [{ when: '404', topic: 'Send*Fallback' }],
      });
      const hook = res.body as HookJson;
      const upd = await put(`/api/v1/hook/${hook.id}`, tokenA, {
        url: `${RECEIVER}/v2`,
        topic: 'InvoiceSent',
        name: 'renamed',
      });
      expect(upd.status).toBe(200);
      expectContract('put', '/api/v1/hook/:hookId', upd);
      expect(upd.body).toMatchObject({
        id: hook.id,
        url: `${RECEIVER}/v2`,
        name: 'renamed',
        hasSecureKey: true,
        output: [{ when: '404', topic: 'Send*Fallback' }],
      });
      let stored = await ctx.webhooks.hooks.get({ tenantId: 'tenantA' }, hook.id);
      expect(stored?.secureKey).toBe(KEY);
      expect(stored?.rev).toBe(1);

      const beta = await put(`/api/v1-beta/hook/${hook.id}`, tokenA, {
        url: RECEIVER,
        topic: 'InvoiceSent',
        secureKey: 'another-key-that-is-long',
        output: [],
      });
      expect(beta.status).toBe(200);
      expect((beta.body as HookJson).output).toEqual([]);
      stored = await ctx.webhooks.hooks.get({ tenantId: 'tenantA' }, hook.id);
      expect(stored?.secureKey).toBe('another-key-that-is-long');
      expect(stored?.createdOn.getTime()).toBeLessThanOrEqual(stored?.changedOn.getTime() ?? 0);

      const invalid = await put(`/api/v1/hook/${hook.id}`, tokenA, { url: 'https://127.0.0.1/', topic: 'InvoiceSent' });
      expect(invalid.status).toBe(400);
    });

    it('deletes, then answers 404', async () => {
      const hook = await createHook({ url: RECEIVER, topic: 'Ping', secureKey: KEY });
      const gone = await del(`/api/v1/hook/${hook.id}`, tokenA);
      expect(gone.status).toBe(204);
      const again = await get(`/api/v1/hook/${hook.id}`, tokenA);
      expect(again.status).toBe(404);
      expectContract('get', '/api/v1/hook/:hookId', again);
      expect((await del(`/api/v1/hook/${hook.id}`, tokenA)).status).toBe(404);
    });
  });

  describe('party level and access', () => {
    it('keeps party-level hooks to their party', async () => {
      const res = await post(`/api/v1/${PA1}/hook`, tokenA, {
        url: RECEIVER,
        topic: 'InvoiceReceived',
        secureKey: KEY,
      });
      expect(res.status).toBe(201);
      expectContract('post', '/api/v1/:partyId/hook', res);
      const hook = res.body as HookJson;
      expect(hook.partyId).toBe(PA1);

      const list = await get(`/api/v1/${PA1}/hook`, tokenA);
      expectContract('get', '/api/v1/:partyId/hook', list);
      expect((list.body as { items: HookJson[] }).items.map((h) => h.id)).toEqual([hook.id]);
      expect(((await get(`/api/v1/${PA2}/hook`, tokenA)).body as { items: HookJson[] }).items).toEqual([]);
      // Not listed at environment level.
      expect(((await get('/api/v1/hook', tokenA)).body as { items: HookJson[] }).items.map((h) => h.id)).not.toContain(
        hook.id,
      );

      expect((await get(`/api/v1/${PA1}/hook/${hook.id}`, tokenA)).status).toBe(200);
      expect((await get(`/api/v1/hook/${hook.id}`, tokenA)).status).toBe(200);
      // The same id under another party of the same tenant does not exist.
      const other = await get(`/api/v1/${PA2}/hook/${hook.id}`, tokenA);
      expect(other.status).toBe(404);
      expectContract('get', '/api/v1/:partyId/hook/:hookId', other);
      expect(
        (await put(`/api/v1/${PA2}/hook/${hook.id}`, tokenA, { url: RECEIVER, topic: 'X', secureKey: KEY })).status,
      ).toBe(404);

      const upd = await put(`/api/v1/${PA1}/hook/${hook.id}`, tokenA, { url: RECEIVER, topics: ['Invoice*'] });
      expect(upd.status).toBe(200);
      expect((upd.body as HookJson).topics).toEqual(['Invoice*']);
      expect((upd.body as HookJson).topic).toBeNull();
      expect((await del(`/api/v1/${PA1}/hook/${hook.id}`, tokenA)).status).toBe(204);
    });

    it('hides one tenant’s hooks from another: 404 by id, 403 on party paths', async () => {
      const envHook = await createHook({ url: RECEIVER, topic: 'Ping', secureKey: KEY });
      const partyHook = await createHook({ url: RECEIVER, topic: 'Ping', secureKey: KEY }, `/api/v1/${PA1}/hook`);
      for (const id of [envHook.id, partyHook.id]) {
        expect((await get(`/api/v1/hook/${id}`, tokenB)).status).toBe(404);
        expect((await put(`/api/v1/hook/${id}`, tokenB, { url: RECEIVER, topic: 'Ping', secureKey: KEY })).status).toBe(
          404,
        );
        expect((await del(`/api/v1/hook/${id}`, tokenB)).status).toBe(404);
        expect((await post(`/api/v1/hook/${id}/ping`, tokenB, {})).status).toBe(404);
      }
      const partyPath = await get(`/api/v1/${PA1}/hook`, tokenB);
      expect(partyPath.status).toBe(403);
      expectContract('get', '/api/v1/:partyId/hook', partyPath);
      expect((await post(`/api/v1/${PA1}/hook`, tokenB, { url: RECEIVER, topic: 'Ping', secureKey: KEY })).status).toBe(
        403,
      );
      expect((await get(`/api/v1/${PA1}/hook/${partyHook.id}`, tokenB)).status).toBe(403);
      expect(
        (await post('/api/v1-beta/hook', tokenB, { partyId: PA1, url: RECEIVER, topic: 'Ping', secureKey: KEY }))
          .status,
      ).toBe(403);
      // B's environment list does not show A's hooks.
      const listB = (await get('/api/v1/hook', tokenB)).body as { items: HookJson[] };
      expect(listB.items.map((h) => h.id)).not.toContain(envHook.id);
      // Both hooks are untouched.
      expect(await ctx.webhooks.hooks.get({ tenantId: 'tenantA' }, envHook.id)).not.toBeNull();
    });

    it('asks a token of several tenants which one it means', async () => {
      const res = await get('/api/v1/hook', tokenAB);
      expect(res.status).toBe(400);
      expect((res.body as { detail: string }).detail).toMatch(/tenantId/);
      const a = await get('/api/v1/hook?tenantId=tenantA', tokenAB);
      expect(a.status).toBe(200);
      expect((await get('/api/v1/hook?tenantId=tenantC', tokenAB)).status).toBe(403);
      const created = await post('/api/v1/hook?tenantId=tenantB', tokenAB, {
        url: RECEIVER,
        topic: 'Ping',
        secureKey: KEY,
      });
      expect(created.status).toBe(201);
      expect(await ctx.webhooks.hooks.get({ tenantId: 'tenantB' }, (created.body as HookJson).id)).not.toBeNull();
    });

    it('gives a user token its own parties only, not the environment level', async () => {
      const env = await get('/api/v1/hook', userToken);
      expect(env.status).toBe(403);
      expectContract('get', '/api/v1/hook', env);
      expect((await post('/api/v1/hook', userToken, { url: RECEIVER, topic: 'Ping', secureKey: KEY })).status).toBe(
        403,
      );
      const own = await post(`/api/v1/${PA1}/hook`, userToken, { url: RECEIVER, topic: 'Ping', secureKey: KEY });
      expect(own.status).toBe(201);
      expect((await get(`/api/v1/hook/${(own.body as HookJson).id}`, userToken)).status).toBe(200);
      expect(
        (await post(`/api/v1/${PA2}/hook`, userToken, { url: RECEIVER, topic: 'Ping', secureKey: KEY })).status,
      ).toBe(403);
      // An environment-level hook of its own tenant is out of reach, so it does not exist for the user.
      const envHook = await createHook({ url: RECEIVER, topic: 'Ping', secureKey: KEY });
      expect((await get(`/api/v1/hook/${envHook.id}`, userToken)).status).toBe(404);
    });

    it('lets v1-beta register at party level through the body', async () => {
      const res = await post('/api/v1-beta/hook', tokenA, {
        partyId: PA2,
        url: RECEIVER,
        topic: 'InvoiceSent',
        secureKey: KEY,
        output: [{ when: '500', topic: 'Send*Fallback' }],
      });
      expect(res.status).toBe(201);
      expect((res.body as HookJson).partyId).toBe(PA2);
    });
  });

  describe('ping, events, delivery log and redelivery', () => {
    it('pings a hook: a stored Ping event and one delivery start for that hook only, even when switched off', async () => {
      const hook = await createHook(
        { url: RECEIVER, topic: 'InvoiceReceived', secureKey: KEY, isActive: false },
        `/api/v1/${PA1}/hook`,
      );
      const before = starter.starts.length;
      const res = await post(`/api/v1/${PA1}/hook/${hook.id}/ping`, tokenA, {});
      expect(res.status).toBe(202);
      expectContract('post', '/api/v1/:partyId/hook/:hookId/ping', res);
      const body = res.body as {
        eventId: string;
        label: string;
        deliveries: { hookId: string; deliveryId: string; status: string }[];
      };
      expect(body.label).toBe('routed');
      expect(body.deliveries).toEqual([
        { hookId: hook.id, action: 'https', deliveryId: deliveryIdFor(body.eventId, hook.id), status: 'started' },
      ]);
      const started = starter.starts.slice(before);
      expect(started).toHaveLength(1);
      expect(started[0]).toMatchObject({
        mode: 'fresh',
        input: { tenantId: 'tenantA', eventId: body.eventId, hookId: hook.id, ignoreInactive: true, hookRev: 0 },
        meta: { topic: 'Ping', partyKey: PA1 },
      });

      const events = await get(`/api/v1/events?topic=Ping&partyId=${PA1}`, tokenA);
      expectContract('get', '/api/v1/events', events);
      const item = (
        events.body as { items: { id: string; partyId: string; details: Record<string, string>; label: string }[] }
      ).items.find((e) => e.id === body.eventId);
      expect(item).toMatchObject({ partyId: `NL:${PA1}`, details: { hookId: hook.id }, label: 'routed' });

      // The start carries the hook's rev as routing saw it (a first attempt never uses a copy older than that).
      expect(
        (
          await put(`/api/v1/${PA1}/hook/${hook.id}`, tokenA, {
            url: RECEIVER,
            topic: 'InvoiceReceived',
            isActive: false,
          })
        ).status,
      ).toBe(200);
      expect((await post(`/api/v1/${PA1}/hook/${hook.id}/ping`, tokenA, {})).status).toBe(202);
      expect(starter.starts.at(-1)?.input.hookRev).toBe(1);
    });

    it('records dead-letter and dropped events and shows them in the batch', async () => {
      // tenantB: nothing subscribed to OrderChangeReceived (a topic with no details schema).
      const dead = await ctx.webhooks.publisher.publishEvent({
        tenantId: 'tenantB',
        topic: 'OrderChangeReceived',
        party: { partyId: PB, legalEntityId: `BE:${PB}` },
        message: 'order',
        createdBy: 'peppol',
      });
      expect(dead.event.label).toBe('dead-letter');
      await post('/api/v1/hook', tokenB, { action: 'drop', topic: 'OrderCancellationSent' });
      const dropped = await ctx.webhooks.publisher.publishEvent({
        tenantId: 'tenantB',
        topic: 'OrderCancellationSent',
        party: null,
        message: 'sent',
        createdBy: 'peppol',
      });
      expect(dropped.event.label).toBe('dropped');
      expect(dropped.deliveries.map((d) => d.status)).toEqual(['dropped']);

      const page = await get('/api/v1/events?topic=Order*', tokenB);
      expectContract('get', '/api/v1/events', page);
      const labels = Object.fromEntries(
        (page.body as { items: { id: string; label: string }[] }).items.map((e) => [e.id, e.label]),
      );
      expect(labels).toEqual({ [dead.event.id]: 'dead-letter', [dropped.event.id]: 'dropped' });
      // An empty query value means the parameter was left out, on every route.
      const blank = await get('/api/v1/events?topic=Order*&tenantId=&partyId=&limit=', tokenB);
      expect(blank.status).toBe(200);
      expect(blank.body).toEqual(page.body);
      expect((await get('/api/v1/events?topic=Order*&limit=x', tokenB)).status).toBe(400);
      // Tenant A sees neither.
      const a = (await get('/api/v1/events?topic=Order*', tokenA)).body as { items: unknown[] };
      expect(a.items).toEqual([]);
      expect((await get(`/api/v1/events/${dead.event.id}/deliveries`, tokenA)).status).toBe(404);
      expect((await post(`/api/v1/events/${dead.event.id}/redeliver`, tokenA, {})).status).toBe(404);
    });

    it('pages through events oldest first with a cursor, and filters by time', async () => {
      const t0 = Date.parse('2031-01-01T00:00:00Z');
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await ctx.webhooks.publisher.publishEvent({
          tenantId: 'tenantA',
          topic: 'CatalogueReceived',
          party: { partyId: PA2, legalEntityId: `NL:${PA2}` },
          message: `r${i}`,
          createdBy: 'peppol',
          // Two events share each timestamp: the id orders them.
          createdOn: new Date(t0 + Math.floor(i / 2) * 1000),
        });
        ids.push(r.event.id);
      }
      const expected = [...ids].sort((x, y) => {
        const ix = ids.indexOf(x);
        const iy = ids.indexOf(y);
        const tx = Math.floor(ix / 2);
        const ty = Math.floor(iy / 2);
        return tx !== ty ? tx - ty : x < y ? -1 : 1;
      });
      const seen: string[] = [];
      let cursor: string | null = '';
      for (let page = 0; page < 10 && cursor !== null; page++) {
        const res = await get(
          `/api/v1/events?topic=CatalogueReceived&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
          tokenA,
        );
        expect(res.status).toBe(200);
        const body = res.body as { items: { id: string }[]; nextCursor: string | null };
        seen.push(...body.items.map((e) => e.id));
        cursor = body.nextCursor;
      }
      expect(seen).toEqual(expected);

      const window = await get(
        `/api/v1/events?topic=CatalogueReceived&since=2031-01-01T00:00:01Z&until=2031-01-01T00:00:03Z`,
        tokenA,
      );
      expect((window.body as { items: { message: string }[] }).items.map((e) => e.message).sort()).toEqual([
        'r2',
        'r3',
        'r4',
        'r5',
      ]);
      // legalEntityId form of the party works too; a user token sees its own party only.
      expect(
        (
          (await get(`/api/v1/events?topic=CatalogueReceived&partyId=NL:${PA2}`, tokenA)).body as {
            items: unknown[];
          }
        ).items,
      ).toHaveLength(7);
      expect(
        ((await get('/api/v1/events?topic=CatalogueReceived', userToken)).body as { items: unknown[] }).items,
      ).toHaveLength(0);
      expect((await get(`/api/v1/events?partyId=${PA2}`, userToken)).status).toBe(403);
    });

    it.each([
      ['limit=0', /limit/],
      ['limit=1001', /limit/],
      ['since=yesterday', /since/],
      ['cursor=bm90LWEtY3Vyc29y', /cursor/],
      ['topic=Invoice.*', /contains/],
      ['partyId=nonsense', /partyId/],
    ])('refuses %s', async (query, message) => {
      const res = await get(`/api/v1/events?${query}`, tokenA);
      expect(res.status).toBe(400);
      expectContract('get', '/api/v1/events', res);
      expect((res.body as { detail: string }).detail).toMatch(message);
    });

    it('logs channels without an implementation, and redelivers to one hook or routes again', async () => {
      // Topics no environment-level hook of the earlier tests matches.
      const mail = await createHook(
        { action: 'mailto', url: 'mailto:ap@example.com', topic: 'MessageLevelStatusSent' },
        `/api/v1/${PA2}/hook`,
      );
      const published = await ctx.webhooks.publisher.publishEvent({
        tenantId: 'tenantA',
        topic: 'MessageLevelStatusSent',
        party: { partyId: PA2, legalEntityId: `NL:${PA2}` },
        message: 'sent',
        details: {
          statusCode: 'AP',
          status: 'Accept',
          description: '',
          profileId: 'p',
          sourceDocumentTypeId: 'd',
          attempt: '1',
          protocol: 'as4',
        },
        createdBy: 'peppol',
      });
      expect(published.deliveries).toEqual([
        {
          hookId: mail.id,
          action: 'mailto',
          deliveryId: deliveryIdFor(published.event.id, mail.id),
          status: 'unsupported',
        },
      ]);
      const log = await get(`/api/v1/events/${published.event.id}/deliveries`, tokenA);
      expect(log.status).toBe(200);
      expectContract('get', '/api/v1/events/:eventId/deliveries', log);
      expect((log.body as { items: { outcome: string; error: string }[] }).items).toEqual([
        expect.objectContaining({
          hookId: mail.id,
          outcome: 'unsupported',
          error: expect.stringMatching(/not implemented/) as unknown,
        }),
      ]);

      // A dead-letter event reaches a hook registered later through a redelivery that routes again.
      const dead = await ctx.webhooks.publisher.publishEvent({
        tenantId: 'tenantA',
        topic: 'OrderCancellationSent',
        party: { partyId: PA2, legalEntityId: `NL:${PA2}` },
        message: 'o',
        createdBy: 'peppol',
      });
      expect(dead.event.label).toBe('dead-letter');
      const hook = await createHook(
        { url: RECEIVER, topic: 'OrderCancellationSent', secureKey: KEY },
        `/api/v1/${PA2}/hook`,
      );
      const again = await post(`/api/v1/events/${dead.event.id}/redeliver`, tokenA, {});
      expect(again.status).toBe(202);
      expectContract('post', '/api/v1/events/:eventId/redeliver', again);
      expect(again.body).toMatchObject({ label: 'routed', deliveries: [{ hookId: hook.id, status: 'started' }] });
      expect(starter.starts.at(-1)).toMatchObject({
        mode: 'redeliver',
        input: { eventId: dead.event.id, hookId: hook.id },
      });
      const stored = await ctx.webhooks.events.get('tenantA', dead.event.id);
      expect(stored?.label).toBe('routed');

      // To one hook; 409 while a delivery to it is still running.
      const one = await post(`/api/v1/events/${dead.event.id}/redeliver?hookId=${hook.id}`, tokenA, {});
      expect(one.status).toBe(202);
      starter.running.add(deliveryIdFor(dead.event.id, hook.id));
      const busy = await post(`/api/v1/events/${dead.event.id}/redeliver?hookId=${hook.id}`, tokenA, {});
      expect(busy.status).toBe(409);
      expectContract('post', '/api/v1/events/:eventId/redeliver', busy);
      expect((await post(`/api/v1/events/${dead.event.id}/redeliver?hookId=${mail.id}`, tokenA, {})).status).toBe(409);
      expect((await post(`/api/v1/events/${dead.event.id}/redeliver?hookId=nope`, tokenA, {})).status).toBe(404);
    });
  });

  it('answers 503 where the webhook services are not wired, with the routes still declared', async () => {
    const res = await request(ctx.unwiredApp).get('/api/v1/hook').auth(tokenA, { type: 'bearer' });
    expect(res.status).toBe(503);
    expectContract('get', '/api/v1/hook', res);
  });
});
