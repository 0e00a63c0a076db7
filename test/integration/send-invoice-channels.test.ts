/**
 * Delivery channels on real servers: the Temporal dev server, the database, a local SML zone and SMP, a receiving
 * access point (a second gateway with its own database and AP key) behind a listener on 127.0.0.1 that can answer
 * HTTP 500, and an SMTP server on 127.0.0.1. Covers a Peppol hook whose output rule hands exhausted retries to the mail
 * fallback, the sender check on both channels, and queryRecipientParty agreeing with what the send then does.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { corpusFile } from '../support/corpus';
import { parseMail } from '../support/smtp-sink';
import { eventually } from '../support/poll';
import { BIS3_INVOICE_TYPE, startSendingNetwork, type SendingNetwork } from '../support/sending-network';
import { createTestContext, type TestContext } from '../support/test-app';
import { testApEnv } from '../support/peppol/pki-fixture';
import { verifySignedDocument } from '../../src/webhooks/verify-webhook';

jest.setTimeout(120_000);

const ZONE = 'participant.sml.channels.test';
/** A Peppol hook with the rule 500 → Send*Fallback, and a mail hook on Send* and Send*Fallback. */
const PEPPOL_HOOK_PARTY = '0106:30000001';
/** Only a mail hook on Send* and Send*Fallback: the implicit Peppol channel with the e-mail fallback (spec 4.3). */
const FALLBACK_PARTY = '0106:30000002';
/** A mail hook on Send* only: e-mail is the first channel. */
const MAIL_FIRST_PARTY = '0106:30000003';
/** No channel hook at all: the implicit Peppol channel, no fallback. */
const PLAIN_PARTY = '0106:30000004';
/** A Peppol hook with the rule 404 → Send*Fallback, an https hook (an ERP) on Send*Fallback, a notified one on Send*. */
const HTTPS_PARTY = '0106:30000005';
const ERP_KEY = 'erp-signing-key-0123456789abcdef';
/** Registered; its access point answers HTTP 500 to every attempt. */
const DOWN_BUYER = '0106:40000001';
/** Registered; its access point (the receiving gateway) answers with a receipt. */
const BUYER = '0106:40000002';
/** Not in the SML. */
const UNKNOWN_BUYER = '0106:49999999';
/** A seller no party of the tenant is. */
const STRANGER = '0106:59999999';
const MAIL_TO = 'ap@buyer.example.test';

const BIS3_FILE = 'en16931/unit-tests/testfiles/BIS_Billing_30-Telefoni.xml';
const SELLER_ENDPOINT = '<cbc:EndpointID schemeID="0007">5566778899</cbc:EndpointID>';
const BUYER_ENDPOINT = '<cbc:EndpointID schemeID="0007">2244668800</cbc:EndpointID>';
const endpoint = (id: string) => `<cbc:EndpointID schemeID="${id.slice(0, 4)}">${id.slice(5)}</cbc:EndpointID>`;

/** The BIS Billing 3 test invoice from `seller` to `buyer` (both in scheme 0106: any number passes the rules). */
function invoice(seller: string, buyer: string): Buffer {
  const xml = corpusFile(BIS3_FILE).toString('utf8');
  if (!xml.includes(SELLER_ENDPOINT) || !xml.includes(BUYER_ENDPOINT)) throw new Error('test invoice changed');
  return Buffer.from(xml.replace(SELLER_ENDPOINT, endpoint(seller)).replace(BUYER_ENDPOINT, endpoint(buyer)));
}

interface RecipientAnswer {
  id: string;
  channel: string | null;
  description: string;
  message: string;
}

describe('sendInvoice channels: Peppol output rules, e-mail fallback, sender check, queryRecipientParty', () => {
  let net: SendingNetwork;
  let receiving: TestContext;
  let front: Server;
  let frontUrl: string;
  let downCalls = 0;
  const hooks: Record<string, string> = {};
  /** What the ERP behind the https hook received, and how many of its next answers are 503. */
  const erpPosts: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
  /** The events the notification hook on Send* received (JSON payloads). */
  const notices: Array<{ topic: string; documentId: string; hookId: string }> = [];
  let erpBusy = 0;
  let erp: Server;

  beforeAll(async () => {
    net = await startSendingNetwork({
      name: 'sendchannels',
      zone: ZONE,
      tenantId: 'tenantC',
      parties: [PEPPOL_HOOK_PARTY, FALLBACK_PARTY, MAIL_FIRST_PARTY, PLAIN_PARTY, HTTPS_PARTY].map((partyId) => ({
        partyId,
        legalEntityId: `NL:${partyId}`,
      })),
    });

    // The receiving access point: a gateway of its own serving BUYER.
    receiving = await createTestContext('channelsreceiving', {
      env: {
        ...testApEnv('ap-receiver'),
      },
    });
    const buyers = await receiving.core.directory.createTenant({ name: 'buyers' });
    await receiving.core.directory.createParty({
      tenantId: buyers._id,
      partyId: BUYER,
      legalEntityId: `NL:${BUYER}`,
      name: 'Buyer',
    });
    front = createServer((req, res) => {
      if (req.url === '/down/as4') {
        downCalls++;
        req.resume();
        req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error'));
        return;
      }
      receiving.app(req, res);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    erp = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/inbox/events') {
          notices.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as (typeof notices)[number]);
          res.writeHead(200).end();
          return;
        }
        erpPosts.push({ headers: req.headers, body: Buffer.concat(chunks) });
        const busy = erpBusy > 0;
        if (busy) erpBusy--;
        res.writeHead(busy ? 503 : 202).end();
      });
    });
    await new Promise<void>((r) => erp.listen(0, '127.0.0.1', r));
    const erpUrl = `http://127.0.0.1:${(erp.address() as AddressInfo).port}/inbox`;
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    net.publish(DOWN_BUYER, `${frontUrl}/down/as4`);
    net.publish(BUYER, `${frontUrl}/as4`);

    const hook = async (body: object) => {
      const res = await request(net.app).post('/api/v1-beta/hook').auth(net.token, { type: 'bearer' }).send(body);
      if (res.status !== 201) throw new Error(`hook answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (res.body as { id: string }).id;
    };
    hooks['peppol'] = await hook({
      partyId: PEPPOL_HOOK_PARTY,
      action: 'peppol',
      name: 'peppol',
      topics: ['Send*'],
      output: [{ when: '500', topic: 'Send*Fallback' }],
    });
    hooks['peppolMail'] = await hook({
      partyId: PEPPOL_HOOK_PARTY,
      action: 'mailto',
      name: 'fallback',
      url: `mailto:${MAIL_TO}?attach=xml`,
      topics: ['Send*', 'Send*Fallback'],
    });
    hooks['fallbackMail'] = await hook({
      partyId: FALLBACK_PARTY,
      action: 'mailto',
      name: 'fallback',
      url: `mailto:${MAIL_TO}?attach=xml`,
      topics: ['Send*', 'Send*Fallback'],
    });
    hooks['firstMail'] = await hook({
      partyId: MAIL_FIRST_PARTY,
      action: 'mailto',
      name: 'mail',
      url: `mailto:${MAIL_TO}?attach=xml`,
      topics: ['Send*'],
    });
    hooks['httpsPeppol'] = await hook({
      partyId: HTTPS_PARTY,
      action: 'peppol',
      name: 'peppol',
      topics: ['Send*'],
      output: [{ when: '404', topic: 'Send*Fallback' }],
    });
    hooks['erp'] = await hook({
      partyId: HTTPS_PARTY,
      action: 'https',
      name: 'erp',
      url: erpUrl,
      secureKey: ERP_KEY,
      topics: ['Send*Fallback'],
    });
    hooks['notified'] = await hook({
      partyId: HTTPS_PARTY,
      action: 'https',
      name: 'notifications',
      url: `${erpUrl}/events`,
      secureKey: ERP_KEY,
      topics: ['Send*'],
    });
    await net.startWorker();
  }, 180_000);

  afterAll(async () => {
    await net?.close();
    if (front) {
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
    }
    await receiving?.close();
    if (erp) {
      erp.closeAllConnections();
      await new Promise((r) => erp.close(r));
    }
  });

  const query = async (party: string, recipient: string) => {
    const res = await request(net.app)
      .post(`/api/v1/${party}/salesInvoice/queryRecipientParty`)
      .auth(net.token, { type: 'bearer' })
      .send([recipient]);
    return { status: res.status, body: res.body as RecipientAnswer };
  };

  /** The AS4 messages the receiving access point stored for BUYER so far. */
  const receivedCount = () => receiving.core.db.models.As4Inbound.countDocuments().exec();

  it('Peppol hook, receiver answers 500: retries run out, the output rule hands it to the mail hook', async () => {
    const mailsBefore = net.sink.messages.length;
    const id = await net.upload(PEPPOL_HOOK_PARTY, invoice(PEPPOL_HOOK_PARTY, DOWN_BUYER));
    const status = await net.finalStatus(PEPPOL_HOOK_PARTY, id);
    expect(status.state).toBe('delivered');
    // FAST_SCHEDULE has two waits: three attempts over Peppol, then one e-mail.
    expect(downCalls).toBe(3);
    expect(status.history.map((h) => h.state)).toEqual([
      'received',
      'accepted',
      'detected',
      'validated',
      'sending',
      'retrying',
      'sending',
      'retrying',
      'sending',
      'sending',
      'delivered',
    ]);

    const events = await net.eventsOf(PEPPOL_HOOK_PARTY, id);
    expect(events.map((e) => e.topic)).toEqual([
      'SendInvoice',
      'InvoiceSentRetry',
      'InvoiceSentRetry',
      'SendInvoiceFallback',
      'InvoiceSent',
    ]);
    expect(events[0]!.details).toMatchObject({ channel: hooks['peppol'], recipient: DOWN_BUYER });
    for (const retry of events.slice(1, 3)) {
      expect(retry.details).toMatchObject({
        protocol: 'peppol',
        reasonCode: 'HTTP 500',
        endpoint: `${frontUrl}/down/as4`,
        recipient: DOWN_BUYER,
      });
    }
    expect(events[3]!.details).toMatchObject({ channel: hooks['peppolMail'] });
    expect(events[3]!.message).toContain('Not delivered after 3 attempts; the last failed: HTTP 500');
    expect(events[4]!.details).toMatchObject({
      protocol: 'email',
      channel: hooks['peppolMail'],
      endpoint: `mailto:${MAIL_TO}`,
    });

    const arrived = net.sink.messages.slice(mailsBefore);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.to).toEqual([MAIL_TO]);
    const mail = await parseMail(arrived[0]!);
    expect(mail.attachments.map((a) => a.contentType)).toEqual(['application/xml']);
    expect(mail.attachments[0]!.content.equals(invoice(PEPPOL_HOOK_PARTY, DOWN_BUYER))).toBe(true);
  });

  it('an https hook on Send*Fallback takes what Peppol cannot reach: the document, signed; 503 retried, then taken', async () => {
    const answer = await query(HTTPS_PARTY, UNKNOWN_BUYER);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: UNKNOWN_BUYER, channel: hooks['erp'] });
    expect(answer.body.message).toMatch(new RegExp(`^Handed on to hook ${hooks['erp']}: .*not registered in the SML`));

    erpBusy = 1;
    const from = erpPosts.length;
    const body = invoice(HTTPS_PARTY, UNKNOWN_BUYER);
    const id = await net.upload(HTTPS_PARTY, body);
    const status = await net.finalStatus(HTTPS_PARTY, id);
    expect(status.state).toBe('delivered');
    const events = await net.eventsOf(HTTPS_PARTY, id);
    expect(events.map((e) => e.topic)).toEqual([
      'SendInvoice',
      'SendInvoiceFallback',
      'InvoiceSentRetry',
      'InvoiceSent',
    ]);
    expect(events[1]!.details).toMatchObject({ channel: hooks['erp'] });
    const retry = events[2]!;
    expect(retry.details).toMatchObject({ protocol: 'https', channel: hooks['erp'], reasonCode: 'HTTP 503' });
    expect(Date.parse(retry.details['nextAttemptOn']!)).not.toBeNaN();
    expect(events[3]!.details).toMatchObject({ protocol: 'https', channel: hooks['erp'], stage: 'https' });
    // The status resource: per channel what was tried and when the retry was due.
    const tried = status.history.filter((h) => h.channel === hooks['erp']).map((h) => h.state);
    expect(tried).toEqual(['sending', 'retrying', 'sending', 'delivered']);
    const waited = status.history.find((h) => h.state === 'retrying');
    expect(waited?.nextAttemptOn).toBe(retry.details['nextAttemptOn']);

    // Two POSTs of the same delivery; each the document as uploaded, signed with the hook's key.
    const posts = erpPosts.slice(from);
    expect(posts).toHaveLength(2);
    for (const post of posts) {
      expect(post.body.equals(body)).toBe(true);
      expect(post.headers['content-type']).toBe('application/xml');
      expect(post.headers['x-service-documentid']).toBe(id);
      expect(post.headers['x-service-topic']).toBe('SendInvoiceFallback');
      expect(verifySignedDocument(post.body, post.headers, ERP_KEY)).toMatchObject({ ok: true });
      expect(verifySignedDocument(post.body, post.headers, 'another-key-0123456789abcdef')).toMatchObject({
        ok: false,
      });
    }
    expect(posts[1]!.headers['x-service-delivery']).toBe(posts[0]!.headers['x-service-delivery']);
    // The notification hook on Send* hears of both sending topics as events; the channel hook gets no event of the
    // topic it took (it got the document).
    const heard = await eventually(() => {
      const mine = notices.filter((n) => n.documentId === id);
      return mine.length >= 2 ? mine : undefined;
    }, 30_000);
    expect(heard.map((n) => [n.topic, n.hookId]).sort()).toEqual([
      ['SendInvoice', hooks['notified']],
      ['SendInvoiceFallback', hooks['notified']],
    ]);
  });

  it('a recipient Peppol reaches goes over Peppol: the https hooks on Send* and Send*Fallback never get the document', async () => {
    const from = erpPosts.length;
    const storedBefore = await receivedCount();
    const id = await net.upload(HTTPS_PARTY, invoice(HTTPS_PARTY, BUYER));
    const status = await net.finalStatus(HTTPS_PARTY, id);
    expect(status.state).toBe('delivered');
    const events = await net.eventsOf(HTTPS_PARTY, id);
    expect(events.map((e) => [e.topic, e.details['protocol'] ?? ''])).toEqual([
      ['SendInvoice', ''],
      ['InvoiceSent', 'peppol'],
    ]);
    expect(await receivedCount()).toBe(storedBefore + 1);
    // The notification hook heard of SendInvoice as an event; no document reached the ERP.
    await eventually(() => notices.some((n) => n.documentId === id && n.topic === 'SendInvoice') || undefined, 30_000);
    expect(erpPosts.length).toBe(from);
  });

  describe('sender check: a seller that is not the uploading party is SENDER_NOT_ALLOWED on every channel', () => {
    it('on the Peppol channel: final, the e-mail fallback does not take it and nothing is sent', async () => {
      const mailsBefore = net.sink.messages.length;
      const storedBefore = await receivedCount();
      const id = await net.upload(PEPPOL_HOOK_PARTY, invoice(STRANGER, BUYER));
      const status = await net.finalStatus(PEPPOL_HOOK_PARTY, id);
      expect(status.state).toBe('InvoiceSentError');
      expect(status.history.map((h) => h.state)).toEqual([
        'received',
        'accepted',
        'detected',
        'validated',
        'InvoiceSentError',
      ]);
      const events = await net.eventsOf(PEPPOL_HOOK_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSentError']);
      expect(events[1]!.details).toMatchObject({ reasonCode: 'SENDER_NOT_ALLOWED', stage: 'sender' });
      expect(events[1]!.message).toContain(STRANGER);
      expect(events[1]!.message).toContain(PEPPOL_HOOK_PARTY);
      expect(net.sink.messages.length).toBe(mailsBefore);
      expect(await receivedCount()).toBe(storedBefore);
    });

    it('on the implicit Peppol channel of a party without hooks', async () => {
      const id = await net.upload(PLAIN_PARTY, invoice(STRANGER, BUYER));
      const status = await net.finalStatus(PLAIN_PARTY, id);
      expect(status.state).toBe('InvoiceSentError');
      const events = await net.eventsOf(PLAIN_PARTY, id);
      expect(events.at(-1)).toMatchObject({ topic: 'InvoiceSentError', details: { reasonCode: 'SENDER_NOT_ALLOWED' } });
      expect(events.at(-1)!.message).toContain(STRANGER);
      expect(events.at(-1)!.message).toContain(PLAIN_PARTY);
    });

    it('when a mail hook is the first channel: no mail reaches the SMTP server', async () => {
      const mailsBefore = net.sink.messages.length;
      const id = await net.upload(MAIL_FIRST_PARTY, invoice(STRANGER, BUYER));
      const status = await net.finalStatus(MAIL_FIRST_PARTY, id);
      expect(status.state).toBe('InvoiceSentError');
      const events = await net.eventsOf(MAIL_FIRST_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSentError']);
      expect(events[0]!.details).toMatchObject({ channel: hooks['firstMail'] });
      expect(events[1]!.details).toMatchObject({
        reasonCode: 'SENDER_NOT_ALLOWED',
        stage: 'sender',
        protocol: 'email',
        channel: hooks['firstMail'],
      });
      expect(events[1]!.message).toContain(STRANGER);
      expect(events[1]!.message).toContain(MAIL_FIRST_PARTY);
      expect(net.sink.messages.length).toBe(mailsBefore);
    });
    it('when an https hook is the channel (?channel=): nothing reaches the external system', async () => {
      const from = erpPosts.length;
      const id = await net.upload(HTTPS_PARTY, invoice(STRANGER, UNKNOWN_BUYER), `?channel=${hooks['erp']}`);
      const status = await net.finalStatus(HTTPS_PARTY, id);
      expect(status.state).toBe('InvoiceSentError');
      const events = await net.eventsOf(HTTPS_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSentError']);
      expect(events[1]!.details).toMatchObject({ reasonCode: 'SENDER_NOT_ALLOWED', stage: 'sender', protocol: '' });
      expect(events[1]!.message).toContain(STRANGER);
      expect(erpPosts.length).toBe(from);
    });
  });

  describe('queryRecipientParty says what the send then does', () => {
    it('a recipient on Peppol: channel peppol, and the invoice is delivered over Peppol', async () => {
      const answer = await query(PLAIN_PARTY, BUYER);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: BUYER, channel: 'peppol' });
      expect(answer.body.message).toContain(`${frontUrl}/as4`);

      const storedBefore = await receivedCount();
      const mailsBefore = net.sink.messages.length;
      const id = await net.upload(PLAIN_PARTY, invoice(PLAIN_PARTY, BUYER));
      const status = await net.finalStatus(PLAIN_PARTY, id);
      expect(status.state).toBe('delivered');
      const events = await net.eventsOf(PLAIN_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSent']);
      expect(events[1]!.details).toMatchObject({
        protocol: 'peppol',
        recipient: BUYER,
        endpoint: `${frontUrl}/as4`,
        targetDocumentTypeId: BIS3_INVOICE_TYPE.value,
      });
      expect(await receivedCount()).toBe(storedBefore + 1);
      expect(net.sink.messages.length).toBe(mailsBefore);
    });

    it('not in the SML, fallback mail hook: channel peppol-fallback, and the invoice arrives by e-mail', async () => {
      const answer = await query(FALLBACK_PARTY, UNKNOWN_BUYER);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: UNKNOWN_BUYER, channel: 'peppol-fallback' });
      expect(answer.body.message).toMatch(/^Delivered by e-mail: .*not registered in the SML/);

      const mailsBefore = net.sink.messages.length;
      const id = await net.upload(FALLBACK_PARTY, invoice(FALLBACK_PARTY, UNKNOWN_BUYER));
      const status = await net.finalStatus(FALLBACK_PARTY, id);
      expect(status.state).toBe('delivered');
      const events = await net.eventsOf(FALLBACK_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'SendInvoiceFallback', 'InvoiceSent']);
      expect(events[0]!.details).toMatchObject({ channel: 'peppol', recipient: UNKNOWN_BUYER });
      expect(events[1]!.details).toMatchObject({ channel: hooks['fallbackMail'] });
      expect(events[2]!.details).toMatchObject({ protocol: 'email', channel: hooks['fallbackMail'] });
      const arrived = net.sink.messages.slice(mailsBefore);
      expect(arrived.map((m) => m.to)).toEqual([[MAIL_TO]]);
    });

    it('not in the SML, no mail hook: 404 channel null, and the send ends in InvoiceSentError', async () => {
      const answer = await query(PLAIN_PARTY, UNKNOWN_BUYER);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ id: UNKNOWN_BUYER, channel: null });
      expect(answer.body.message).toMatch(/not registered in the SML/);

      const mailsBefore = net.sink.messages.length;
      const id = await net.upload(PLAIN_PARTY, invoice(PLAIN_PARTY, UNKNOWN_BUYER));
      const status = await net.finalStatus(PLAIN_PARTY, id);
      expect(status.state).toBe('InvoiceSentError');
      const events = await net.eventsOf(PLAIN_PARTY, id);
      expect(events.map((e) => e.topic)).toEqual(['SendInvoice', 'InvoiceSentError']);
      expect(events[1]!.details).toMatchObject({
        stage: 'lookup',
        reasonCode: 'PARTICIPANT_UNKNOWN',
        recipient: UNKNOWN_BUYER,
      });
      expect(net.sink.messages.length).toBe(mailsBefore);
    });
  });
});
