import type { Invoice } from '../../../src/en16931';
import { buildInvoiceMail, embeddedAttachments, invoiceAddresses, parseMailtoUrl } from '../../../src/email';

function invoice(over: Partial<Invoice> = {}): Invoice {
  return {
    number: 'INV-42',
    issueDate: '2026-11-20',
    currencyCode: 'EUR',
    paymentDueDate: '2026-12-20',
    notes: [],
    processControl: { specificationIdentifier: 'urn:cen.eu:en16931:2017' },
    precedingInvoices: [],
    seller: {
      name: 'Seller GmbH',
      identifiers: [],
      electronicAddress: { value: 'billing@seller.example', schemeId: 'EM' },
    },
    buyer: { name: 'Buyer BV', contact: { email: 'ap@buyer.example' } },
    allowanceCharges: [],
    totals: { amountDueForPayment: '121.00' },
    vatBreakdown: [],
    supportingDocuments: [
      {
        reference: 'timesheet',
        attachment: {
          base64: Buffer.from('%PDF-1.7 sheet').toString('base64'),
          mimeCode: 'application/pdf',
          filename: '../../etc/Timesheet.pdf',
        },
      },
      { reference: 'external only', externalLocation: 'https://seller.example/x' },
      {
        reference: 'odd',
        attachment: { base64: Buffer.from('abc').toString('base64'), mimeCode: 'text/plain\r\nX: y' },
      },
    ],
    lines: [],
    extensions: {},
    ...over,
  };
}

const xml = { filename: 'INV-42.xml', content: Buffer.from('<Invoice/>') };
const pdf = Buffer.from('%PDF-1.7 readable');

describe('the invoice mail', () => {
  it('reads the addresses placeholders use: contact e-mail first, an EM electronic address otherwise', () => {
    expect(invoiceAddresses(invoice())).toEqual({
      receiverEmailAddress: 'ap@buyer.example',
      senderEmailAddress: 'billing@seller.example',
    });
    const noEm = invoice({ seller: { identifiers: [], electronicAddress: { value: '12345', schemeId: '0088' } } });
    expect(invoiceAddresses(noEm).senderEmailAddress).toBeUndefined();
  });

  it('carries the PDF, the XML and the embedded documents, with safe names and types', () => {
    const mail = buildInvoiceMail({
      hook: parseMailtoUrl('mailto:[receiverEmailAddress]'),
      invoice: invoice(),
      from: 'noreply@gateway.example',
      messageId: '<doc-1.hook-1@gateway.example>',
      xml,
      pdf,
    });
    if ('missing' in mail) throw new Error(mail.missing);
    expect(mail).toMatchObject({
      from: 'noreply@gateway.example',
      to: ['ap@buyer.example'],
      replyTo: 'billing@seller.example',
      subject: 'Invoice INV-42 from Seller GmbH',
      messageId: '<doc-1.hook-1@gateway.example>',
      usedFallback: false,
    });
    expect(mail.text).toContain('Amount due: 121.00 EUR');
    expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
      ['invoice-INV-42.pdf', 'application/pdf', '%PDF-1.7 readable'],
      ['INV-42.xml', 'application/xml', '<Invoice/>'],
      ['Timesheet.pdf', 'application/pdf', '%PDF-1.7 sheet'],
      ['odd', 'application/octet-stream', 'abc'],
    ]);
  });

  it('sends only the parts the hook asks for, with its subject filled in', () => {
    const mail = buildInvoiceMail({
      hook: parseMailtoUrl('mailto:[receiverEmailAddress]?attach=xml&subject=%5BbuyerName%5D%3A%20%5BinvoiceNumber%5D'),
      invoice: invoice(),
      from: 'noreply@gateway.example',
      messageId: '<m@gateway.example>',
      xml,
      pdf,
    });
    if ('missing' in mail) throw new Error(mail.missing);
    expect(mail.subject).toBe('Buyer BV: INV-42');
    expect(mail.attachments.map((a) => a.filename)).toEqual(['INV-42.xml']);
  });

  it('says so when nobody can receive it', () => {
    const mail = buildInvoiceMail({
      hook: parseMailtoUrl('mailto:[receiverEmailAddress]'),
      invoice: invoice({ buyer: { name: 'Buyer BV' } }),
      from: 'noreply@gateway.example',
      messageId: '<m@gateway.example>',
    });
    expect(mail).toEqual({ missing: expect.stringMatching(/no e-mail address to send to/) });
  });

  it('skips supporting documents that are only referenced', () => {
    expect(embeddedAttachments(invoice()).map((a) => a.filename)).not.toContain('external only');
  });
});
