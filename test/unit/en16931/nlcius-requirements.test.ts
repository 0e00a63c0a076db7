import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readCii, readUbl } from '../../../src/en16931';
import { NLCIUS_CII_RULES, NLCIUS_RULES } from '../../../src/en16931/cius-requirements';
import { parseXml } from '../../../src/formats';
import { transformDocument } from '../../../src/transform';
import { CORPUS_DIR, corpusFile } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';

jest.setTimeout(180_000);

/**
 * Every NLCIUS target requirement against its rule's own ok / error examples (the SI-UBL 2.0 test set, file names
 * `SI-UBL-2.0_<rule>_<ok|error>_….xml`): the requirement holds on each ok example and fails on each error example, so
 * it encodes the rule's conditions, not a stricter or looser reading.
 */

const DIR = 'nlcius/si-ubl-2.0.3';
const EXAMPLES = readdirSync(path.join(CORPUS_DIR, DIR))
  .map((f) => ({ file: f, m: /^SI-UBL-2\.0_(BR-NL-\d+)_(ok|error)_/.exec(f) }))
  .filter((e) => e.m && NLCIUS_RULES.some((r) => r.rule === e.m![1]))
  .map((e) => ({ file: e.file, rule: e.m![1]!, ok: e.m![2] === 'ok' }))
  // Filed under BR-NL-7, but what the artefact fires on it is BR-NL-8 (381 on an Invoice root); the writers put 381
  // in a CreditNote, so it is no requirement on the model (checked below).
  .filter((e) => e.file !== 'SI-UBL-2.0_BR-NL-7_error_381_invoice.xml');

describe('NLCIUS (UBL) target requirements against the SI-UBL 2.0 rule examples', () => {
  it('has examples for the requirements', () => {
    expect(new Set(EXAMPLES.map((e) => e.rule)).size).toBeGreaterThanOrEqual(8);
  });

  it.each(EXAMPLES.map((e) => [e.file, e] as const))('%s', (_f, e) => {
    const inv = readUbl(parseXml(corpusFile(`${DIR}/${e.file}`))).invoice;
    const req = NLCIUS_RULES.find((r) => r.rule === e.rule)!;
    expect({ rule: e.rule, holds: req.holds(inv) }).toEqual({ rule: e.rule, holds: e.ok });
  });
});

describe('NLCIUS requirements: cases the example set leaves out', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'si-ubl-2.0']));

  it('SI-UBL-2.0_BR-NL-7_error_381_invoice fires BR-NL-8, not BR-NL-7', async () => {
    const r = await validator().validate(corpusFile(`${DIR}/SI-UBL-2.0_BR-NL-7_error_381_invoice.xml`));
    const fired = r.assertions.filter((a) => a.flag === 'error').map((a) => a.ruleId);
    expect(fired).toContain('BR-NL-8');
    expect(fired).not.toContain('BR-NL-7');
  });

  it('BR-NL-11 asks for payment instructions on invoices, not on a credit note (381)', () => {
    const inv = readUbl(parseXml(corpusFile(`${DIR}/SI-UBL-2.0_BR-NL-11_error_no_paymentmeans.xml`))).invoice;
    const req = NLCIUS_RULES.find((r) => r.rule === 'BR-NL-11')!;
    expect(req.holds(inv)).toBe(false);
    expect(req.holds({ ...inv, typeCode: '381' })).toBe(true);
    expect(NLCIUS_CII_RULES.find((r) => r.rule === 'BR-NL-11')!.holds({ ...inv, typeCode: '381' })).toBe(true);
  });
});

describe('BR-NL-10 for a buyer outside the Netherlands', () => {
  beforeAll(() => requirePacks(['ubl-2.1', 'si-ubl-2.0', 'cii-d16b', 'nlcius-cii']));

  const NOT_NL = `${DIR}/SI-UBL-2.0_BR-NL-10_ok_customer_not_nl_no_companyid.xml`;

  it('the UBL example without BT-47 is valid SI-UBL 2.0, and the UBL target does not require BT-47', async () => {
    const r = await validator().validate(corpusFile(NOT_NL));
    expect(r.assertions.filter((a) => a.flag === 'error')).toEqual([]);
    const out = transformDocument(corpusFile(NOT_NL), { targetFormat: 'nlcius-ubl' });
    expect(out.xml).toContain('urn:fdc:nen.nl:nlcius:v1.0');
  });

  it('the official NLCIUS-CII rules require BT-47 for a Dutch seller whatever the buyer’s country; the CII target says so', async () => {
    const inv = readUbl(parseXml(corpusFile(NOT_NL))).invoice;
    const cii = NLCIUS_CII_RULES.find((r) => r.rule === 'BR-NL-10')!;
    expect(cii.holds(inv)).toBe(false);
    // The same content written as NLCIUS CII: the official artefact fires BR-NL-10 on it.
    const asCii = transformDocument(corpusFile(NOT_NL), { targetFormat: 'en16931-cii' }).xml.replace(
      /(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]*/,
      '$1urn:cen.eu:en16931:2017#compliant#urn:fdc:nen.nl:nlcius:v1.0',
    );
    const r = await validator().validate(Buffer.from(asCii, 'utf8'));
    expect(r.format.id).toBe('nlcius-cii');
    expect(r.assertions.filter((a) => a.ruleId === 'BR-NL-10').map((a) => a.flag)).toEqual(['error']);
    // With a buyer legal registration identifier (any scheme, the buyer being outside the Netherlands) it holds.
    inv.buyer.legalRegistrationIdentifier = { value: '12345678', schemeId: '0002' };
    expect(cii.holds(inv)).toBe(true);
  });

  it('the official NLCIUS-CII examples agree with the CII target requirement', () => {
    const ok = readCii(parseXml(corpusFile('nlcius/cii/NLCIUS-CII_ok_example.xml'))).invoice;
    const error = readCii(parseXml(corpusFile('nlcius/cii/NLCIUS-CII_error_BR-NL-10.xml'))).invoice;
    const cii = NLCIUS_CII_RULES.find((r) => r.rule === 'BR-NL-10')!;
    expect([cii.holds(ok), cii.holds(error)]).toEqual([true, false]);
  });
});
