/**
 * A business document's own number and issue date (UBL `cbc:ID`, `cbc:IssueDate` directly under the root) and its
 * kind, read with one scan of the bytes and no DOM (invoices can be large). What we send is recorded under these, so
 * a received Invoice Response or Order Response finds the document it answers.
 */
import { NS } from '../formats/xml/namespaces';
import { scanXmlInput } from '../formats/xml/secure-parser';
import type { RawAttribute, ScanVisitor } from '../formats/xml/xml-scanner';

export interface BusinessReference {
  kind: 'invoice' | 'order';
  number: string;
  issueDate: string | null;
}

const KINDS: Record<string, BusinessReference['kind']> = {
  [`${NS.ublInvoice}|Invoice`]: 'invoice',
  [`${NS.ublCreditNote}|CreditNote`]: 'invoice',
  [`${NS.ublOrder}|Order`]: 'order',
};

/** The reference of a UBL invoice, credit note or order; null for anything else or one without a number. */
export function readBusinessReference(bytes: Buffer): BusinessReference | null {
  let depth = 0;
  let kind: BusinessReference['kind'] | null = null;
  let capture: 'ID' | 'IssueDate' | null = null;
  let id: string | undefined;
  let issueDate: string | undefined;
  let buffer = '';
  const visitor: ScanVisitor = {
    get wantsText() {
      return capture !== null;
    },
    startElement(_name: string, _attrs: readonly RawAttribute[], _offset: number, ns: string, local: string) {
      depth++;
      if (depth === 1) kind = KINDS[`${ns}|${local}`] ?? null;
      else if (depth === 2 && kind && ns === NS.cbc) {
        if (local === 'ID' && id === undefined) capture = 'ID';
        else if (local === 'IssueDate' && issueDate === undefined) capture = 'IssueDate';
        buffer = '';
      }
    },
    endElement() {
      if (depth === 2 && capture) {
        if (capture === 'ID') id = buffer.trim();
        else issueDate = buffer.trim();
        capture = null;
      }
      depth--;
    },
    text(value: string) {
      if (capture) buffer += value;
    },
  };
  try {
    scanXmlInput(bytes, undefined, visitor);
  } catch {
    return null;
  }
  if (!kind || !id) return null;
  return { kind, number: id, issueDate: issueDate || null };
}
