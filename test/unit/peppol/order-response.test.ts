import {
  ORDER_RESPONSE_DOCUMENT_TYPE,
  buildOrderResponse,
  orderResponseFitProblem,
  orderResponseInputProblem,
  readOrderForResponse,
  type OrderForResponse,
  type OrderResponseSpec,
} from '../../../src/peppol/order-response';
import { readOrderResponse } from '../../../src/peppol/orders';
import { peppolParticipant } from '../../../src/peppol/identifiers';
import { orderXml } from '../../support/peppol/orders';
import { requirePacks, validator } from '../validation/support';

const order = readOrderForResponse(orderXml('PO-2026-7')) as OrderForResponse;
const meta = { id: 'c1f0a3de-0000-4000-8000-000000000002', issuedAt: new Date('2026-03-02T10:11:12.345Z') };

async function errorsOf(xml: string) {
  const result = await validator().validate(Buffer.from(xml), { sourceFormat: 'peppol-order-response' });
  return { errors: result.assertions.filter((a) => a.flag === 'error'), result };
}

describe('Order Response 3 (T76)', () => {
  beforeAll(() => requirePacks(['peppol-order-response']));

  it('reads what the response needs from a received order', () => {
    expect(order).toEqual({
      id: 'PO-2026-7',
      currency: 'EUR',
      buyer: { endpoint: { scheme: '0088', value: '5790000435951' }, name: 'Buyer AS', country: 'NL' },
      seller: { endpoint: { scheme: '0106', value: '71717171' }, name: 'Seller BV', country: 'NL' },
      lines: [
        { id: '1', name: 'Widget', unitCode: 'C62' },
        { id: '2', name: 'Gadget', unitCode: 'C62' },
      ],
    });
  });

  it.each<OrderResponseSpec>([
    { responseCode: 'AB' },
    { responseCode: 'AP', note: 'Will ship Monday & Tuesday <ok>' },
    { responseCode: 'RE', note: 'Out of stock' },
  ])('builds a header-only %j the pinned rules accept, and reads it back', async (spec) => {
    const xml = buildOrderResponse({ ...meta, spec, order });
    const { errors, result } = await errorsOf(xml);
    expect(errors).toEqual([]);
    expect(result.isValid).toBe(true);
    expect(readOrderResponse(Buffer.from(xml))).toEqual({
      ok: true,
      value: {
        id: meta.id,
        issueDate: '2026-03-02',
        responseCode: spec.responseCode,
        orderId: 'PO-2026-7',
        buyer: peppolParticipant('0088:5790000435951'),
        seller: peppolParticipant('0106:71717171'),
        ...(spec.note ? { note: spec.note } : {}),
      },
    });
    expect(xml).not.toContain('OrderLine');
  });

  it('builds CA with line answers (status codes, confirmed quantity, note) the pinned rules accept', async () => {
    const xml = buildOrderResponse({
      ...meta,
      spec: {
        responseCode: 'CA',
        lines: [
          { lineId: '2', statusCode: '3', quantity: '0.5', note: 'Only half available' },
          { lineId: '1', statusCode: '5' },
        ],
      },
      order,
    });
    const { errors, result } = await errorsOf(xml);
    expect(errors).toEqual([]);
    expect(result.isValid).toBe(true);
    expect(xml).toContain('<cbc:LineStatusCode listID="UNCL1229">3</cbc:LineStatusCode>');
    expect(xml).toContain('<cbc:Quantity unitCode="C62">0.5</cbc:Quantity>');
    expect(xml).toContain('<cbc:LineID>2</cbc:LineID>');
    expect(xml).toContain('<cbc:Name>Gadget</cbc:Name>');
  });

  it('the official rules refuse what the input check refuses (lines with AP, none with CA)', async () => {
    // Built by hand around the check, to show the check mirrors PEPPOL-T76-R007 / R008.
    const ca = buildOrderResponse({
      ...meta,
      spec: { responseCode: 'CA', lines: [{ lineId: '1', statusCode: '5' }] },
      order,
    });
    const apWithLines = ca.replace('>CA<', '>AP<');
    expect((await errorsOf(apWithLines)).errors.map((e) => e.ruleId)).toContain('PEPPOL-T76-R008');
    const caWithout = ca.replace(/<cac:OrderLine>[\s\S]*<\/cac:OrderLine>/, '');
    expect((await errorsOf(caWithout)).errors.map((e) => e.ruleId)).toContain('PEPPOL-T76-R007');
  });

  it.each<[string, Parameters<typeof orderResponseInputProblem>[0], RegExp]>([
    ['an unknown status', { responseCode: 'XX' }, /status must be one of AB, AP, RE, CA/],
    ['CA without lines', { responseCode: 'CA' }, /R007/],
    ['AP with lines', { responseCode: 'AP', lines: [{ lineId: '1', statusCode: '5' }] }, /no lines/],
    ['RE with lines', { responseCode: 'RE', lines: [{ lineId: '1', statusCode: '7' }] }, /no lines/],
    ['an unknown line status', { responseCode: 'CA', lines: [{ lineId: '1', statusCode: '9' }] }, /line status/],
    [
      'a line answered twice',
      {
        responseCode: 'CA',
        lines: [
          { lineId: '1', statusCode: '5' },
          { lineId: '1', statusCode: '7' },
        ],
      },
      /twice/,
    ],
    ['a bad quantity', { responseCode: 'CA', lines: [{ lineId: '1', statusCode: '3', quantity: '1e3' }] }, /quantity/],
  ])('refuses %s', (_, spec, message) => {
    expect(orderResponseInputProblem(spec)).toMatch(message);
  });

  it('refuses a line the order does not have, and input the rules refuse when building', () => {
    const spec: OrderResponseSpec = { responseCode: 'CA', lines: [{ lineId: '9', statusCode: '7' }] };
    expect(orderResponseFitProblem(spec, order)).toBe('the order has no line 9');
    expect(() => buildOrderResponse({ ...meta, spec, order })).toThrow('the order has no line 9');
    expect(() => buildOrderResponse({ ...meta, spec: { responseCode: 'CA' }, order })).toThrow(/R007/);
  });

  it('says why an order cannot be answered', () => {
    expect(readOrderForResponse(Buffer.from('<Invoice xmlns="x"/>'))).toBe('the document is no UBL Order');
    expect(readOrderForResponse(Buffer.from('<Order'))).toMatch(/^unreadable XML/);
    const noSeller = orderXml('PO-1')
      .toString()
      .replace(/<cac:SellerSupplierParty>[\s\S]*<\/cac:SellerSupplierParty>/, '');
    expect(readOrderForResponse(Buffer.from(noSeller))).toBe('the order has no seller party');
  });

  it('uses the Peppol order response document type', () => {
    expect(ORDER_RESPONSE_DOCUMENT_TYPE.value).toBe(
      'urn:oasis:names:specification:ubl:schema:xsd:OrderResponse-2::OrderResponse##' +
        'urn:fdc:peppol.eu:poacc:trns:order_response:3::2.1',
    );
  });
});
