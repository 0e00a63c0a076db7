import { detectFormat } from '../../../src/formats/detect';
import { extractFromPdf } from '../../../src/formats/facturx/pdf-attachment';
import { PdfCanvas, writeHybridPdf } from '../../../src/formats/facturx/pdf-writer';
import { corpusFile } from '../../support/corpus';
import { requirePacks, validator } from '../validation/support';

jest.setTimeout(180_000);

/**
 * BT-24 spellings real Factur-X 1.0 / ZUGFeRD 2.x producers wrote besides the published identifiers: each is detected
 * as its profile (in a PDF and as bare CII), and the profile's official rules then judge the document.
 */

/** A real Factur-X EN 16931 invoice (Mustang's sample), its XML out of the PDF. */
const EN16931_XML = extractFromPdf(corpusFile('facturx/mustang/EN16931_Einfach.pdf')).xml.toString('utf8');
/** A real Factur-X EXTENDED invoice as bare CII. */
const EXTENDED_XML = corpusFile('facturx/mustang/factur-x-extended.xml').toString('utf8');

function withGuideline(xml: string, id: string): string {
  const re =
    /(<ram:GuidelineSpecifiedDocumentContextParameter>\s*<ram:ID>)[^<]*(<\/ram:ID>\s*<\/ram:GuidelineSpecifiedDocumentContextParameter>)/;
  if (!re.test(xml)) throw new Error('no GuidelineID to replace');
  return xml.replace(re, `$1${id}$2`);
}

function hybrid(xml: string, conformanceLevel: string): Buffer {
  const canvas = new PdfCanvas();
  canvas.addPage().text(50, 780, 'Rechnung');
  return writeHybridPdf(
    canvas,
    {
      filename: 'factur-x.xml',
      bytes: Buffer.from(xml, 'utf8'),
      relationship: 'Alternative',
      description: 'invoice',
      conformanceLevel,
      version: '1.0',
    },
    { title: 'R', author: 'a', subject: 's', creator: 'c', producer: 'p', date: new Date(0) },
  );
}

describe('Factur-X / ZUGFeRD identifier variants', () => {
  it.each([
    ['urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:en16931', 'facturx-en16931', '1.0'],
    ['urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:en16931', 'facturx-en16931', '1.0'],
    ['urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:basic', 'facturx-basic', '1.0'],
    ['urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:extended', 'facturx-extended', '1.0'],
    ['urn:cen.eu:EN16931:2017#compliant#urn:zugferd.de:2p0:basic', 'facturx-basic', '2.0'],
    ['urn:cen.eu:EN16931:2017#conformant#urn:zugferd.de:2p0:extended', 'facturx-extended', '2.0'],
    // The published identifiers, for comparison.
    ['urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic', 'facturx-basic', '1.0'],
    ['urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended', 'facturx-extended', '1.0'],
    ['urn:cen.eu:en16931:2017#conformant#urn:zugferd.de:2p0:extended', 'facturx-extended', '2.0'],
    ['urn:factur-x.eu:1p0:minimum', 'facturx-minimum', '1.0'],
    ['urn:factur-x.eu:1p0:basicwl', 'facturx-basicwl', '1.0'],
    ['urn:zugferd.de:2p0:basicwl', 'facturx-basicwl', '2.0'],
    ['urn:zugferd.de:2p0:minimum', 'facturx-minimum', '2.0'],
  ])('%s → %s %s, in a PDF and as bare CII', (id, format, version) => {
    const xml = withGuideline(EN16931_XML, id);
    expect(detectFormat(hybrid(xml, 'EN 16931'))).toMatchObject({
      id: format,
      version,
      container: 'pdf',
      customizationId: id,
    });
    const bare = detectFormat(Buffer.from(xml, 'utf8'));
    expect(bare).toMatchObject({ id: format, version, customizationId: id });
    expect(bare.container).toBeUndefined();
  });

  it('the ZUGFeRD 2.0 spelling urn:cen.eu:EN16931:2017 is the EN 16931 profile (Factur-X in a PDF)', () => {
    const xml = withGuideline(EN16931_XML, 'urn:cen.eu:EN16931:2017');
    expect(detectFormat(hybrid(xml, 'EN 16931'))).toMatchObject({ id: 'facturx-en16931', version: '2.0' });
    expect(detectFormat(Buffer.from(xml, 'utf8'))).toMatchObject({ id: 'en16931-cii' });
  });

  describe('validated with the profile’s official rules', () => {
    beforeAll(() => requirePacks(['facturx-xsd', 'facturx-en16931', 'facturx-extended']));

    it('a Factur-X 1.0 EN 16931 PDF with the colon-form identifier is judged by the EN 16931 profile rules', async () => {
      const id = 'urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:en16931';
      const r = await validator().validate(hybrid(withGuideline(EN16931_XML, id), 'EN 16931'));
      expect(r.format).toMatchObject({ id: 'facturx-en16931', customizationId: id });
      // The PDF layer (our writer's, conformant) is its own rule set after the XML's.
      expect(r.ruleSets.map((s) => [s.id, s.outcome])).toEqual([
        ['facturx-xsd', 'passed'],
        ['facturx-en16931', 'failed'],
        ['facturx-pdf', 'passed'],
      ]);
      // The current Factur-X rules list the published identifiers only: the one finding is on BT-24 itself.
      expect(r.assertions.filter((a) => a.flag === 'error')).toEqual([
        expect.objectContaining({
          ruleId: 'FX-SCH-A-000026',
          ruleSet: 'facturx-en16931',
          location: expect.stringMatching(/GuidelineSpecifiedDocumentContextParameter\[1\]\/ram:ID\[1\]$/),
        }),
      ]);
    });

    it('an EXTENDED CII with the colon-form identifier runs the EXTENDED rules', async () => {
      const id = 'urn:cen.eu:en16931:2017:compliant:factur-x.eu:1p0:extended';
      const r = await validator().validate(Buffer.from(withGuideline(EXTENDED_XML, id), 'utf8'));
      expect(r.format).toMatchObject({ id: 'facturx-extended', customizationId: id });
      expect(r.ruleSets.map((s) => s.id)).toEqual(['facturx-xsd', 'facturx-extended']);
    });
  });
});
