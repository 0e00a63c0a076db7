/**
 * The AS4 sender against real HTTP servers on 127.0.0.1: our receiver's answers, and the shapes other peers answer
 * with (ebMS errors, SOAP faults, plain HTTP errors, silence), each classified as delivered / retryable / failed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EbmsError } from '../../../../src/peppol/as4/ebms-error';
import { As4Receiver } from '../../../../src/peppol/as4/receiver';
import { sendAs4Message, type SendAs4Options } from '../../../../src/peppol/as4/sender';
import { buildErrorSignal, buildReceipt } from '../../../../src/peppol/as4/signals';
import { ApKeyRing } from '../../../../src/peppol/pki/key-ring';
import type { KeyMaterial } from '../../../../src/peppol/pki/key-material';
import { RevocationChecker } from '../../../../src/peppol/pki/revocation';
import type { TestPki } from '../../../support/peppol/test-pki';
import { RECEIVER, message } from '../../../support/as4-messages';
import { startCrlServer } from '../../../support/peppol/crl-server';
import { testPki } from '../../../support/peppol/pki-fixture';
import { MemoryInboundStore } from '../../../support/peppol/memory-inbound-store';

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void | Promise<void>;

let pki: TestPki;
let server: Server;
let url: string;
let handler: Handler;

beforeAll(async () => {
  pki = await testPki();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on(
      'end',
      () =>
        void Promise.resolve(handler(req, Buffer.concat(chunks), res)).catch((e: unknown) => res.destroy(e as Error)),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/as4`;
}, 120_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const opts = (over: Partial<SendAs4Options> = {}): SendAs4Options => ({
  apCertificateAuthorities: [pki.apCa.certificate],
  receiverCertificate: pki.apReceiver.certificate,
  ...over,
});
const soap = (res: ServerResponse, status: number, xml: string): void => {
  res.writeHead(status, { 'content-type': 'application/soap+xml;charset=UTF-8' }).end(xml);
};
const fault = (code: string, reason: string): string =>
  `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault><env:Code><env:Value>${code}</env:Value></env:Code>` +
  `<env:Reason><env:Text xml:lang="en">${reason}</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>`;

describe('AS4 sender', () => {
  it('delivers to our receiver and checks the receipt', async () => {
    const store = new MemoryInboundStore();
    const receiver = new As4Receiver({
      keys: new ApKeyRing([pki.apReceiver]),
      apCertificateAuthorities: [pki.apCa.certificate],
      store,
      findParty: async (p) => (p.value === RECEIVER.value ? { tenantId: 't', partyId: p.value } : null),
      maxDecompressedBytes: 1 << 24,
      duplicateWindowMs: 3_600_000,
    });
    handler = async (req, body, res) => {
      const a = await receiver.receive(String(req.headers['content-type']), body);
      soap(res, a.status, a.body);
    };
    const msg = message(pki);
    const out = await sendAs4Message(msg, url, opts());
    expect(out).toMatchObject({ outcome: 'delivered', httpStatus: 200, references: msg.references });
    expect(store.records.map((r) => r.messageId)).toEqual([msg.messageId]);
    // The same message again (an attempt whose answer was lost): the stored receipt confirms it.
    expect((await sendAs4Message(msg, url, opts())).outcome).toBe('delivered');
    expect(store.records).toHaveLength(1);
  });

  it('refuses a receipt that does not return what was signed, or is signed by another access point', async () => {
    const msg = message(pki);
    handler = (_req, _body, res) =>
      soap(res, 200, buildReceipt(msg.messageId, msg.references.slice(0, 2), pki.apReceiver));
    const a = await sendAs4Message(msg, url, opts());
    expect(a).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/EBMS:0302 .*does not return what was signed \(missing: cid:/),
    });

    handler = (_req, _body, res) => soap(res, 200, buildReceipt(msg.messageId, msg.references, pki.apSenderNext));
    const b = await sendAs4Message(msg, url, opts());
    expect(b).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/signed by POP000001, not by the receiving access point POP000002/),
    });
  });

  it('classifies an ebMS error as permanent with the peer reason, EBMS:4001 as duplicate, and our 503 EBMS:0202 as retryable', async () => {
    const msg = message(pki);
    handler = (_req, _body, res) =>
      soap(
        res,
        200,
        buildErrorSignal(
          msg.messageId,
          new EbmsError('EBMS:0004', 'receiver unknown', { errorDetail: 'PEPPOL:NOT_SERVICED' }),
          pki.apReceiver,
        ),
      );
    expect(await sendAs4Message(msg, url, opts())).toMatchObject({
      outcome: 'failed',
      httpStatus: 200,
      reason: 'EBMS:0004 Other: receiver unknown (PEPPOL:NOT_SERVICED)',
      errors: [{ errorCode: 'EBMS:0004', errorDetail: 'PEPPOL:NOT_SERVICED' }],
    });

    const duplicate = buildErrorSignal(msg.messageId, new EbmsError('EBMS:0004', 'x'), pki.apReceiver).replace(
      /errorCode="EBMS:0004"/,
      'errorCode="EBMS:4001"',
    );
    handler = (_req, _body, res) => soap(res, 200, duplicate);
    expect((await sendAs4Message(msg, url, opts())).outcome).toBe('duplicate');

    handler = (_req, _body, res) =>
      soap(
        res,
        503,
        buildErrorSignal(msg.messageId, new EbmsError('EBMS:0202', 'could not be stored'), pki.apReceiver),
      );
    expect(await sendAs4Message(msg, url, opts())).toMatchObject({ outcome: 'retryable', httpStatus: 503 });
  });

  it('classifies SOAP faults by code: Receiver on 5xx is retryable, Sender is permanent', async () => {
    const msg = message(pki);
    handler = (_req, _body, res) => soap(res, 500, fault('env:Receiver', 'database down'));
    expect(await sendAs4Message(msg, url, opts())).toMatchObject({
      outcome: 'retryable',
      reason: 'SOAP Fault env:Receiver: database down',
    });
    handler = (_req, _body, res) => soap(res, 500, fault('env:Sender', 'WSS signature invalid'));
    expect(await sendAs4Message(msg, url, opts())).toMatchObject({
      outcome: 'failed',
      httpStatus: 500,
      reason: 'SOAP Fault env:Sender: WSS signature invalid',
    });
  });

  it('treats plain 5xx, 429 and 408 as retryable and other 4xx or 2xx without a receipt as permanent', async () => {
    const msg = message(pki);
    // 429 and 408: a rate limiter or proxy in front of the access point; later, the same message goes again.
    const cases: Array<[number, Record<string, string>, string, 'retryable' | 'failed', string]> = [
      [502, {}, 'bad gateway', 'retryable', 'HTTP 502: bad gateway'],
      [429, { 'retry-after': '30' }, 'slow down', 'retryable', 'HTTP 429 (throttled): slow down'],
      [408, {}, 'request timeout', 'retryable', 'HTTP 408: request timeout'],
      [403, {}, 'forbidden', 'failed', 'HTTP 403: forbidden'],
      [400, {}, 'Invalid AS4 profile', 'failed', 'HTTP 400: Invalid AS4 profile'],
    ];
    for (const [status, headers, body, outcome, reason] of cases) {
      handler = (_req, _body, res) =>
        void res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
      expect(await sendAs4Message(msg, url, opts())).toEqual({ outcome, httpStatus: status, reason });
    }
    handler = (_req, _body, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>');
    expect(await sendAs4Message(msg, url, opts())).toMatchObject({
      outcome: 'failed',
      reason: expect.stringMatching(/^HTTP 200 without a receipt/),
    });
  });

  it('treats a refused connection and a peer that never answers as retryable', async () => {
    const msg = message(pki);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await sendAs4Message(msg, `http://127.0.0.1:${port}/as4`, opts())).toMatchObject({
      outcome: 'retryable',
      reason: expect.stringMatching(/connection failed \(ECONNREFUSED\)/),
    });

    handler = () => undefined; // reads the request, never answers
    expect(await sendAs4Message(msg, url, opts({ timeoutMs: 300 }))).toMatchObject({
      outcome: 'retryable',
      reason: 'no answer within 300 ms',
    });
  });

  it('checks the receipt signer for revocation: revoked fails, an unknown status is retryable, good is delivered', async () => {
    const crl = await startCrlServer();
    try {
      crl.files.set('/ap-ca.crl', pki.crls.apCa);
      const revocation = (): RevocationChecker =>
        new RevocationChecker({ dispatcher: crl.dispatcher, timeoutMs: 2000 });
      const msg = message(pki);
      let signer: KeyMaterial = pki.apReceiver;
      handler = (_req, _body, res) => soap(res, 200, buildReceipt(msg.messageId, msg.references, signer, new Date()));

      expect(await sendAs4Message(msg, url, opts({ revocation: revocation() }))).toMatchObject({
        outcome: 'delivered',
        revocationChecked: true,
      });
      expect(await sendAs4Message(msg, url, opts())).toMatchObject({ outcome: 'delivered', revocationChecked: false });

      signer = pki.apRevoked;
      expect(
        await sendAs4Message(
          msg,
          url,
          opts({ revocation: revocation(), receiverCertificate: pki.apRevoked.certificate }),
        ),
      ).toMatchObject({
        outcome: 'failed',
        reason: expect.stringMatching(/^the receipt signer is not accepted: .*was revoked on .*keyCompromise/),
      });

      signer = pki.apReceiver;
      crl.files.set('/ap-ca.crl', 500);
      expect(await sendAs4Message(msg, url, opts({ revocation: revocation() }))).toMatchObject({
        outcome: 'retryable',
        reason: expect.stringMatching(/receipt signer is not accepted: the revocation status .* cannot be determined/),
      });
    } finally {
      await crl.close();
    }
  });
});
