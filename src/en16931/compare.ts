import { isDecimal, subtract } from './decimal';
import type { Invoice } from './model';
import { canonicalJson } from './xml-read';

/**
 * The part of a model that must survive any UBL ↔ CII conversion unchanged: everything of EN 16931 (the extensions are
 * by definition syntax-specific), with BT-147 made explicit where a gross price (BT-148) stands without it, because UBL
 * cannot write a gross price without a discount amount and the writer derives it (BT-148 − BT-146).
 */
export function comparableCore(inv: Invoice): string {
  const { extensions: _syntaxSpecific, ...core } = JSON.parse(JSON.stringify(inv)) as Invoice;
  const copy = core as Omit<Invoice, 'extensions'>;
  for (const l of copy.lines) {
    const p = l.price;
    if (p.discount === undefined && p.grossPrice !== undefined && p.netPrice !== undefined && isDecimal(p.grossPrice) && isDecimal(p.netPrice)) {
      p.discount = subtract(p.grossPrice, p.netPrice);
    }
  }
  return canonicalJson(copy);
}
