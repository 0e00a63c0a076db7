import type { Invoice } from '../../en16931/model';
import { uuidV5 } from '../../ids/name-uuid';

/**
 * Namespace of the Invoice UUID (TDT-017) of the Peppol ViDA pilot Tax Data Document (rule ID-BDID-01 of the pilot's
 * solution architecture).
 */
export const TDD_INVOICE_UUID_NAMESPACE = 'e0bc4ac8-b025-46e5-a76d-0c893fc3027e';

export interface InvoiceUuidInput {
  /** BT-31 Seller VAT identifier */
  sellerVatIdentifier: string;
  /** BT-3 Invoice type code */
  typeCode: string;
  /** BT-1 Invoice number */
  number: string;
  /** BT-2 Invoice issue date, YYYY-MM-DD */
  issueDate: string;
}

/**
 * The Invoice UUID (TDT-017) of TDD 1.1.0: a version-5 UUID of BT-31, BT-3, BT-1 and BT-2, each trimmed (only leading
 * and trailing white space; inner spaces and case are kept) and joined by one space. The supplier's (C2) and the
 * buyer's (C3) reports of one invoice carry the same value, which is how the tax authorities pair them.
 */
export function tddInvoiceUuid(input: InvoiceUuidInput): string {
  const parts = [input.sellerVatIdentifier, input.typeCode, input.number, input.issueDate].map((p) => p.trim());
  const empty = ['BT-31', 'BT-3', 'BT-1', 'BT-2'].filter((_, k) => parts[k] === '');
  if (empty.length > 0) throw new Error(`Invoice UUID (TDT-017) needs ${empty.join(', ')}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(parts[3]!)) throw new Error(`BT-2 ${parts[3]} is not a YYYY-MM-DD date`);
  return uuidV5(TDD_INVOICE_UUID_NAMESPACE, parts.join(' '));
}

/** TDT-017 of an invoice: from its BT-31, BT-3, BT-1 and BT-2 (missing terms as empty, which derivation refuses). */
export function invoiceUuidOf(inv: Invoice): string {
  return tddInvoiceUuid({
    sellerVatIdentifier: inv.seller.vatIdentifier ?? '',
    typeCode: inv.typeCode ?? '',
    number: inv.number ?? '',
    issueDate: inv.issueDate ?? '',
  });
}
