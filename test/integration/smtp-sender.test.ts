import net from 'node:net';
import { createSmtpSender, type InvoiceMail, type SmtpSettings } from '../../src/email';
import { parseMail, scriptedAnswers, startSmtpSink, type SmtpSink } from '../support/smtp-sink';

/*
 * The SMTP relay client against a real SMTP server on 127.0.0.1 (smtp-server): what the relay's answers mean for a
 * document (accepted, try again, never), and that what arrives is the mail we built, attachments byte for byte.
 */

function settings(port: number, over: Partial<SmtpSettings> = {}): SmtpSettings {
  return { host: '127.0.0.1', port, secure: false, requireTls: false, timeoutMs: 5_000, ...over };
}

function mail(over: Partial<InvoiceMail> = {}): InvoiceMail {
  return {
    from: 'noreply@gateway.example',
    to: ['ap@buyer.example'],
    cc: [],
    bcc: [],
    subject: 'Invoice INV-42 from Seller GmbH',
    text: 'Invoice INV-42.',
    messageId: '<doc-1.hook-1@gateway.example>',
    attachments: [
      { filename: 'invoice-INV-42.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7 readable') },
      { filename: 'INV-42.xml', contentType: 'application/xml', content: Buffer.from('<Invoice/>') },
    ],
    usedFallback: false,
    ...over,
  };
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('SMTP relay client', () => {
  let sink: SmtpSink | undefined;
  afterEach(async () => {
    await sink?.close();
    sink = undefined;
  });

  it('delivers the mail as built: recipients, Message-ID and every attachment byte for byte', async () => {
    sink = await startSmtpSink();
    const big = Buffer.alloc(10 * 1024 * 1024, 7); // a 10 MB embedded PDF travels too
    const sender = createSmtpSender(settings(sink.port));
    try {
      const outcome = await sender.send(
        mail({
          cc: ['ar@seller.example'],
          replyTo: 'ar@seller.example',
          attachments: [
            ...mail().attachments,
            { filename: 'Timesheet.pdf', contentType: 'application/pdf', content: big },
          ],
        }),
      );
      expect(outcome).toMatchObject({ kind: 'accepted', accepted: ['ap@buyer.example', 'ar@seller.example'] });
    } finally {
      sender.close();
    }
    expect(sink.messages).toHaveLength(1);
    const received = sink.messages[0];
    if (!received) throw new Error('nothing arrived');
    expect(received.from).toBe('noreply@gateway.example');
    expect(received.to).toEqual(['ap@buyer.example', 'ar@seller.example']);
    const parsed = await parseMail(received);
    expect(parsed.messageId).toBe('<doc-1.hook-1@gateway.example>');
    expect(parsed.subject).toBe('Invoice INV-42 from Seller GmbH');
    expect(parsed.replyTo?.text).toBe('ar@seller.example');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['invoice-INV-42.pdf', 'application/pdf'],
      ['INV-42.xml', 'application/xml'],
      ['Timesheet.pdf', 'application/pdf'],
    ]);
    expect(parsed.attachments[2]?.content.equals(big)).toBe(true);
  });

  it('a 421 is temporary, and the next attempt is delivered', async () => {
    sink = await startSmtpSink({ answer: scriptedAnswers('data', [421]) });
    const sender = createSmtpSender(settings(sink.port));
    try {
      expect(await sender.send(mail())).toMatchObject({ kind: 'temporary', code: 421 });
      expect(await sender.send(mail())).toMatchObject({ kind: 'accepted' });
    } finally {
      sender.close();
    }
    expect(sink.messages).toHaveLength(1);
  });

  it('a 550 for the only recipient is permanent, with the relay answer quoted', async () => {
    sink = await startSmtpSink({ answer: scriptedAnswers('rcpt', [550]) });
    const sender = createSmtpSender(settings(sink.port));
    try {
      const outcome = await sender.send(mail());
      expect(outcome).toMatchObject({ kind: 'permanent', code: 550 });
      expect(outcome.kind !== 'accepted' && outcome.reason).toMatch(/scripted 550/);
    } finally {
      sender.close();
    }
    expect(sink.messages).toHaveLength(0);
  });

  it('a refused recipient among accepted ones is reported, the mail still delivered', async () => {
    sink = await startSmtpSink({
      answer: (stage, address) =>
        stage === 'rcpt' && address === 'gone@buyer.example' ? { code: 550, message: 'no such user' } : undefined,
    });
    const sender = createSmtpSender(settings(sink.port));
    try {
      expect(await sender.send(mail({ cc: ['gone@buyer.example'] }))).toMatchObject({
        kind: 'accepted',
        accepted: ['ap@buyer.example'],
        rejected: ['gone@buyer.example'],
      });
    } finally {
      sender.close();
    }
  });

  it('no relay listening is temporary', async () => {
    const sender = createSmtpSender(settings(await freePort(), { timeoutMs: 2_000 }));
    try {
      expect(await sender.send(mail())).toMatchObject({
        kind: 'temporary',
        reason: expect.stringMatching(/^E[A-Z]+: /),
      });
    } finally {
      sender.close();
    }
  });

  it('a relay without STARTTLS when TLS is required is not sent to in clear text (temporary: ours to fix)', async () => {
    sink = await startSmtpSink();
    const sender = createSmtpSender(settings(sink.port, { requireTls: true }));
    try {
      expect(await sender.send(mail())).toMatchObject({ kind: 'temporary' });
    } finally {
      sender.close();
    }
    expect(sink.messages).toHaveLength(0);
  });
});
