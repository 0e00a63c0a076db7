import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { XMLSerializer } from '@xmldom/xmldom';
import { CORPUS_DIR, SAMPLE_UBL_INVOICE, corpusFile, requireCorpus } from '../../support/corpus';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  peppolParticipant,
  processId,
} from '../../../src/peppol/identifiers';
import { PeppolError } from '../../../src/peppol/peppol-error';
import { buildSbd, parseSbd, parseXsdDateTime, readSbdHeader, type SbdhProblem } from '../../../src/peppol/sbdh';

const SBDH_DIR = path.join(CORPUS_DIR, 'peppol/sbdh');
requireCorpus('peppol/sbdh');
const describeCorpus = describe;

const BIS3_INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
const BIS3_PROCESS = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');

function refusal(fn: () => unknown): PeppolError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected the SBD to be refused');
}

/** Every bad file of the corpus with the reason it must be refused for (peppol-commons names these files by the rule). */
const BAD: Record<string, { reason: string; message: RegExp }> = {
  'bad-no-xml.txt': { reason: 'sbdh:invalid-sbd-xml', message: /not readable XML/ },
  'bad-no-sbdh.xml': { reason: 'sbdh:missing-sbdh', message: /StandardBusinessDocumentHeader is missing/ },
  'bad-invalid-header-version.xml': { reason: 'sbdh:invalid-header-version', message: /HeaderVersion is "1\.5"/ },
  'bad-too-few-senders.xml': { reason: 'sbdh:invalid-sender-count', message: /exactly one Sender, found 0/ },
  'bad-too-many-senders.xml': { reason: 'sbdh:invalid-sender-count', message: /exactly one Sender, found 2/ },
  'bad-invalid-sender-authority.xml': {
    reason: 'sbdh:invalid-sender-authority',
    message: /Authority is "humpty dumpty"/,
  },
  'bad-invalid-sender-value.xml': { reason: 'sbdh:invalid-sender-value', message: /Sender Identifier is empty/ },
  'bad-too-few-receivers.xml': { reason: 'sbdh:invalid-receiver-count', message: /exactly one Receiver, found 0/ },
  'bad-too-many-receivers.xml': { reason: 'sbdh:invalid-receiver-count', message: /exactly one Receiver, found 2/ },
  'bad-invalid-receiver-authority.xml': {
    reason: 'sbdh:invalid-receiver-authority',
    message: /Authority is "foobar2000"/,
  },
  'bad-invalid-receiver-value.xml': { reason: 'sbdh:invalid-receiver-value', message: /Receiver Identifier is empty/ },
  'bad-mls-to-empty.xml': { reason: 'sbdh:invalid-mls-to', message: /MLS_TO scope has no InstanceIdentifier/ },
  'bad-mls-to-invalid-value.xml': {
    reason: 'sbdh:invalid-mls-to',
    message: /MLS_TO "test" is not a valid participant identifier.*4-digit ICD/,
  },
  'bad-mls-to-no-scheme.xml': { reason: 'sbdh:invalid-mls-to', message: /MLS_TO scope Identifier is ""/ },
  'bad-mls-to-no-value.xml': { reason: 'sbdh:invalid-mls-to', message: /MLS_TO scope has no InstanceIdentifier/ },
  'bad-mls-type-empty.xml': { reason: 'sbdh:invalid-mls-type', message: /MLS_TYPE ""/ },
  'bad-mls-type-invalid-value.xml': {
    reason: 'sbdh:invalid-mls-type',
    message: /MLS_TYPE "always_SEND".*case-sensitive/,
  },
  'bad-no-business-scope.xml': { reason: 'sbdh:business-scope-missing', message: /BusinessScope is missing/ },
  'bad-too-few-scopes.xml': { reason: 'sbdh:invalid-scope-count', message: /2 Scope elements, at least 3/ },
  'bad-invalid-document-type-identifier.xml': {
    reason: 'sbdh:invalid-document-type-identifier',
    message: /DOCUMENTID scope: the InstanceIdentifier is empty/,
  },
  'bad-invalid-process-identifier.xml': {
    reason: 'sbdh:invalid-process-identifier',
    message: /PROCESSID scope: the InstanceIdentifier is empty/,
  },
  'bad-no-country-c1.xml': { reason: 'sbdh:missing-country-c1', message: /no COUNTRY_C1 scope/ },
  'bad-no-document-type-identifier.xml': {
    reason: 'sbdh:missing-document-type-identifier',
    message: /no DOCUMENTID scope/,
  },
  'bad-no-process-identifier.xml': { reason: 'sbdh:missing-process-identifier', message: /no PROCESSID scope/ },
  'bad-no-business-message.xml': {
    reason: 'sbdh:missing-business-message',
    message: /business message is text, not an element/,
  },
  'bad-invalid-business-message.xml': {
    reason: 'sbdh:missing-business-message',
    message: /no business message after the StandardBusinessDocumentHeader/,
  },
  'bad-invalid-standard.xml': {
    reason: 'sbdh:invalid-standard',
    message: /Standard "Error" must equal the payload namespace/,
  },
  'bad-invalid-type-version.xml': { reason: 'sbdh:invalid-type-version', message: /TypeVersion "Error"/ },
  'bad-invalid-type.xml': {
    reason: 'sbdh:invalid-type',
    message: /Type "Error" must equal the payload element name "Invoice"/,
  },
  'bad-invalid-instance-identifier.xml': {
    reason: 'sbdh:invalid-instance-identifier',
    message: /InstanceIdentifier is empty/,
  },
  'bad-invalid-creation-date-and-time.xml': {
    reason: 'sbdh:invalid-creation-date-time',
    message: /CreationDateAndTime "" is not an xsd:dateTime/,
  },
};

describeCorpus('parseSbd against the peppol-commons test files', () => {
  const good = readdirSync(path.join(SBDH_DIR, 'good')).sort();
  const bad = readdirSync(path.join(SBDH_DIR, 'bad')).sort();

  it('has an expectation for every bad file and no stale ones', () => {
    expect(Object.keys(BAD).sort()).toEqual(bad);
  });

  it.each(good)('accepts good/%s', (file) => {
    const { header, payload } = parseSbd(corpusFile(`peppol/sbdh/good/${file}`));
    expect(header.sender.scheme).toBe('iso6523-actorid-upis');
    expect(header.receiver.value).toMatch(/^\d{4}:/);
    expect(header.countryC1).toBe('AT');
    expect(header.instanceIdentifier).not.toBe('');
    expect(['xml', 'binary']).toContain(payload.kind);
  });

  it.each(bad)('refuses bad/%s with its specific reason', (file) => {
    const want = BAD[file];
    if (!want) throw new Error(`no expectation for ${file}`);
    const e = refusal(() => parseSbd(corpusFile(`peppol/sbdh/bad/${file}`)));
    expect(e.reason).toBe(want.reason);
    expect(e.message).toMatch(want.message);
    const errors = e.details?.errors as SbdhProblem[];
    expect(`sbdh:${errors[0]?.code}`).toBe(want.reason);
  });

  it('reads every field of good.xml', () => {
    const { header, payload } = parseSbd(corpusFile('peppol/sbdh/good/good.xml'));
    expect(header).toMatchObject({
      sender: { scheme: 'iso6523-actorid-upis', value: '0088:7315458756324' },
      receiver: { scheme: 'iso6523-actorid-upis', value: '0088:4562458856624' },
      // Envelope 1.0 had no scheme on the scopes: the defaults apply.
      documentType: {
        scheme: 'busdox-docid-qns',
        value:
          'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:www.cenbii.eu:transaction:biitrns010:ver2.0:extended:urn:www.peppol.eu:bis:peppol4a:ver2.0::2.1',
      },
      process: { scheme: 'cenbii-procid-ubl', value: 'urn:www.cenbii.eu:profile:bii04:ver1.0' },
      countryC1: 'AT',
      standard: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
      typeVersion: '2.1',
      type: 'Invoice',
      instanceIdentifier: '3739db04-7e4e-4c89-b170-c543dd252249',
      creationDateAndTime: '2013-02-19T05:10:10Z',
      mlsTo: undefined,
      mlsType: 'FAILURE_ONLY',
      mlsTypeExplicit: false,
      additionalAttributes: [],
      warnings: [],
    });
    expect(header.creationTime.toISOString()).toBe('2013-02-19T05:10:10.000Z');
    expect(payload.kind === 'xml' && payload.element.localName).toBe('Invoice');
  });

  it('reads schemes and additional attributes of Envelope 1.1 (good-v11.xml)', () => {
    const { header } = parseSbd(corpusFile('peppol/sbdh/good/good-v11.xml'));
    expect(header.documentType.scheme).toBe('busdox-docid-qns');
    expect(header.process).toEqual({ scheme: 'ptype', value: 'urn:www.cenbii.eu:profile:bii04:ver1.0' });
    expect(header.additionalAttributes).toEqual([
      { name: 'AddAttr1', value: 'Value1' },
      { name: 'AddAttr2', value: null },
      { name: 'AddAttr3', value: null },
    ]);
  });

  it('reads MLS_TO and MLS_TYPE; a non-SPIS MLS_TO is kept with a warning', () => {
    const { header } = parseSbd(corpusFile('peppol/sbdh/good/good-bis3-full.xml'));
    expect(header.mlsTo).toEqual({ scheme: 'iso6523-actorid-upis', value: '9915:test' });
    expect(header.mlsType).toBe('ALWAYS_SEND');
    expect(header.mlsTypeExplicit).toBe(true);
    expect(header.warnings).toEqual([expect.stringMatching(/not a Peppol service provider id/)]);
  });

  it('reads a time zone offset', () => {
    const { header } = parseSbd(corpusFile('peppol/sbdh/good/good-with-timezone.xml'));
    expect(header.creationTime.toISOString()).toBe('2013-02-19T04:10:10.000Z');
  });

  it('reads a non-XML payload (Envelope 1.2 BinaryContent, French Factur-X)', () => {
    const { header, payload } = parseSbd(corpusFile('peppol/sbdh/good/good-hybrid-invoice.xml'));
    expect(header.standard).toBe('urn:peppol:doctype:pdf+xml');
    expect(header.typeVersion).toBe('0');
    if (payload.kind !== 'binary') throw new Error('expected a binary payload');
    expect(payload.mimeType).toBe('application/pdf');
    expect(payload.data.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('reports every problem of a document, not only the first', () => {
    const e = refusal(() => parseSbd(corpusFile('peppol/sbdh/bad/bad-too-few-scopes.xml')));
    expect((e.details?.errors as SbdhProblem[]).map((p) => p.code)).toEqual([
      'invalid-scope-count',
      'missing-country-c1',
    ]);
  });

  it('accepts a missing COUNTRY_C1 only when asked to (old archives)', () => {
    const { header } = parseSbd(corpusFile('peppol/sbdh/bad/bad-no-country-c1.xml'), { requireCountryC1: false });
    expect(header.countryC1).toBeUndefined();
    expect(header.additionalAttributes).toEqual([{ name: 'other', value: 'AT' }]);
  });
});

const SBDH = 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader';

function sbd(
  scopes: string,
  payload = '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>',
  extraHeader = '',
): string {
  return `<StandardBusinessDocument xmlns="${SBDH}"><StandardBusinessDocumentHeader><HeaderVersion>1.0</HeaderVersion>
<Sender><Identifier Authority="iso6523-actorid-upis">0088:1</Identifier></Sender>
<Receiver><Identifier Authority="iso6523-actorid-upis">0088:2</Identifier></Receiver>${extraHeader}
<DocumentIdentification><Standard>urn:oasis:names:specification:ubl:schema:xsd:Invoice-2</Standard><TypeVersion>2.1</TypeVersion>
<InstanceIdentifier>x</InstanceIdentifier><Type>Invoice</Type><CreationDateAndTime>2024-02-29T23:59:59.5+01:00</CreationDateAndTime></DocumentIdentification>
<BusinessScope>${scopes}</BusinessScope></StandardBusinessDocumentHeader>${payload}</StandardBusinessDocument>`;
}
const scope = (type: string, value: string, id?: string): string =>
  `<Scope><Type>${type}</Type><InstanceIdentifier>${value}</InstanceIdentifier>${id ? `<Identifier>${id}</Identifier>` : ''}</Scope>`;
const STD_SCOPES =
  scope('DOCUMENTID', BIS3_INVOICE.value, 'busdox-docid-qns') +
  scope('PROCESSID', BIS3_PROCESS.value) +
  scope('COUNTRY_C1', 'NL');

describe('parseSbd rules beyond the corpus', () => {
  it('reads elements by namespace, whatever the prefix', () => {
    const prefixed = sbd(STD_SCOPES)
      .replace(`xmlns="${SBDH}"`, `xmlns:q="${SBDH}"`)
      .replace(/<(\/?)(?=[A-Z])(?!Invoice)/g, '<$1q:');
    expect(prefixed).toContain('<q:Sender>');
    expect(parseSbd(prefixed).header.countryC1).toBe('NL');
  });

  it('refuses look-alike elements from another namespace', () => {
    const e = refusal(() => parseSbd(sbd(STD_SCOPES).replace(`xmlns="${SBDH}"`, 'xmlns="urn:other"')));
    expect(e.reason).toBe('sbdh:invalid-sbd-xml');
  });

  it('refuses a duplicate DOCUMENTID scope', () => {
    const e = refusal(() => parseSbd(sbd(STD_SCOPES + scope('DOCUMENTID', BIS3_INVOICE.value))));
    expect(e.reason).toBe('sbdh:duplicate-scope');
  });

  it('refuses a busdox document type with a wildcard and an invalid country', () => {
    expect(refusal(() => parseSbd(sbd(STD_SCOPES.replace('billing:3.0::2.1', 'billing:3.0*::2.1')))).reason).toBe(
      'sbdh:invalid-document-type-identifier',
    );
    expect(refusal(() => parseSbd(sbd(STD_SCOPES.replace('>NL<', '>nl<')))).reason).toBe('sbdh:invalid-country-c1');
  });

  it('refuses two business messages, and an element before the header', () => {
    const two = sbd(
      STD_SCOPES,
      '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>',
    );
    expect(refusal(() => parseSbd(two)).reason).toBe('sbdh:invalid-business-message');
    const before = sbd(STD_SCOPES).replace(
      '<StandardBusinessDocumentHeader>',
      '<X xmlns="urn:x"/><StandardBusinessDocumentHeader>',
    );
    expect(refusal(() => parseSbd(before)).reason).toBe('sbdh:invalid-sbd-xml');
  });

  it('refuses an MLS_TO with a participant value outside POLICY 1 and accepts an SPIS one silently', () => {
    expect(
      refusal(() => parseSbd(sbd(STD_SCOPES + scope('MLS_TO', '0242:000 306', 'iso6523-actorid-upis')))).reason,
    ).toBe('sbdh:invalid-mls-to');
    const { header } = parseSbd(sbd(STD_SCOPES + scope('MLS_TO', '0242:000306-MLS.SUFFIX', 'iso6523-actorid-upis')));
    expect(header.mlsTo?.value).toBe('0242:000306-mls.suffix');
    expect(header.warnings).toEqual([]);
  });

  it('refuses unsafe XML as invalid-sbd-xml', () => {
    const e = refusal(() => parseSbd(`<!DOCTYPE x [<!ENTITY a "b">]>${sbd(STD_SCOPES)}`));
    expect(e.reason).toBe('sbdh:invalid-sbd-xml');
    expect(e.code).toBe('BAD_REQUEST');
  });
});

/** What a reader makes of a document: the header, or the refusal's reason and message. */
function outcome(read: () => { header: unknown }): unknown {
  try {
    return { header: read().header };
  } catch (e) {
    if (e instanceof PeppolError) return { reason: e.reason, message: e.message };
    throw e;
  }
}

describe('readSbdHeader (receiving side, no DOM of the business message) agrees with parseSbd', () => {
  const files = existsSync(SBDH_DIR)
    ? ['good', 'bad'].flatMap((d) => readdirSync(path.join(SBDH_DIR, d)).map((f) => `${d}/${f}`))
    : [];
  const sample = sbd(
    STD_SCOPES,
    corpusFile(SAMPLE_UBL_INVOICE)
      .toString('utf8')
      .replace(/^<\?xml[^>]*\?>/, ''),
  );
  const cases: Array<[string, string | Buffer]> = [
    ...files.map((f): [string, Buffer] => [f, corpusFile(`peppol/sbdh/${f}`)]),
    ['UBL invoice payload', sample],
    [
      'prefixed SBDH',
      sbd(STD_SCOPES)
        .replace(`xmlns="${SBDH}"`, `xmlns:q="${SBDH}"`)
        .replace(/<(\/?)(?=[A-Z])(?!Invoice)/g, '<$1q:'),
    ],
    [
      'two business messages',
      sbd(
        STD_SCOPES,
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>',
      ),
    ],
    [
      'element before the header',
      sbd(STD_SCOPES).replace('<StandardBusinessDocumentHeader>', '<X xmlns="urn:x"/><StandardBusinessDocumentHeader>'),
    ],
    ['no business message', sbd(STD_SCOPES, '')],
    ['text instead of a business message', sbd(STD_SCOPES, 'just text')],
    [
      'text beside the business message',
      sbd(STD_SCOPES, 'text<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>'),
    ],
    [
      'payload of another document type',
      sbd(STD_SCOPES, '<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/>'),
    ],
    ['look-alike namespace', sbd(STD_SCOPES).replace(`xmlns="${SBDH}"`, 'xmlns="urn:other"')],
    ['DOCTYPE', `<!DOCTYPE x [<!ENTITY a "b">]>${sbd(STD_SCOPES)}`],
    ['truncated business message', sbd(STD_SCOPES).replace('Invoice-2"/>', 'Invoice-2"><cbc:ID>')],
    [
      'unbound prefix in the business message',
      sbd(STD_SCOPES, '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><x:ID/></Invoice>'),
    ],
    [
      'self-closing header',
      sbd(STD_SCOPES).replace(
        /<StandardBusinessDocumentHeader>[\s\S]*<\/StandardBusinessDocumentHeader>/,
        '<StandardBusinessDocumentHeader/>',
      ),
    ],
  ];

  it('covers the corpus', () => {
    expect(files.length === 0 || files.length > 20).toBe(true);
  });

  it.each(cases)('%s', (_name, doc) => {
    const input = typeof doc === 'string' ? Buffer.from(doc, 'utf8') : doc;
    expect(outcome(() => readSbdHeader(input))).toEqual(outcome(() => parseSbd(input)));
  });
});

describe('parseXsdDateTime', () => {
  it.each([
    ['2013-02-19T05:10:10Z', '2013-02-19T05:10:10.000Z'],
    ['2024-02-29T23:59:59.5+01:00', '2024-02-29T22:59:59.500Z'],
    ['2019-10-18T01:53:29.385+02:00', '2019-10-17T23:53:29.385Z'],
    ['2013-02-19T05:10:10', '2013-02-19T05:10:10.000Z'],
  ])('%s', (s, iso) => expect(parseXsdDateTime(s)?.toISOString()).toBe(iso));
  it.each([
    '',
    '2013-02-19',
    '2023-02-29T00:00:00Z',
    '2013-13-01T00:00:00Z',
    '2013-02-19T05:10:60Z',
    '2013-02-19 05:10:10Z',
    '2013-02-19T05:10:10+15:00',
  ])('refuses %p', (s) => expect(parseXsdDateTime(s)).toBeUndefined());
});

describe('buildSbd', () => {
  const base = {
    sender: peppolParticipant('0088:7315458756324'),
    receiver: peppolParticipant('9915:Helger'),
    documentType: BIS3_INVOICE,
    process: BIS3_PROCESS,
    countryC1: 'NL',
  };

  it('round-trips through parseSbd and keeps the payload characters exactly', () => {
    const invoice = corpusFile(SAMPLE_UBL_INVOICE);
    const built = buildSbd({
      ...base,
      instanceIdentifier: 'a593a0aa-6ff7-48b0-8906-5534fa5212e0',
      creationDateAndTime: new Date('2026-01-29T15:39:03.805Z'),
      mlsTo: peppolParticipant('0242:000306'),
      mlsType: 'ALWAYS_SEND',
      additionalAttributes: [{ name: 'X_ATTR', value: 'v<1>' }],
      payload: { xml: invoice },
    });
    const { header, payload } = parseSbd(built.xml);
    expect(header).toEqual(built.header);
    expect(header).toMatchObject({
      receiver: { value: '9915:helger' },
      standard: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
      type: 'Invoice',
      typeVersion: '2.1',
      creationDateAndTime: '2026-01-29T15:39:03.805Z',
      mlsTo: { value: '0242:000306' },
      mlsType: 'ALWAYS_SEND',
      additionalAttributes: [{ name: 'X_ATTR', value: 'v<1>' }],
    });
    expect(payload.kind).toBe('xml');
    const invoiceText = invoice.toString('utf8').replace(/^\uFEFF?<\?xml[^>]*\?>\s*/, '');
    expect(built.xml.toString('utf8')).toContain(invoiceText.trimEnd());
  });

  it('generates an instance identifier and a creation time when none is given', () => {
    const { header } = buildSbd({
      ...base,
      payload: { xml: '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>' },
    });
    expect(header.instanceIdentifier).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(header.creationTime.getTime() - Date.now())).toBeLessThan(5000);
  });

  it('refuses a payload that does not match the document type', () => {
    const e = refusal(() =>
      buildSbd({
        ...base,
        payload: { xml: '<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/>' },
      }),
    );
    expect(e.reason).toBe('sbdh:invalid-standard');
    expect((e.details?.errors as SbdhProblem[]).map((p) => p.code)).toEqual(['invalid-standard', 'invalid-type']);
  });

  it('refuses a bad country code', () => {
    const e = refusal(() =>
      buildSbd({
        ...base,
        countryC1: 'Netherlands',
        payload: { xml: '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>' },
      }),
    );
    expect(e.reason).toBe('sbdh:invalid-country-c1');
  });

  it('wraps a binary payload in BinaryContent', () => {
    const pdf = Buffer.from('%PDF-1.7 fake');
    const facturX = documentTypeId(
      DOCTYPE_SCHEME_BUSDOX,
      'urn:peppol:doctype:pdf+xml##urn:cen.eu:en16931:2017#conformant#urn:peppol:france:billing:Factur-X:1.0::D22B',
    );
    const built = buildSbd({
      ...base,
      documentType: facturX,
      payload: {
        binary: pdf,
        mimeType: 'application/pdf',
        standard: 'urn:peppol:doctype:pdf+xml',
        type: 'factur-x',
        typeVersion: '0',
      },
    });
    const { header, payload } = parseSbd(built.xml);
    expect(header.type).toBe('factur-x');
    expect(payload.kind === 'binary' && payload.data.equals(pdf)).toBe(true);
  });

  it('escapes markup in text payloads and identifiers', () => {
    const built = buildSbd({
      ...base,
      documentType: documentTypeId(DOCTYPE_SCHEME_BUSDOX, 'urn:x:text##urn:x:a&b::1'),
      payload: { text: 'a < b & "c"', mimeType: 'text/plain', standard: 'urn:x:text', type: 'note', typeVersion: '1' },
    });
    const parsed = parseSbd(built.xml);
    expect(parsed.payload.kind === 'text' && parsed.payload.text).toBe('a < b & "c"');
    expect(parsed.header.documentType.value).toBe('urn:x:text##urn:x:a&b::1');
    expect(new XMLSerializer().serializeToString(parsed.document)).toContain('urn:x:a&amp;b');
  });
});
