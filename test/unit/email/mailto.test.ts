import { isMailAddress, MailtoError, parseMailtoUrl, resolveRecipients } from '../../../src/email';

describe('mail hook URLs', () => {
  it('reads placeholders, literal addresses and the parameters', () => {
    const hook = parseMailtoUrl(
      'mailto:[receiverEmailAddress],ap@buyer.example?cc=%5BsenderEmailAddress%5D&bcc=archive@seller.example' +
        '&subject=Invoice%20%5BinvoiceNumber%5D&fallback=invoices@buyer.example&attach=pdf,xml',
    );
    expect(hook.to).toEqual([{ placeholder: 'receiverEmailAddress' }, { address: 'ap@buyer.example' }]);
    expect(hook.cc).toEqual([{ placeholder: 'senderEmailAddress' }]);
    expect(hook.bcc).toEqual([{ address: 'archive@seller.example' }]);
    expect(hook.subject).toBe('Invoice [invoiceNumber]');
    expect(hook.fallback).toBe('invoices@buyer.example');
    expect([...hook.attach].sort()).toEqual(['pdf', 'xml']);
  });

  it('sends every part by default', () => {
    expect([...parseMailtoUrl('mailto:a@b.example').attach].sort()).toEqual(['attachments', 'pdf', 'xml']);
  });

  it.each([
    ['https://example.com', /not a mailto: URL/],
    ['mailto:', /no recipient/],
    ['mailto:?cc=a@b.example', /no recipient/],
    ['mailto:not-an-address', /is not an e-mail address/],
    ['mailto:[buyerEmail]', /unknown placeholder \[buyerEmail\]/],
    ['mailto:a@b.example?colour=red', /unknown parameter "colour"/],
    ['mailto:a@b.example?cc=c@d.example&cc=e@f.example', /given twice/],
    ['mailto:a@b.example?attach=pdf,zip', /parameter attach/],
    ['mailto:a@b.example?attach=', /parameter attach/],
    ['mailto:a@b.example?fallback=nobody', /parameter fallback/],
    ['mailto:a@b.example?subject=Hi%0D%0ABcc:%20evil@x.example', /subject contains a line break/],
    ['mailto:a@b.example\r\nBcc: evil@x.example', /line break/],
    ['mailto:a@b.example?subject=%E0%A4%A', /percent-encoding/],
    ['mailto:a@b.example#frag', /not a mailto: URL/],
    [`mailto:${'a'.repeat(2100)}@b.example`, /longer than 2048/],
    [`mailto:${Array.from({ length: 21 }, (_, i) => `u${i}@b.example`).join(',')}`, /more than 20 addresses/],
  ])('refuses %s', (url, why) => {
    expect(() => parseMailtoUrl(url)).toThrow(MailtoError);
    expect(() => parseMailtoUrl(url)).toThrow(why);
  });

  it.each([
    ['ap@buyer.example', true],
    ['first.last+tag@sub.buyer.example', true],
    ['rechnung@müller.example', true],
    ['Name <ap@buyer.example>', false],
    ['"quoted"@buyer.example', false],
    ['ap@localhost', false],
    ['ap@[127.0.0.1]', false],
    ['a@b.example\r\nBcc: x@y.example', false],
    ['@buyer.example', false],
    ['ap@buyer..example', false],
    [`${'x'.repeat(65)}@buyer.example`, false],
  ])('isMailAddress(%j) is %s', (s, ok) => {
    expect(isMailAddress(s)).toBe(ok);
  });
});

describe('recipients of an invoice mail', () => {
  const hook = parseMailtoUrl(
    'mailto:[receiverEmailAddress]?cc=[senderEmailAddress],copy@seller.example&fallback=invoices@buyer.example',
  );

  it('fills the placeholders from the invoice', () => {
    expect(
      resolveRecipients(hook, { receiverEmailAddress: 'ap@buyer.example', senderEmailAddress: 'ar@seller.example' }),
    ).toEqual({
      to: ['ap@buyer.example'],
      cc: ['ar@seller.example', 'copy@seller.example'],
      bcc: [],
      usedFallback: false,
    });
  });

  it('falls back when the invoice names no receiver, or names something that is not an address', () => {
    for (const found of [{}, { receiverEmailAddress: 'call us' }]) {
      expect(resolveRecipients(hook, found)).toMatchObject({ to: ['invoices@buyer.example'], usedFallback: true });
    }
  });

  it('says who is missing when there is no address and no fallback', () => {
    const r = resolveRecipients(parseMailtoUrl('mailto:[receiverEmailAddress]'), {});
    expect(r).toEqual({ missing: expect.stringContaining('[receiverEmailAddress]') });
  });
});
