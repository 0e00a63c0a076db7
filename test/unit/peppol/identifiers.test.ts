import {
  ICD_CODE_LIST_VERSION,
  assertIcdUsable,
  documentTypeId,
  documentTypeParts,
  encodeIdForUrl,
  formatId,
  icdInfo,
  isSpisId,
  parseDocumentTypeId,
  parseParticipantId,
  parseProcessId,
  participantId,
  participantIdEquals,
  peppolParticipant,
  processId,
  selectWildcardDocumentType,
  spidOfSeatId,
} from '../../../src/peppol/identifiers';
import { PeppolError } from '../../../src/peppol/peppol-error';

const INVOICE =
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';

function refusal(fn: () => unknown): PeppolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('participant identifiers', () => {
  it('parses the URI form and lower-cases iso6523 values (they compare case-insensitively)', () => {
    const p = parseParticipantId('iso6523-actorid-upis::0088:123ABC');
    expect(p).toEqual({ scheme: 'iso6523-actorid-upis', value: '0088:123abc' });
    expect(formatId(p)).toBe('iso6523-actorid-upis::0088:123abc');
    expect(participantIdEquals(p, { scheme: 'iso6523-actorid-upis', value: '0088:123AbC' })).toBe(true);
    expect(participantIdEquals(p, peppolParticipant('0088:123abd'))).toBe(false);
  });

  it('percent-encodes for SMP URLs only', () => {
    expect(encodeIdForUrl(peppolParticipant('0088:5060210000007'))).toBe(
      'iso6523-actorid-upis%3A%3A0088%3A5060210000007',
    );
    expect(encodeIdForUrl(documentTypeId('busdox-docid-qns', INVOICE))).toBe(
      'busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1',
    );
  });

  it.each([
    ['iso6523-actorid-upis::', /value is empty/],
    ['iso6523-actorid-upis::test', /4-digit ICD/],
    ['iso6523-actorid-upis::088:123', /4-digit ICD/],
    ['iso6523-actorid-upis::0088:12 3', /POLICY 1/],
    ['iso6523-actorid-upis::0088:ü', /POLICY 1/],
    [`iso6523-actorid-upis::0088:${'a'.repeat(131)}`, /longer than 135/],
    ['iso6523_actorid_upis::0088:1', /form xxx-yyy-zzz/],
    ['0088:123', /expected <scheme>::<value>/],
    [`${'a-b-'.repeat(7)}c::0088:1`, /longer than 25/],
  ])('refuses %s', (uri, message) => {
    const e = refusal(() => parseParticipantId(uri));
    expect(e.reason).toBe('invalid-identifier');
    expect(e.message).toMatch(message);
  });

  it('accepts the longest allowed value and other schemes with printable ASCII', () => {
    expect(peppolParticipant(`0088:${'A'.repeat(130)}`).value).toHaveLength(135);
    expect(participantId('other-actorid-x', 'a:b/c').value).toBe('a:b/c');
  });
});

describe('document type identifiers', () => {
  it('splits busdox-docid-qns values into their parts', () => {
    expect(documentTypeParts(INVOICE)).toEqual({
      syntaxSpecificId: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice',
      rootNamespace: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
      localName: 'Invoice',
      customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      version: '2.1',
    });
    // A non-XML syntax id has no root element part.
    expect(
      documentTypeParts(
        'urn:peppol:doctype:pdf+xml##urn:cen.eu:en16931:2017#conformant#urn:peppol:france:billing:Factur-X:1.0::D22B',
      ),
    ).toEqual({
      syntaxSpecificId: 'urn:peppol:doctype:pdf+xml',
      customizationId: 'urn:cen.eu:en16931:2017#conformant#urn:peppol:france:billing:Factur-X:1.0',
      version: 'D22B',
    });
    expect(documentTypeParts('no-hash::1')).toBeUndefined();
  });

  it('is case-sensitive and kept as given', () => {
    expect(parseDocumentTypeId(`busdox-docid-qns::${INVOICE}`).value).toBe(INVOICE);
  });

  it.each([
    ['busdox-docid-qns::', /value is empty/],
    ['busdox-docid-qns::urn:x::X##c*::1', /only allowed in the customization id with scheme peppol-doctype-wildcard/],
    ['peppol-doctype-wildcard::urn:x::X##c*d*::1', /may only end the customization id/],
    ['busdox-docid-qns::urn:x::X##c d::1', /whitespace/],
    ['busdox-docid-qns::urn:x::X', /does not have the form/],
    [`busdox-docid-qns::urn:x::X##${'c'.repeat(500)}::1`, /longer than 500/],
    ['busdox-docid-qns::urn:x::X##c€::1', /ISO-8859-1/],
  ])('refuses %s', (uri, message) => expect(refusal(() => parseDocumentTypeId(uri)).message).toMatch(message));

  it('accepts other schemes without the Peppol layout rules', () => {
    expect(documentTypeId('x-scheme', 'anything goes').value).toBe('anything goes');
  });
});

describe('peppol-doctype-wildcard best match (PFUOI 4.3)', () => {
  const pint = (custom: string, scheme = 'peppol-doctype-wildcard') =>
    documentTypeId(scheme, `urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##${custom}::1.0`);
  const registered = [
    pint('urn:peppol:pint:billing-1*'),
    pint('urn:peppol:pint:billing-1@jp-1*'),
    pint('urn:peppol:pint:billing-1@jp-1@x-1', 'busdox-docid-qns'),
  ];

  it('prefers an exact match, then the most specific prefix', () => {
    const exact = pint('urn:peppol:pint:billing-1@jp-1*');
    expect(
      selectWildcardDocumentType(
        [...registered, pint('urn:peppol:pint:billing-1@jp-1@sub')],
        pint('urn:peppol:pint:billing-1@jp-1@sub'),
      ),
    ).toEqual(pint('urn:peppol:pint:billing-1@jp-1@sub'));
    expect(selectWildcardDocumentType(registered, pint('urn:peppol:pint:billing-1@jp-1@sub'))).toEqual(exact);
    expect(selectWildcardDocumentType(registered, pint('urn:peppol:pint:billing-1@aunz-1'))).toEqual(
      pint('urn:peppol:pint:billing-1*'),
    );
  });

  it('ignores busdox candidates and finds nothing for other syntaxes', () => {
    expect(selectWildcardDocumentType(registered.slice(2), pint('urn:peppol:pint:billing-1@jp-1@x-1'))).toBeUndefined();
    expect(selectWildcardDocumentType(registered, pint('urn:peppol:other'))).toBeUndefined();
  });
});

describe('process identifiers', () => {
  it('parses and validates', () => {
    expect(parseProcessId('cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0')).toEqual({
      scheme: 'cenbii-procid-ubl',
      value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    });
    expect(refusal(() => processId('cenbii-procid-ubl', 'has space')).message).toMatch(/whitespace/);
    expect(refusal(() => processId('cenbii-procid-ubl', 'x'.repeat(201))).message).toMatch(/longer than 200/);
    expect(refusal(() => processId('bad scheme', 'x')).message).toMatch(/scheme contains whitespace/);
  });
});

describe('ICD code list', () => {
  it(`holds the ${ICD_CODE_LIST_VERSION} snapshot`, () => {
    expect(icdInfo('0088')).toEqual({ icd: '0088', schemeId: 'GLN', country: 'international', state: 'active' });
    expect(icdInfo('9958')?.state).toBe('removed');
    expect(icdInfo('9909')?.state).toBe('deprecated');
    expect(icdInfo('1234')).toBeUndefined();
    const all = Array.from({ length: 10000 }, (_, i) => String(i).padStart(4, '0')).filter((c) => icdInfo(c));
    expect(all).toHaveLength(100);
  });

  it('refuses unknown and removed ICDs for sending, and deprecated ones on request', () => {
    expect(assertIcdUsable(peppolParticipant('0208:0123456789')).schemeId).toBe('BE:EN');
    expect(refusal(() => assertIcdUsable(peppolParticipant('1234:x'))).message).toMatch(/not in the Peppol code list/);
    expect(refusal(() => assertIcdUsable(peppolParticipant('9958:x'))).message).toMatch(/removed/);
    expect(assertIcdUsable(peppolParticipant('9909:x')).state).toBe('deprecated');
    expect(refusal(() => assertIcdUsable(peppolParticipant('9909:x'), { allowDeprecated: false })).message).toMatch(
      /deprecated/,
    );
  });
});

describe('service provider ids', () => {
  it('derives the default SPID from a Seat ID', () => {
    expect(spidOfSeatId('POP000306')).toEqual({ scheme: 'iso6523-actorid-upis', value: '0242:000306' });
    expect(() => spidOfSeatId('POP00306')).toThrow(/not a Peppol Seat ID/);
  });

  it.each([
    ['0242:000306', true],
    ['0242:000306-MLS', true],
    ['0242:000306-USE_CASE.sfx-1', true],
    ['0242:00306', false],
    ['0242:000306-AB', false],
    ['9915:000306', false],
  ])('%s is an SPIS id: %s', (v, yes) => expect(isSpisId(peppolParticipant(v))).toBe(yes));
});
