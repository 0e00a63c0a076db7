import { add, isDecimal, subtract } from './decimal';
import type { Invoice } from './model';
import { canonicalJson } from './xml-read';

/**
 * The part of a model that must survive any UBL ↔ CII conversion unchanged: everything of EN 16931 (the extensions are
 * by definition syntax-specific), with the values one syntax forces a writer to derive made explicit on both sides:
 * BT-147 = BT-148 − BT-146 (UBL needs a discount amount beside a gross price), BT-148 = BT-146 + BT-147 (CII needs a
 * gross price beside a discount) and BT-110 = Σ BT-117 (UBL needs a total VAT amount). Writers report each such fill.
 * BT-6 equal to BT-5 says nothing beyond BT-5 and CII forbids it (BR-53): it is left out on both sides, with a BT-111
 * that could only repeat BT-110.
 */
export function comparableCore(inv: Invoice): string {
  const { extensions: _syntaxSpecific, ...core } = JSON.parse(JSON.stringify(inv)) as Invoice;
  const copy = core as Omit<Invoice, 'extensions'>;
  for (const l of copy.lines) {
    const p = l.price;
    if (
      p.discount === undefined &&
      p.grossPrice !== undefined &&
      p.netPrice !== undefined &&
      isDecimal(p.grossPrice) &&
      isDecimal(p.netPrice)
    ) {
      p.discount = subtract(p.grossPrice, p.netPrice);
    }
    if (
      p.grossPrice === undefined &&
      p.discount !== undefined &&
      p.netPrice !== undefined &&
      isDecimal(p.discount) &&
      isDecimal(p.netPrice)
    ) {
      p.grossPrice = add(p.netPrice, p.discount);
    }
  }
  if (copy.vatAccountingCurrencyCode !== undefined && copy.vatAccountingCurrencyCode === copy.currencyCode) {
    delete copy.vatAccountingCurrencyCode;
    delete copy.totals.totalVatAmountInAccountingCurrency;
  }
  if (copy.totals.totalVatAmount === undefined && copy.vatBreakdown.length > 0) {
    const parts = copy.vatBreakdown.map((v) => v.taxAmount ?? '0');
    if (parts.every(isDecimal)) copy.totals.totalVatAmount = parts.reduce((a, b) => add(a, b), '0.00');
  }
  return canonicalJson(copy);
}
