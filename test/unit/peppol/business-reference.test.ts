import { readBusinessReference } from '../../../src/peppol/business-reference';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../../support/corpus';

describe('readBusinessReference', () => {
  it('reads the number and issue date directly under the root, not those of nested references', () => {
    const xml = `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
      xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
      xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
      xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2">
      <ext:UBLExtensions><ext:UBLExtension><cbc:ID>ext</cbc:ID></ext:UBLExtension></ext:UBLExtensions>
      <cbc:CustomizationID>x</cbc:CustomizationID><cbc:ID> INV&amp;1 </cbc:ID><cbc:IssueDate>2026-01-15</cbc:IssueDate>
      <cac:OrderReference><cbc:ID>PO</cbc:ID></cac:OrderReference></Invoice>`;
    expect(readBusinessReference(Buffer.from(xml))).toEqual({
      kind: 'invoice',
      number: 'INV&1',
      issueDate: '2026-01-15',
    });
  });

  it('reads the corpus sample invoice, and nothing from other documents or broken XML', () => {
    expect(readBusinessReference(corpusFile(SAMPLE_UBL_INVOICE))).toMatchObject({ kind: 'invoice' });
    expect(readBusinessReference(Buffer.from('<a><b/></a>'))).toBeNull();
    expect(readBusinessReference(Buffer.from('<Invoice'))).toBeNull();
  });
});
