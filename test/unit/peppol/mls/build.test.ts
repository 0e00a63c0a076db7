import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseXml } from '../../../../src/formats/xml/secure-parser';
import { peppolParticipant } from '../../../../src/peppol/identifiers';
import { MlsError, buildMls, readMls, type MlsBuildInput, type MlsProblem } from '../../../../src/peppol/mls';
import { requireCorpus } from '../../../support/corpus';

const C3 = peppolParticipant('0242:000002');
const C2 = peppolParticipant('0242:000001');
const INSTANCE = '5c3b4f0e-8a1d-4d57-9f0e-2b1f3c4d5e6f';
const AT = new Date('2026-05-04T10:20:30.000Z');
const BASE = { referencedInstanceId: INSTANCE, sender: C3, receiver: C2, issuedAt: AT } as const;

function roundTrip(input: MlsBuildInput): ReturnType<typeof buildMls> {
  const built = buildMls(input);
  const read = readMls(built.xml);
  if (!read.ok) throw new Error(`built MLS refused: ${JSON.stringify(read.problems)}\n${built.xml}`);
  expect(read.mls).toEqual(built.mls);
  return built;
}

function refusal(fn: () => unknown): MlsProblem[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof MlsError) return e.problems;
    throw e;
  }
  throw new Error('expected MlsError');
}

describe('buildMls → readMls', () => {
  it.each(['AP', 'AB'] as const)('%s: a positive MLS with ids, parties, issue date and time, and no issues', (code) => {
    const { xml, mls } = roundTrip({ ...BASE, responseCode: code });
    expect(mls).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      customizationId: 'urn:peppol:edec:mls:1.0',
      profileId: 'urn:peppol:edec:mls',
      issueDate: '2026-05-04',
      issueTime: '10:20:30Z',
      issuedAt: AT,
      sender: C3,
      receiver: C2,
      responseCode: code,
      referencedInstanceId: INSTANCE,
      lines: [],
    });
    expect(xml).toContain('<cbc:EndpointID schemeID="0242">000002</cbc:EndpointID>');
    expect(xml).toContain('<cbc:EndpointID schemeID="0242">000001</cbc:EndpointID>');
    expect(xml).not.toContain('LineResponse');
  });

  it('each build has a fresh UUID unless an id is given', () => {
    const a = buildMls({ ...BASE, responseCode: 'AP' }).mls.id;
    const b = buildMls({ ...BASE, responseCode: 'AP' }).mls.id;
    expect(a).not.toBe(b);
    expect(buildMls({ ...BASE, responseCode: 'AP', id: 'mls-1' }).mls.id).toBe('mls-1');
  });

  it('RE: issues with rule id and location; issues at one location share a LineResponse', () => {
    const loc = '/Invoice/cac:InvoiceLine[2]/cbc:LineExtensionAmount';
    const { xml, mls } = roundTrip({
      ...BASE,
      responseCode: 'RE',
      description: 'Rejected: 3 rule violations',
      lines: [
        {
          reasonCode: 'BV',
          ruleId: 'BR-CO-10',
          description: 'Sum of line amounts must equal the total',
          location: loc,
        },
        { reasonCode: 'SV', description: 'cvc-complex-type.2.4.a: unexpected element cbc:Foo' },
        { reasonCode: 'BW', ruleId: 'PEPPOL-EN16931-R006', description: 'Only one attachment', location: loc },
        { reasonCode: 'FD', description: 'The receiver could not be reached' },
      ],
    });
    expect(mls.description).toBe('Rejected: 3 rule violations');
    expect(mls.lines).toEqual([
      {
        location: loc,
        reasonCode: 'BV',
        description: '[BR-CO-10] Sum of line amounts must equal the total',
        ruleId: 'BR-CO-10',
      },
      {
        location: loc,
        reasonCode: 'BW',
        description: '[PEPPOL-EN16931-R006] Only one attachment',
        ruleId: 'PEPPOL-EN16931-R006',
      },
      { location: 'NA', reasonCode: 'SV', description: 'cvc-complex-type.2.4.a: unexpected element cbc:Foo' },
      { location: 'NA', reasonCode: 'FD', description: 'The receiver could not be reached' },
    ]);
    expect(xml.match(/<cac:LineResponse>/g)).toHaveLength(2);
  });

  it('writes the element order of the UBL ApplicationResponse, in its namespaces', () => {
    const { xml } = buildMls({
      ...BASE,
      responseCode: 'RE',
      description: 'd',
      lines: [{ reasonCode: 'BV', description: 'x' }],
    });
    const root = parseXml(xml).documentElement;
    expect(root?.namespaceURI).toBe('urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2');
    const names: string[] = [];
    for (let c = root?.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) names.push(c.nodeName);
    expect(names).toEqual([
      'cbc:CustomizationID',
      'cbc:ProfileID',
      'cbc:ID',
      'cbc:IssueDate',
      'cbc:IssueTime',
      'cac:SenderParty',
      'cac:ReceiverParty',
      'cac:DocumentResponse',
    ]);
    expect(xml).toMatch(
      new RegExp(
        [
          '<cac:DocumentResponse>',
          '<cac:Response>',
          '<cbc:ResponseCode>RE</cbc:ResponseCode>',
          '<cbc:Description>d</cbc:Description>',
          '</cac:Response>',
          '<cac:DocumentReference>',
        ].join('\\s*'),
      ),
    );
  });

  it('escapes markup and drops characters XML cannot carry', () => {
    const { xml, mls } = roundTrip({
      ...BASE,
      responseCode: 'RE',
      description: 'a < b & "c" \u0001',
      lines: [{ reasonCode: 'BV', description: '<script>&amp;\u0007', location: "/a[@b='<']" }],
    });
    expect(mls.description).toBe('a < b & "c"');
    expect(mls.lines[0]).toMatchObject({ description: '<script>&amp;', location: "/a[@b='<']" });
    expect(xml).toContain('a &lt; b &amp; "c"');
  });

  it('keeps the use case of a service provider id', () => {
    const { mls } = roundTrip({ ...BASE, responseCode: 'AB', receiver: peppolParticipant('0242:000001-MLS.ANYTHING') });
    expect(mls.receiver.value).toBe('0242:000001-mls.anything');
  });

  it('a built MLS is accepted in the place of a corpus example (same reading as the AP example)', () => {
    const example = readMls(
      readFileSync(path.join(requireCorpus('peppol/mls'), 'good/MessageLevelStatus_Example_AP.xml')),
    );
    if (!example.ok) throw new Error('corpus example refused');
    const { mls } = roundTrip({
      responseCode: 'AP',
      referencedInstanceId: example.mls.referencedInstanceId,
      sender: example.mls.sender,
      receiver: example.mls.receiver,
      issuedAt: example.mls.issuedAt,
      id: example.mls.id,
    });
    expect(mls).toEqual(example.mls);
  });
});

describe('buildMls refuses input that would break an MLS rule', () => {
  it.each<[string, Partial<MlsBuildInput>, string[]]>([
    [
      'RE without description',
      { responseCode: 'RE', lines: [{ reasonCode: 'BV', description: 'x' }] },
      ['SCH-MLS-20', 'SCH-MLS-21'],
    ],
    [
      'RE with a blank description',
      { responseCode: 'RE', description: '  ', lines: [{ reasonCode: 'BV', description: 'x' }] },
      ['SCH-MLS-21'],
    ],
    ['RE without issues', { responseCode: 'RE', description: 'no' }, ['SCH-MLS-23', 'SCH-MLS-24']],
    [
      'RE with warnings only',
      { responseCode: 'RE', description: 'no', lines: [{ reasonCode: 'BW', description: 'w' }] },
      ['SCH-MLS-24'],
    ],
    ['AP with a failure', { responseCode: 'AP', lines: [{ reasonCode: 'FD', description: 'x' }] }, ['SCH-MLS-25']],
    [
      'an issue without description',
      { responseCode: 'AB', lines: [{ reasonCode: 'BW', description: ' ' }] },
      ['SCH-MLS-29'],
    ],
    ['an unknown response code', { responseCode: 'XX' as 'AP' }, ['SCH-MLS-19']],
    [
      'an unknown reason code',
      { responseCode: 'RE', description: 'd', lines: [{ reasonCode: 'ZZ' as 'BV', description: 'x' }] },
      ['SCH-MLS-24', 'SCH-MLS-31'],
    ],
    ['an empty reference', { responseCode: 'AP', referencedInstanceId: ' ' }, ['SCH-MLS-26']],
    ['an empty id', { responseCode: 'AP', id: '' }, ['SCH-MLS-03']],
    [
      'a sender that is not a service provider id',
      { responseCode: 'AP', sender: peppolParticipant('0088:5790000435975') },
      ['MLS-SPIS', 'SCH-MLS-09'],
    ],
    ['an invalid issue time', { responseCode: 'AP', issuedAt: new Date(Number.NaN) }, ['MLS-ISSUE-TIME']],
  ])('%s', (_name, change, rules) => {
    const problems = refusal(() => buildMls({ ...BASE, responseCode: 'AP', ...change }));
    expect(problems.map((p) => p.rule)).toEqual(rules);
  });

  it('the error is a 400 naming the first broken rule, with every problem in its details', () => {
    try {
      buildMls({ ...BASE, responseCode: 'RE' });
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(MlsError);
      const err = e as MlsError;
      expect(err.status).toBe(400);
      expect(err.message).toMatch(
        /^Invalid MLS: \[SCH-MLS-20\] a negative MLS \(RE\) needs a Description \(and 3 more\)$/,
      );
      expect(err.details).toMatchObject({ reason: 'mls:SCH-MLS-20', problems: err.problems });
    }
  });
});

describe('readMls: what the Schematron leaves to the schema and the parser', () => {
  const template = (): string => readFileSync(path.join(requireCorpus('peppol/mls'), 'bad/mls-template.xml'), 'utf8');
  const rules = (xml: string): string[] => {
    const r = readMls(xml);
    if (r.ok) throw new Error('expected a refusal');
    return r.problems.map((p) => p.rule);
  };

  it('refuses what is not XML, and a DOCTYPE, without throwing', () => {
    expect(rules('not xml')).toEqual(['MLS-XML']);
    expect(rules('<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>')).toEqual(['MLS-XML']);
  });

  it('refuses another root element, and an ApplicationResponse outside the UBL namespace', () => {
    expect(rules('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>')).toEqual(['MLS-ROOT']);
    expect(rules(template().replace('ApplicationResponse-2"', 'ApplicationResponse-3"'))).toEqual(['MLS-ROOT']);
  });

  it('refuses a date or time that only looks right', () => {
    expect(rules(template().replace('2025-03-11', '2025-02-30'))).toEqual(['MLS-ISSUE-DATE']);
    expect(rules(template().replace('12:00:00Z', '25:00:00Z'))).toEqual(['MLS-ISSUE-TIME']);
    expect(rules(template().replace('12:00:00Z', 'noon Z'))).toEqual(['MLS-ISSUE-TIME']);
  });

  it('refuses an element the schema allows once that occurs twice', () => {
    const twice = template().replace(
      '<cbc:ID>MLS-ID123</cbc:ID>',
      '<cbc:ID>MLS-ID123</cbc:ID><cbc:ID>MLS-ID124</cbc:ID>',
    );
    expect(rules(twice)).toEqual(['MLS-CARDINALITY']);
  });

  it('refuses an issue without any Response', () => {
    const xml = template().replace(
      '</cac:DocumentReference>',
      '</cac:DocumentReference><cac:LineResponse>' +
        '<cac:LineReference><cbc:LineID>NA</cbc:LineID></cac:LineReference></cac:LineResponse>',
    );
    expect(rules(xml)).toEqual(['MLS-LINE']);
  });

  it('reads elements by namespace, whatever the prefixes', () => {
    const xml = template()
      .replace(/cbc:/g, 'b:')
      .replace(/cac:/g, 'a:')
      .replace('xmlns:cac=', 'xmlns:a=')
      .replace('xmlns:cbc=', 'xmlns:b=');
    expect(xml).toContain('<b:ID>MLS-ID123</b:ID>');
    const r = readMls(xml);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.mls).toMatchObject({ id: 'MLS-ID123', responseCode: 'AB', referencedInstanceId: 'EnvelopeID-12456789' });
  });
});
