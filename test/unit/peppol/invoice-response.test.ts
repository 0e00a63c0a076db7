import {
  INVOICE_RESPONSE_CUSTOMIZATION_ID,
  buildInvoiceResponse,
  invoiceResponseInputProblem,
  readInvoiceResponse,
  type InvoiceResponseBuildInput,
} from '../../../src/peppol/invoice-response';
import { peppolParticipant } from '../../../src/peppol/identifiers';
import { requirePacks, validator } from '../validation/support';

const base: InvoiceResponseBuildInput = {
  id: 'c1f0a3de-0000-4000-8000-000000000001',
  issuedAt: new Date('2026-03-02T10:11:12.345Z'),
  statusCode: 'RE',
  note: 'Please correct & resend',
  reasons: [{ code: 'REF', text: 'Order reference <PO-1> unknown' }],
  actions: [{ code: 'NIN' }],
  sender: { endpoint: { scheme: '0088', value: '5790000435951' }, name: 'Buyer AS' },
  receiver: { endpoint: { scheme: '0184', value: 'DK12345678' }, name: 'Seller A/S' },
  invoice: { id: 'INV-2026-001', issueDate: '2026-02-28', typeCode: '380' },
};

describe('Invoice Response 3', () => {
  beforeAll(() => requirePacks(['peppol-invoice-response']));

  it('builds a response the pinned T111 rules accept, and reads it back', async () => {
    const xml = buildInvoiceResponse(base);
    const result = await validator().validate(Buffer.from(xml), { sourceFormat: 'peppol-invoice-response' });
    expect(result.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(result.isValid).toBe(true);
    const read = readInvoiceResponse(Buffer.from(xml));
    expect(read).toEqual({
      ok: true,
      response: {
        id: base.id,
        issueDate: '2026-03-02',
        customizationId: INVOICE_RESPONSE_CUSTOMIZATION_ID,
        profileId: 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3',
        note: 'Please correct & resend',
        sender: peppolParticipant('0088:5790000435951'),
        receiver: peppolParticipant('0184:DK12345678'),
        statusCode: 'RE',
        clarifications: [
          { listId: 'OPStatusReason', code: 'REF', text: 'Order reference <PO-1> unknown' },
          { listId: 'OPStatusAction', code: 'NIN' },
        ],
        invoice: { id: 'INV-2026-001', issueDate: '2026-02-28', typeCode: '380' },
      },
    });
  });

  it.each(['AB', 'IP', 'AP'] as const)('builds a valid %s without clarifications', async (statusCode) => {
    const { reasons: _r, actions: _a, note: _n, ...rest } = base;
    const xml = buildInvoiceResponse({ ...rest, statusCode });
    const result = await validator().validate(Buffer.from(xml), { sourceFormat: 'peppol-invoice-response' });
    expect(result.assertions.filter((a) => a.flag === 'error')).toEqual([]);
  });

  it('builds a valid PD with a partial payment reason', async () => {
    const xml = buildInvoiceResponse({ ...base, statusCode: 'PD', reasons: [{ code: 'PPD', text: '50 paid' }] });
    const result = await validator().validate(Buffer.from(xml), { sourceFormat: 'peppol-invoice-response' });
    expect(result.assertions.filter((a) => a.flag === 'error')).toEqual([]);
  });

  it('refuses input the T111 rules refuse', () => {
    expect(invoiceResponseInputProblem({ statusCode: 'CA' })).toMatch(/status must be one of/);
    expect(invoiceResponseInputProblem({ statusCode: 'XX' })).toMatch(/status must be one of/);
    expect(invoiceResponseInputProblem({ statusCode: 'RE' })).toMatch(/T111-R001/);
    expect(invoiceResponseInputProblem({ statusCode: 'UQ', actions: [{ code: 'PIN' }] })).toBeNull();
    expect(invoiceResponseInputProblem({ statusCode: 'AP', reasons: [{ code: 'PPD', text: 'x' }] })).toMatch(/R005/);
    expect(invoiceResponseInputProblem({ statusCode: 'PD', reasons: [{ code: 'PPD' }] })).toMatch(/R004/);
    expect(invoiceResponseInputProblem({ statusCode: 'AP', reasons: [{ code: 'ZZZ' }] })).toMatch(/OPStatusReason/);
    expect(invoiceResponseInputProblem({ statusCode: 'AP', actions: [{ code: 'REF' }] })).toMatch(/OPStatusAction/);
    expect(() => buildInvoiceResponse({ ...base, reasons: [], actions: [] })).toThrow(/T111-R001/);
  });

  it('reads what matching needs or says precisely what is missing', () => {
    const xml = buildInvoiceResponse(base);
    const noRef = xml.replace(/<cac:DocumentReference>[\s\S]*<\/cac:DocumentReference>/, '');
    expect(readInvoiceResponse(Buffer.from(noRef))).toEqual({
      ok: false,
      reason: expect.stringMatching(/names no invoice/),
    });
    const badCode = xml.replace('>RE</cbc:ResponseCode>', '>ZZ</cbc:ResponseCode>');
    expect(readInvoiceResponse(Buffer.from(badCode))).toMatchObject({ ok: false, reason: expect.stringMatching(/ZZ/) });
    const noReceiver = xml.replace(/<cac:ReceiverParty>[\s\S]*<\/cac:ReceiverParty>/, '');
    expect(readInvoiceResponse(Buffer.from(noReceiver))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/receiver party/),
    });
    expect(readInvoiceResponse(Buffer.from('<not xml'))).toMatchObject({ ok: false, reason: /unreadable XML/ });
    expect(readInvoiceResponse(Buffer.from(xml.replace(':invoice_response:3', ':mlr:3')))).toMatchObject({ ok: false });
  });
});
