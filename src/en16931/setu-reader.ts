import type { ReadDocument } from '../formats/xml/read-tree';
import type { Identifier, ReadResult } from './model';
import { readUbl } from './ubl-reader';

/**
 * SETU Invoice 2.x (Dutch staffing) → EN 16931 model. A SETU invoice is an NLCIUS (SI-UBL 2.0) invoice with staffing
 * conventions, so the UBL reader does the work; what is SETU-specific:
 * - hour types are the item name (BT-153) and the work week an item attribute (BT-160/161, "werkweeknummer"): both
 *   EN 16931 terms, carried;
 * - the assignment travels as a supporting document (BG-24, DocumentDescription "Assignment"): carried;
 * - the time card reference per line (cac:InvoiceLine/cac:DocumentReference without type code) and any SETU extension
 *   (ext:UBLExtensions, namespace urn:ns.setu.nl:setu:invoice:extension:v2.0) have no EN 16931 term: `unmapped`;
 * - SETU forbids cbc:EndpointID (rule nl.setu.invoice.businessrule.Party.1) but requires the KVK number
 *   (PartyLegalEntity/CompanyID with scheme): that number, 0106 (KVK) or 0190 (OIN), is also the party's Peppol
 * address,
 *   so it becomes BT-34 / BT-49 (listed in `filled`).
 */

const PEPPOL_ADDRESS_SCHEMES = new Set(['0106', '0190']);

export function readSetu(doc: ReadDocument): ReadResult {
  const read = readUbl(doc);
  const inv = read.invoice;
  const filled: string[] = [];
  const derive = (legal: Identifier | undefined, who: string, term: string): Identifier | undefined => {
    if (!legal || legal.schemeId === undefined || !PEPPOL_ADDRESS_SCHEMES.has(legal.schemeId)) return undefined;
    filled.push(
      `${term} ${who} electronic address = ${legal.schemeId}:${legal.value} (SETU has no EndpointID; the ` +
        `${legal.schemeId === '0106' ? 'KVK' : 'OIN'} number is the Peppol address)`,
    );
    return { value: legal.value, schemeId: legal.schemeId };
  };
  if (!inv.seller.electronicAddress) {
    const e = derive(inv.seller.legalRegistrationIdentifier, 'Seller', 'BT-34');
    if (e) inv.seller.electronicAddress = e;
  }
  if (!inv.buyer.electronicAddress) {
    const e = derive(inv.buyer.legalRegistrationIdentifier, 'Buyer', 'BT-49');
    if (e) inv.buyer.electronicAddress = e;
  }
  return { ...read, filled: [...(read.filled ?? []), ...filled] };
}
