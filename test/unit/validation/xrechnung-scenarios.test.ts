import type { Assertion, ValidationResult } from '../../../src/validation';
import { officialSamples, requirePacks, validator } from './support';

/**
 * XRechnung's validation scenarios (KoSIT's validator configuration, reproduced by phive-rules-xrechnung 4.2.3): the
 * same EN 16931 and XRechnung packs run for the standard, the extension and CVD, but each scenario sets the flag of
 * some EN 16931 rules otherwise (src/formats/catalogue.ts, XR_LEVELS). Checked on KoSIT's own 3.0.2 test documents
 * (shipped in phive-rules-xrechnung's test-sources jar on Maven Central, fetched by `rules:fetch --samples`).
 */

const XR = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
const XR_EXTENSION = `${XR}#conformant#urn:xeinkauf.de:kosit:extension:xrechnung_3.0`;
const XR_CVD = `${XR}#compliant#urn:xeinkauf.de:kosit:xrechnung:cvd_0.9`;

const samples = officialSamples('xrechnung-3.0.2');
const sample = (path: string): string => {
  const s = samples.find((x) => x.path === path);
  if (!s) throw new Error(`official sample ${path} missing`);
  return s.xml.toString('utf8');
};
const fired = (r: ValidationResult, ruleId: string): Assertion[] => r.assertions.filter((a) => a.ruleId === ruleId);
const flags = (r: ValidationResult, ruleId: string): string[] =>
  fired(r, ruleId).map((a) => `${a.flag}/${a.reasonCode}`);
const withCustomization = (xml: string, id: string): string =>
  xml.replace(/(<(?:cbc:CustomizationID|ram:ID)>)urn:cen\.eu:en16931:2017[^<]*(<)/, `$1${id}$2`);

beforeAll(() => requirePacks(['ubl-2.1', 'cii-d16b', 'en16931-ubl', 'en16931-cii', 'xrechnung-ubl', 'xrechnung-cii']));

describe('KoSIT XRechnung 3.0.2 test documents', () => {
  it('are all there: standard UBL and CII, and the extension in both syntaxes', () => {
    const folders = new Map<string, number>();
    for (const s of samples) folders.set(s.path.split('/')[0]!, (folders.get(s.path.split('/')[0]!) ?? 0) + 1);
    expect(Object.fromEntries(folders)).toEqual({ cii: 33, 'cii-ext': 1, 'ubl-inv': 33, 'ubl-inv-ext': 5 });
  });

  it.each(samples.map((s) => [s.path, s.xml] as const))('%s is valid in its own scenario', async (path, xml) => {
    const r = await validator().validate(xml);
    const expected = path.startsWith('cii-ext/')
      ? 'xrechnung-extension-cii'
      : path.startsWith('cii/')
        ? 'xrechnung-cii'
        : path.startsWith('ubl-inv-ext/')
          ? 'xrechnung-extension-ubl-invoice'
          : 'xrechnung-ubl-invoice';
    expect(r.format.id).toBe(expected);
    expect(r.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(r.isValid).toBe(true);
  });
});

describe('the extension scenario', () => {
  it('accepts a third-party payment (BG-DEX-09): BR-CO-16 and UBL-CR-470 are warnings there', async () => {
    const xml = sample('ubl-inv-ext/05.01a-INVOICE_ubl.xml');
    const r = await validator().validate(xml);
    expect(r.format.customizationId).toBe(XR_EXTENSION);
    expect(r.isValid).toBe(true);
    expect(flags(r, 'BR-CO-16')).toEqual(['warning/BW']);
    expect(flags(r, 'UBL-CR-470')).toEqual(['warning/BW']);
    // The EN 16931 pack as published (an explicit rule set) still fails it: the level is the scenario's.
    const raw = await validator().validate(xml, { ruleSet: 'ubl-2.1,en16931-ubl' });
    expect(raw.isValid).toBe(false);
    expect(flags(raw, 'BR-CO-16')).toEqual(['error/BV']);
    // Declared as a standard XRechnung, the same document is judged by the standard scenario and fails.
    const standard = await validator().validate(withCustomization(xml, XR));
    expect(standard.format.id).toBe('xrechnung-ubl-invoice');
    expect(standard.isValid).toBe(false);
    expect(flags(standard, 'BR-CO-16')).toEqual(['error/BV']);
  });

  it("accepts the extension's identifier schemes (BR-CL-10, BR-CL-21 warnings) in CII", async () => {
    const xml = sample('cii-ext/04.05a-INVOICE_uncefact.xml');
    const r = await validator().validate(xml);
    expect(r.isValid).toBe(true);
    expect(new Set(flags(r, 'BR-CL-10'))).toEqual(new Set(['warning/BW']));
    expect(flags(r, 'BR-CL-21')).toEqual(['warning/BW']);
    const standard = await validator().validate(withCustomization(xml, XR));
    expect(standard.format.id).toBe('xrechnung-cii');
    expect(standard.isValid).toBe(false);
    expect(new Set(flags(standard, 'BR-CL-10'))).toEqual(new Set(['error/BV']));
    // BR-CL-21 is a warning in every XRechnung scenario.
    expect(flags(standard, 'BR-CL-21')).toEqual(['warning/BW']);
  });
});

describe('the CVD scenario (Clean Vehicles Directive)', () => {
  /** KoSIT's 01.01a made a CVD invoice: contract and originator references, one line classified as a clean vehicle. */
  const cvd = (customizationId: string): string =>
    withCustomization(sample('ubl-inv/01.01a-INVOICE_ubl.xml'), customizationId)
      .replace(
        '<cac:AccountingSupplierParty>',
        '<cac:OriginatorDocumentReference><cbc:ID>TENDER-1</cbc:ID></cac:OriginatorDocumentReference>' +
          '<cac:ContractDocumentReference><cbc:ID>CONTRACT-1</cbc:ID></cac:ContractDocumentReference>' +
          '<cac:AccountingSupplierParty>',
      )
      .replace(
        '<cbc:ItemClassificationCode listID="IB">0721-880X</cbc:ItemClassificationCode>',
        '<cbc:ItemClassificationCode listID="CVD">M1</cbc:ItemClassificationCode>',
      )
      .replace(
        /(<cac:ClassifiedTaxCategory>[\s\S]*?<\/cac:ClassifiedTaxCategory>)(\s*<\/cac:Item>)/,
        '$1<cac:AdditionalItemProperty><cbc:Name>cva</cbc:Name><cbc:Value>clean</cbc:Value>' +
          '</cac:AdditionalItemProperty>$2',
      );

  it('accepts the CVD classification scheme: BR-CL-13 is a warning, BR-TMP-CVD-01 decides', async () => {
    const r = await validator().validate(cvd(XR_CVD));
    expect(r.format.id).toBe('xrechnung-cvd-ubl-invoice');
    expect(r.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    expect(flags(r, 'BR-CL-13')).toEqual(['warning/BW']);
    expect(r.isValid).toBe(true);
  });

  it('still applies the CVD rules: a vehicle category outside M1–N3 fails BR-TMP-CVD-01', async () => {
    const r = await validator().validate(cvd(XR_CVD).replace('listID="CVD">M1<', 'listID="CVD">X9<'));
    expect(r.isValid).toBe(false);
    expect(r.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId)).toContain('BR-DE-CVD-04');
  });

  it('is not the standard scenario: there the CVD scheme fails BR-CL-13', async () => {
    const r = await validator().validate(cvd(XR));
    expect(r.format.id).toBe('xrechnung-ubl-invoice');
    expect(r.isValid).toBe(false);
    expect(flags(r, 'BR-CL-13')).toEqual(['error/BV']);
  });
});

describe('every XRechnung scenario', () => {
  it('reports a unit code outside the CEN list (BR-CL-23) as a warning, EN 16931 as an error', async () => {
    const xml = sample('ubl-inv/01.01a-INVOICE_ubl.xml').replace(/unitCode="XPP"/g, 'unitCode="QQQ"');
    const r = await validator().validate(xml);
    expect(r.isValid).toBe(true);
    expect(new Set(flags(r, 'BR-CL-23'))).toEqual(new Set(['warning/BW']));
    const core = await validator().validate(withCustomization(xml, 'urn:cen.eu:en16931:2017'));
    expect(core.format.id).toBe('en16931-ubl-invoice');
    expect(new Set(flags(core, 'BR-CL-23'))).toEqual(new Set(['error/BV']));
  });
});

describe('retired XRechnung releases (KoSIT test documents of 1.2.2 to 2.3.1)', () => {
  // The release a document declares (its BT-24); the suites' negative cases that blank BT-24 are left out.
  const DECLARED =
    /(?:<cbc:CustomizationID>|<ram:ID>)urn:cen\.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_(\d\.\d)/;
  const retired = ['1.2.2', '2.0.0', '2.0.1', '2.1.1', '2.2.0', '2.3.1'].flatMap((v) =>
    officialSamples(`xrechnung-${v}`).flatMap((s) => {
      const release = DECLARED.exec(s.xml.toString('utf8'))?.[1];
      return release ? [[`${v}/${s.path}`, release, s.xml] as const] : [];
    }),
  );

  it('are there in both syntaxes, the extension included', () => {
    expect(retired.length).toBeGreaterThan(400);
    expect(new Set(retired.map(([, release]) => release))).toEqual(new Set(['1.2', '2.0', '2.1', '2.2', '2.3']));
    expect(retired.some(([p]) => p.includes('cii'))).toBe(true);
    expect(retired.some(([, , xml]) => xml.includes('kosit:extension:xrechnung_2'))).toBe(true);
  });

  it.each(retired)('%s (XRechnung %s) is refused, naming its release and what to send', async (_path, release, xml) => {
    const e = await validator()
      .validate(xml)
      .then(
        () => undefined,
        (err: unknown) => err as { code?: string; message?: string },
      );
    expect(e?.code).toBe('UNKNOWN_FORMAT');
    expect(e?.message).toMatch(new RegExp(`: XRechnung ${release.replace('.', '\\.')} is retired: .*XRechnung 3\\.0`));
  });
});
