/**
 * Our sender → our receiver over a real socket on 127.0.0.1 (the real app and database): delivery with a verified
 * receipt, a resend of the same document after a lost answer (stable ids: the stored receipt confirms it), and a
 * chunked body over the size cap cut off while streaming.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { buildPeppolMessage } from '../../src/peppol/as4/message';
import { stableMessageIds } from '../../src/peppol/as4/message-ids';
import { sendAs4Message, type SendAs4Options } from '../../src/peppol/as4/sender';
import { readSignal } from '../../src/peppol/as4/signals';
import type { TestPki } from '../support/peppol/test-pki';
import { HEADER, RECEIVER, sbd } from '../support/as4-messages';
import { createTestContext, type TestContext } from '../support/test-app';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';

const MAX_MESSAGE = 1024 * 1024;

let pki: TestPki;
let ctx: TestContext;
let server: Server;
let url: string;

beforeAll(async () => {
  pki = await testPki();
  ctx = await createTestContext('asfourloopback', {
    env: {
      ...testApEnv('ap-receiver'),
      AS4_MAX_MESSAGE_BYTES: String(MAX_MESSAGE),
    },
  });
  const tenant = await ctx.core.directory.createTenant({ name: 'receiving tenant' });
  await ctx.core.directory.createParty({
    tenantId: tenant._id,
    partyId: RECEIVER.value,
    legalEntityId: `NL:${RECEIVER.value}`,
    name: 'Receiver BV',
  });
  server = createServer(ctx.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/as4`;
}, 180_000);

afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await ctx?.close();
});

const opts = (): SendAs4Options => ({
  apCertificateAuthorities: [pki.apCa.certificate],
  receiverCertificate: pki.apReceiver.certificate,
  timeoutMs: 30_000,
});
const count = (): Promise<number> => ctx.core.db.models.As4Inbound.countDocuments().exec();

describe('our sender → our receiver on 127.0.0.1', () => {
  it('delivers; a resend of the same document (rebuilt with its stable ids) is confirmed by the stored receipt', async () => {
    const doc = sbd();
    const firstAttempt = new Date();
    const build = () =>
      buildPeppolMessage({
        sbd: doc,
        header: HEADER,
        signer: pki.apSender,
        receiverCertificate: pki.apReceiver.certificate,
        timestamp: firstAttempt,
        ...stableMessageIds('tenant-x:doc-42'),
      });

    const first = build();
    const before = await count();
    const out = await sendAs4Message(first, url, opts());
    expect(out).toMatchObject({ outcome: 'delivered', httpStatus: 200 });
    const record = await ctx.core.db.models.As4Inbound.findById(first.messageId).lean().exec();
    expect((await ctx.core.db.blobs.read(record?.blobId as string)).equals(doc)).toBe(true);

    const resend = build();
    expect(resend.body.equals(first.body)).toBe(false);
    expect(await sendAs4Message(resend, url, opts())).toMatchObject({ outcome: 'delivered' });
    expect(await count()).toBe(before + 1);
  });

  it('cuts off a chunked body over the cap while it streams (413, signed ebMS error, nothing stored)', async () => {
    const before = await count();
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    // No Content-Length: the cap has to hold on the bytes as they arrive.
    const body = new Readable({
      read() {
        if (sent > 4 * MAX_MESSAGE) {
          this.push(null);
          return;
        }
        sent += chunk.length;
        this.push(chunk);
      },
    });
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'multipart/related; boundary="b"; type="application/soap+xml"' },
      body,
    });
    const text = await res.body.text();
    expect(res.statusCode).toBe(413);
    expect(
      readSignal(text, { sentMessageId: '-', sentReferences: [], apCertificateAuthorities: [pki.apCa.certificate] }),
    ).toMatchObject({
      kind: 'error',
      signed: true,
      errors: [{ errorCode: 'EBMS:0004', description: `the AS4 message exceeds ${MAX_MESSAGE} bytes` }],
    });
    expect(await count()).toBe(before);
  });
});
