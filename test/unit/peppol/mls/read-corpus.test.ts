import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readMls } from '../../../../src/peppol/mls';
import { requireCorpus } from '../../../support/corpus';

const MLS_DIR = requireCorpus('peppol/mls');
const GOOD_DIR = path.join(MLS_DIR, 'good');
const BAD_DIR = path.join(MLS_DIR, 'bad');

function read(dir: string, name: string): ReturnType<typeof readMls> {
  return readMls(readFileSync(path.join(dir, name)));
}

function rulesOf(result: ReturnType<typeof readMls>): string[] {
  if (result.ok) throw new Error('expected the MLS to be refused');
  return result.problems.map((p) => p.rule);
}

const r = (...n: number[]): string[] => n.map((i) => `SCH-MLS-${String(i).padStart(2, '0')}`);

/**
 * Each bad file is the template with one defect; peppol-commons names it after the Schematron rule (1.0.1) it breaks.
 * Every rule a Schematron run would report is listed: a missing element is also an empty one, a missing ResponseCode is
 * also not in the code list, and a negative MLS whose only issue has no usable Status has no failure either.
 */
const BAD: Record<string, { rules: string[]; message: RegExp }> = {
  'mls-01a.xml': { rules: r(1), message: /CustomizationID is "urn:peppol:edec:mls:1\.0a"/ },
  'mls-01b.xml': { rules: r(1), message: /CustomizationID is ""/ },
  'mls-02a.xml': { rules: r(2), message: /ProfileID is "urn:peppol:edec:mlsa"/ },
  'mls-02b.xml': { rules: r(2), message: /ProfileID is ""/ },
  'mls-03a.xml': { rules: r(3), message: /no ID/ },
  'mls-03b.xml': { rules: r(3), message: /no ID/ },
  'mls-04a.xml': { rules: r(4), message: /IssueDate "2025-03-11Z" is not a date without time zone/ },
  'mls-04b.xml': { rules: r(4), message: /IssueDate "2025-03-11\+06:00"/ },
  'mls-04c.xml': { rules: r(4), message: /IssueDate "2025-03-11-03:30"/ },
  'mls-05a.xml': { rules: r(5, 6), message: /no IssueTime/ },
  'mls-06a.xml': { rules: r(6), message: /IssueTime "12:00:00" has no time zone/ },
  'mls-07a.xml': { rules: r(7, 8, 9, 10, 11), message: /sender has no EndpointID/ },
  'mls-08a.xml': { rules: r(8, 9), message: /sender EndpointID is empty/ },
  'mls-08b.xml': { rules: r(8, 9), message: /sender EndpointID is empty/ },
  'mls-09a.xml': { rules: r(9), message: /sender EndpointID "123456-" is not a Peppol service provider id/ },
  'mls-09b.xml': { rules: r(9), message: /"1234567"/ },
  'mls-09c.xml': { rules: r(9), message: /"12345"/ },
  'mls-10a.xml': { rules: r(10, 11), message: /sender EndpointID has no schemeID/ },
  'mls-11a.xml': { rules: r(11), message: /sender EndpointID schemeID is "LU:VAT", not the SPIS scheme 0242/ },
  'mls-11b.xml': { rules: r(11), message: /"9999a"/ },
  'mls-11c.xml': { rules: r(11), message: /"a999"/ },
  'mls-11d.xml': { rules: r(11), message: /"0225"/ },
  'mls-12a.xml': { rules: r(12, 13, 14, 15, 16), message: /receiver has no EndpointID/ },
  'mls-13a.xml': { rules: r(13, 14), message: /receiver EndpointID is empty/ },
  'mls-13b.xml': { rules: r(13, 14), message: /receiver EndpointID is empty/ },
  'mls-14a.xml': { rules: r(14), message: /receiver EndpointID "234567-"/ },
  'mls-14b.xml': { rules: r(14), message: /"2345678"/ },
  'mls-14c.xml': { rules: r(14), message: /"23456"/ },
  'mls-15a.xml': { rules: r(15, 16), message: /receiver EndpointID has no schemeID/ },
  'mls-16a.xml': { rules: r(16), message: /receiver EndpointID schemeID is "GLN"/ },
  'mls-16b.xml': { rules: r(16), message: /"9999a"/ },
  'mls-16c.xml': { rules: r(16), message: /"a999"/ },
  'mls-16d.xml': { rules: r(16), message: /"0225"/ },
  'mls-17a.xml': { rules: r(17), message: /exactly one DocumentResponse, found 2/ },
  'mls-17b.xml': { rules: r(17), message: /exactly one DocumentResponse, found 0/ },
  'mls-18a.xml': { rules: r(18, 19), message: /no ResponseCode/ },
  'mls-19a.xml': { rules: r(19), message: /ResponseCode "XZ" is none of AP, AB, RE/ },
  'mls-19b.xml': { rules: r(19), message: /ResponseCode "AB CD"/ },
  'mls-19c.xml': { rules: r(19), message: /ResponseCode ""/ },
  'mls-19d.xml': { rules: r(19), message: /ResponseCode ""/ },
  'mls-20a.xml': { rules: r(20, 21, 23, 24), message: /negative MLS \(RE\) needs a Description/ },
  'mls-21a.xml': { rules: r(21, 23, 24), message: /Description of a negative MLS \(RE\) is empty/ },
  'mls-21b.xml': { rules: r(21, 23, 24), message: /Description of a negative MLS \(RE\) is empty/ },
  'mls-22a.xml': { rules: r(22), message: /exactly one document, found 2 DocumentReference/ },
  'mls-23a.xml': { rules: r(23, 24), message: /needs at least one issue/ },
  'mls-24a.xml': { rules: r(24), message: /needs at least one failure \(BV, FD or SV\)/ },
  'mls-24b.xml': { rules: r(24), message: /needs at least one failure/ },
  'mls-25a.xml': { rules: r(25), message: /positive MLS \(AB\) may not carry failures/ },
  'mls-25b.xml': { rules: r(25), message: /positive MLS \(AB\) may not carry failures/ },
  'mls-26a.xml': { rules: r(26), message: /referenced document id \(SBDH InstanceIdentifier\) is empty/ },
  'mls-26b.xml': { rules: r(26), message: /referenced document id/ },
  'mls-27a.xml': { rules: r(27), message: /issue location \(LineID\) is empty/ },
  'mls-27b.xml': { rules: r(27), message: /LineID/ },
  'mls-27c.xml': { rules: r(27), message: /LineID/ },
  'mls-27d.xml': { rules: r(27), message: /LineID/ },
  'mls-28a.xml': { rules: r(28, 29), message: /issue has no Description/ },
  'mls-28b.xml': { rules: r(28, 29), message: /issue has no Description/ },
  'mls-29a.xml': { rules: r(29), message: /issue Description is empty/ },
  'mls-29b.xml': { rules: r(29), message: /issue Description is empty/ },
  'mls-29c.xml': { rules: r(29), message: /issue Description is empty/ },
  'mls-29d.xml': { rules: r(29), message: /issue Description is empty/ },
  'mls-30a.xml': { rules: r(24, 30), message: /issue has no Status/ },
  'mls-31a.xml': { rules: r(24, 31), message: /StatusReasonCode "XY" is none of BV, BW, FD, SV/ },
  'mls-31b.xml': { rules: r(24, 31), message: /StatusReasonCode "BV BW"/ },
  'mls-31c.xml': { rules: r(24, 31), message: /StatusReasonCode ""/ },
  'mls-31d.xml': { rules: r(24, 31), message: /StatusReasonCode ""/ },
};

describe('MLS corpus: good', () => {
  const files = readdirSync(GOOD_DIR).filter((f) => f.endsWith('.xml'));

  it('has the eight peppol-commons examples', () => {
    expect(files.sort()).toEqual(
      ['AB', 'AB2', 'AB3', 'AP', 'RE', 'RE2', 'RE3', 'RE4'].map((s) => `MessageLevelStatus_Example_${s}.xml`),
    );
  });

  it.each(files)('%s reads clean', (name) => {
    const result = read(GOOD_DIR, name);
    if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.problems)}`);
    expect(result.mls.customizationId).toBe('urn:peppol:edec:mls:1.0');
    expect(result.mls.profileId).toBe('urn:peppol:edec:mls');
    expect(result.mls.id).toBe('MLS-ID123');
    expect(result.mls.referencedInstanceId).toBe('90f14eff-3705-4869-ad3c-caae270a234e');
    expect(result.mls.issueDate).toBe('2025-03-11');
  });

  it('reads the parties as service provider participant ids, use case and suffix included', () => {
    const ap = read(GOOD_DIR, 'MessageLevelStatus_Example_AP.xml');
    const ab3 = read(GOOD_DIR, 'MessageLevelStatus_Example_AB3.xml');
    if (!ap.ok || !ab3.ok) throw new Error('expected both to read');
    expect(ap.mls.sender).toEqual({ scheme: 'iso6523-actorid-upis', value: '0242:123456' });
    expect(ap.mls.receiver).toEqual({ scheme: 'iso6523-actorid-upis', value: '0242:234567' });
    expect(ap.mls.issuedAt.toISOString()).toBe('2025-03-11T12:00:00.000Z');
    expect(ap.mls).toMatchObject({ responseCode: 'AP', lines: [] });
    expect(ap.mls.description).toBeUndefined();
    expect(ab3.mls.sender.value).toBe('0242:123456-mls.anything');
    expect(ab3.mls.receiver.value).toBe('0242:234567-mls.p12345.99');
    expect(ab3.mls.description).toBe('Can have something here as well');
  });

  it('reads the time zone of IssueTime', () => {
    const ab2 = read(GOOD_DIR, 'MessageLevelStatus_Example_AB2.xml');
    if (!ab2.ok) throw new Error('expected AB2 to read');
    expect(ab2.mls.issueTime).toBe('12:00:00+01:00');
    expect(ab2.mls.issuedAt.toISOString()).toBe('2025-03-11T11:00:00.000Z');
  });

  it('reads the issues of a rejection: one per Response, with location, code, description and rule id', () => {
    const xpath = (n: number): string =>
      `/Catalogue/cac:CatalogueLine[${n}]/cac:Item[1]/cac:ClassifiedTaxCategory[1]/cbc:ID[1]`;
    const taxIssue = {
      reasonCode: 'BV',
      description: 'Validation gives error [CL-T77-R002]- Tax categories MUST be coded using UN/ECE 5305 code list',
      ruleId: 'CL-T77-R002',
    };
    const warning = { reasonCode: 'BW', description: 'Something else went wrong - just a warning' };
    const re = read(GOOD_DIR, 'MessageLevelStatus_Example_RE.xml');
    const re2 = read(GOOD_DIR, 'MessageLevelStatus_Example_RE2.xml');
    const re3 = read(GOOD_DIR, 'MessageLevelStatus_Example_RE3.xml');
    const re4 = read(GOOD_DIR, 'MessageLevelStatus_Example_RE4.xml');
    if (!re.ok || !re2.ok || !re3.ok || !re4.ok) throw new Error('expected all RE examples to read');
    expect(re.mls.responseCode).toBe('RE');
    expect(re.mls.description).toBe('Rejected due to validation errors');
    expect(re.mls.lines).toEqual([{ location: xpath(3), ...taxIssue }]);
    expect(re2.mls.lines).toEqual([
      { location: xpath(3), ...taxIssue },
      { location: xpath(3), ...warning },
    ]);
    // RE3 is RE2 with white space around every value: the same MLS after normalize-space.
    expect(re3.mls).toEqual(re2.mls);
    expect(re4.mls.lines).toEqual([
      { location: xpath(3), ...taxIssue },
      { location: xpath(4), ...taxIssue },
    ]);
  });
});

describe('MLS corpus: bad', () => {
  const files = readdirSync(BAD_DIR).filter((f) => /^mls-\d+[a-z]\.xml$/.test(f));

  it('knows every bad file of the corpus', () => {
    expect(files.sort()).toEqual(Object.keys(BAD).sort());
  });

  it('mls-template.xml, the document every bad file changes in one place, reads clean', () => {
    const result = read(BAD_DIR, 'mls-template.xml');
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.mls).toMatchObject({ responseCode: 'AB', referencedInstanceId: 'EnvelopeID-12456789' });
  });

  it.each(Object.entries(BAD))('%s is refused for what it breaks', (name, expected) => {
    const result = read(BAD_DIR, name);
    const rules = rulesOf(result);
    expect(rules).toEqual(expected.rules);
    // The file's number is the rule it was written for.
    const own = `SCH-MLS-${(/^mls-(\d+)/.exec(name) as RegExpExecArray)[1]}`;
    expect(rules).toContain(own);
    if (result.ok) return;
    const problem = result.problems.find((p) => p.rule === own);
    expect(problem?.message).toMatch(expected.message);
    expect(problem?.path).toMatch(/^\/ApplicationResponse/);
  });
});
