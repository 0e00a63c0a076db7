import { readdirSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { flagOf, reasonCodeOf, type ValidationResult } from '../../../src/validation';
import { isCollapsibleDateTimeReport } from '../../../src/validation/xsd';
import { CORPUS_DIR, corpusFile } from '../../support/corpus';
import { requirePacks, validator } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

/**
 * The checks the contract names (spec 7 and 8), each against a real Peppol BIS 3 invoice from the EN 16931 examples
 * with one change made.
 */

const BIS3 = corpusFile('en16931/ubl-examples/BIS3_Invoice_positive.XML').toString('utf8');

/** Replaces exactly one occurrence, so a test cannot pass because its edit silently missed. */
function edit(xml: string, find: string | RegExp, replace: string): string {
  const count =
    typeof find === 'string'
      ? xml.split(find).length - 1
      : (xml.match(new RegExp(find.source, `${find.flags.replace('g', '')}g`)) ?? []).length;
  if (count < 1) throw new Error(`edit: ${String(find)} not found`);
  return xml.replace(find, replace);
}

async function validate(xml: string): Promise<ValidationResult> {
  return validator().validate(Buffer.from(xml, 'utf8'));
}

function errors(r: ValidationResult) {
  return r.assertions.filter((a) => a.flag === 'error');
}

describe('spec 7 checks', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'peppol-cen-en16931-ubl', 'peppol-bis3-ubl', 'en16931-ubl', 'si-ubl-2.0']));

  it('accepts the unchanged BIS 3 invoice', async () => {
    const r = await validate(BIS3);
    expect(r.format.id).toBe('peppol-bis3-ubl-invoice');
    expect(r.isValid).toBe(true);
    expect(r.ruleSets).toEqual([
      { id: 'ubl-2.1', version: '2.1', outcome: 'passed' },
      { id: 'peppol-cen-en16931-ubl', version: '2026.5', outcome: 'passed', engine: 'compiled' },
      { id: 'peppol-bis3-ubl', version: '2026.5', outcome: 'passed', engine: 'compiled' },
    ]);
  });

  it.each([
    [
      'TaxInclusiveAmount',
      /<cbc:TaxInclusiveAmount currencyID="DKK">782179.43</,
      '<cbc:TaxInclusiveAmount currencyID="DKK">7.8217943E5<',
      '7.8217943E5',
    ],
    [
      'PriceAmount',
      /<cbc:PriceAmount currencyID="DKK">625743.54</,
      '<cbc:PriceAmount currencyID="DKK">6.2574354e+5<',
      '6.2574354e+5',
    ],
    [
      'LineExtensionAmount',
      /<cbc:LineExtensionAmount currencyID="DKK">625743.54</,
      '<cbc:LineExtensionAmount currencyID="DKK">1E3<',
      '1E3',
    ],
  ])(
    'amount in scientific notation in %s → Invalid payload, not a valid xs:decimal (SV)',
    async (element, find, replace, value) => {
      const r = await validate(edit(BIS3, find, replace));
      expect(r.isValid).toBe(false);
      const [a, ...rest] = errors(r);
      expect(rest).toEqual([]);
      expect(a).toMatchObject({
        artifact: 'schema',
        flag: 'error',
        reasonCode: 'SV',
        ruleId: 'XSD-DECIMAL-NOTATION',
        ruleSet: 'ubl-2.1',
      });
      expect(a!.text).toContain(`Invalid payload: '${value}' in cbc:${element} is not a valid xs:decimal`);
      expect(a!.location).toMatch(new RegExp(`^/Invoice/.*cbc:${element}$`));
      // The business rules assume schema-valid amounts; they are reported as not run rather than crashing on a cast.
      expect(r.ruleSets.map((s) => s.outcome)).toEqual(['failed', 'not-run', 'not-run']);
    },
  );

  it('empty PriceAmount → the empty string is not a valid Decimal value (SV)', async () => {
    const r = await validate(
      edit(BIS3, /<cbc:PriceAmount currencyID="DKK">625743.54</, '<cbc:PriceAmount currencyID="DKK"><'),
    );
    const [a, ...rest] = errors(r);
    expect(rest).toEqual([]);
    expect(a).toMatchObject({
      reasonCode: 'SV',
      ruleId: 'XSD-DECIMAL-EMPTY',
      location: '/Invoice/cac:InvoiceLine/cac:Price/cbc:PriceAmount',
    });
    expect(a!.text).toContain(
      'The empty string is not a valid Decimal value: cbc:PriceAmount must hold a decimal number',
    );
  });

  it('missing seller EndpointID → PEPPOL-EN16931-R020 (BV)', async () => {
    const r = await validate(edit(BIS3, '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>', ''));
    expect(r.isValid).toBe(false);
    expect(errors(r).map((a) => [a.ruleId, a.reasonCode, a.location])).toEqual([
      ['PEPPOL-EN16931-R020', 'BV', '/ubl:Invoice[1]/cac:AccountingSupplierParty[1]/cac:Party[1]'],
    ]);
  });

  it('missing buyer EndpointID → PEPPOL-EN16931-R010 (BV)', async () => {
    const r = await validate(edit(BIS3, '<cbc:EndpointID schemeID="0184">DK87654321</cbc:EndpointID>', ''));
    expect(errors(r).map((a) => a.ruleId)).toEqual(['PEPPOL-EN16931-R010']);
  });

  it('EndpointID without a scheme → BR-62 (BV)', async () => {
    const r = await validate(
      edit(
        BIS3,
        '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>',
        '<cbc:EndpointID>DK12345678</cbc:EndpointID>',
      ),
    );
    expect(errors(r).map((a) => a.ruleId)).toContain('BR-62');
    expect(errors(r).every((a) => a.reasonCode === 'BV')).toBe(true);
  });

  it('EndpointID with an unknown scheme → Peppol EAS code list rule (BV)', async () => {
    const r = await validate(
      edit(
        BIS3,
        '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>',
        '<cbc:EndpointID schemeID="9999">DK12345678</cbc:EndpointID>',
      ),
    );
    const ids = errors(r).map((a) => a.ruleId);
    expect(ids).toContain('PEPPOL-EN16931-CL008');
  });

  it('GLN EndpointID with a wrong check digit → PEPPOL-COMMON-R040 (BV)', async () => {
    const r = await validate(
      edit(
        BIS3,
        '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>',
        '<cbc:EndpointID schemeID="0088">5790000435952</cbc:EndpointID>',
      ),
    );
    expect(errors(r).map((a) => a.ruleId)).toEqual(['PEPPOL-COMMON-R040']);
    const ok = await validate(
      edit(
        BIS3,
        '<cbc:EndpointID schemeID="0184">DK12345678</cbc:EndpointID>',
        '<cbc:EndpointID schemeID="0088">5790000435944</cbc:EndpointID>',
      ),
    );
    expect(errors(ok)).toEqual([]);
  });

  it('more than one OrderReference under BIS 3 → refused with the reason (SV)', async () => {
    const twice = edit(
      BIS3,
      /(<cac:OrderReference>[\s\S]*?<\/cac:OrderReference>)/,
      '$1\n  <cac:OrderReference><cbc:ID>PO-2</cbc:ID></cac:OrderReference>',
    );
    const r = await validate(twice);
    const [a, ...rest] = errors(r);
    expect(rest).toEqual([]);
    expect(a).toMatchObject({
      reasonCode: 'SV',
      ruleId: 'XSD-ORDER-REFERENCE',
      location: '/Invoice/cac:OrderReference[2]',
    });
    expect(a!.text).toContain('At most one OrderReference per invoice');
  });

  it('SI-UBL 1.2 is refused, naming NLCIUS and BIS Billing 3 (every sample)', async () => {
    const dir = path.join(CORPUS_DIR, 'nlcius', 'si-ubl-1.2-rejected');
    const files = readdirSync(dir).filter((f) => f.endsWith('.xml'));
    expect(files.length).toBe(20);
    for (const f of files) {
      let err: unknown;
      try {
        await validator().validate(corpusFile(`nlcius/si-ubl-1.2-rejected/${f}`));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe('UNKNOWN_FORMAT');
      expect((err as GatewayError).status).toBe(400);
      expect((err as GatewayError).message).toMatch(/SI-UBL 1\.2.*NLCIUS.*BIS Billing 3\.0/s);
    }
  });
});

describe('schema engine corrections', () => {
  beforeAll(() => requirePacks(['ubl-2.1']));

  it(
    'accepts dates surrounded by whitespace in the schema, as XSD collapse requires (Peppol itself forbids ' + 'them)',
    async () => {
      const spaced = edit(
        edit(BIS3, /<cbc:IssueDate>([^<]*)</, '<cbc:IssueDate>\n   $1  <'),
        /<cbc:DueDate>([^<]*)</,
        '<cbc:DueDate> $1<',
      );
      const r = await validate(spaced);
      expect(r.ruleSets[0]).toEqual({ id: 'ubl-2.1', version: '2.1', outcome: 'passed' });
      expect(errors(r).map((a) => [a.ruleId, a.reasonCode, a.location])).toEqual([
        ['PEPPOL-EN16931-F001', 'BV', '/ubl:Invoice[1]/cbc:IssueDate[1]'],
        ['PEPPOL-EN16931-F001', 'BV', '/ubl:Invoice[1]/cbc:DueDate[1]'],
      ]);
    },
  );

  it('still refuses an impossible date with whitespace around it', async () => {
    const r = await validate(edit(BIS3, /<cbc:IssueDate>[^<]*</, '<cbc:IssueDate> 2017-02-30 <'));
    expect(errors(r).map((a) => [a.reasonCode, a.location])).toEqual([['SV', '/Invoice/cbc:IssueDate']]);
  });

  it('recognises only the whitespace false positive', () => {
    const msg = (v: string, t: string) =>
      `Element '{urn:x}IssueDate': '${v}' is not a valid value of the atomic type 'xs:${t}'.`;
    expect(isCollapsibleDateTimeReport(msg(' 2024-02-29 ', 'date'))).toBe(true);
    expect(isCollapsibleDateTimeReport(msg(' 2023-02-29 ', 'date'))).toBe(false);
    expect(isCollapsibleDateTimeReport(msg('2024-02-29', 'date'))).toBe(false);
    expect(isCollapsibleDateTimeReport(msg(' 12:30:00Z', 'time'))).toBe(true);
    expect(isCollapsibleDateTimeReport(msg(' 25:30:00', 'time'))).toBe(false);
    expect(isCollapsibleDateTimeReport(msg(' 2024-01-01T10:00:00+01:00\n', 'dateTime'))).toBe(true);
    expect(isCollapsibleDateTimeReport(msg(' 2024-01-01 x ', 'date'))).toBe(false);
    expect(
      isCollapsibleDateTimeReport(`Element '{urn:x}A': ' 1 ' is not a valid value of the atomic type 'xs:integer'.`),
    ).toBe(false);
  });
});

describe('status reason codes', () => {
  it('maps artifact and flag to SV / BV / BW', () => {
    expect(reasonCodeOf('schema', 'error')).toBe('SV');
    expect(reasonCodeOf('business-rules', 'error')).toBe('BV');
    expect(reasonCodeOf('business-rules', 'warning')).toBe('BW');
    expect(['fatal', 'error', '', 'FATAL'].map(flagOf)).toEqual(['error', 'error', 'error', 'error']);
    expect(['warning', 'information', 'Warning'].map(flagOf)).toEqual(['warning', 'warning', 'warning']);
  });

  it('reports fatal rules as BV and warnings as BW in one result', async () => {
    requirePacks(['ubl-2.1', 'si-ubl-2.0']);
    const r = await validator().validate(corpusFile('nlcius/si-ubl-2.0.3/SI-UBL-2.0_BR-NL-10_error_empty.xml'));
    expect(r.isValid).toBe(false);
    const byRule = new Map(r.assertions.map((a) => [a.ruleId, a]));
    expect(byRule.get('BR-NL-10')).toMatchObject({ flag: 'error', reasonCode: 'BV', artifact: 'business-rules' });
    const warning = r.assertions.find((a) => a.flag === 'warning');
    expect(warning).toMatchObject({ reasonCode: 'BW', artifact: 'business-rules' });
  });
});
