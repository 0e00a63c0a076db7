import type { Element } from '@xmldom/xmldom';
import { truncateForEcho, truncateQuoted } from '../core/truncate';
import { displayName } from './locations';
import type { SchemaIssue } from './xsd';

/**
 * Plain-language texts for the schema errors senders hit most (spec 7), in front of the schema engine's own message:
 * amounts in scientific notation, empty decimal fields, and a second OrderReference.
 */

// UBL and CII name data elements after their representation term; these are all xs:decimal based.
const DECIMAL_TERMS = /(Amount|Quantity|Percent|Rate|Measure|Numeric|Percentage)$/;
const NOT_VALID_VALUE = /^Element '[^']+': '([^']*)' is not a valid value of the (?:local )?atomic type(?: '([^']+)')?/;
const SCIENTIFIC = /^\s*[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+\s*$/;

function localNameOf(clark: string | undefined): string {
  if (!clark) return '';
  const m = /\}(.+)$/.exec(clark);
  return m ? (m[1] as string) : clark;
}

function previousElementSibling(el: Element): Element | undefined {
  for (let s = el.previousSibling; s; s = s.previousSibling) if (s.nodeType === 1) return s as Element;
  return undefined;
}

/** Rule id and text for one schema issue; `element` is the offending element when the DOM could place it. */
export function explainSchemaIssue(issue: SchemaIssue, element: Element | undefined): { ruleId: string; text: string } {
  const local = element?.localName ?? localNameOf(issue.element);
  // Both come from the document: quoted bounded, however long the sender made them.
  const name = truncateForEcho(element?.nodeName ?? (issue.element ? displayName(issue.element) : 'the element'));
  const m = NOT_VALID_VALUE.exec(issue.message);
  // libxml2 quotes the document's names and values in single quotes.
  const schemaSays = truncateQuoted(issue.message);
  const decimalType = m !== null && (DECIMAL_TERMS.test(local) || /decimal/i.test(m[2] ?? ''));
  if (m && decimalType) {
    const raw = m[1] as string;
    const value = truncateForEcho(raw);
    if (raw.trim() === '') {
      return {
        ruleId: 'XSD-DECIMAL-EMPTY',
        text:
          `The empty string is not a valid Decimal value: ${name} must hold a decimal number (xs:decimal, e.g. ` +
          `12.50). Schema: ${schemaSays}`,
      };
    }
    if (SCIENTIFIC.test(raw)) {
      return {
        ruleId: 'XSD-DECIMAL-NOTATION',
        text:
          `Invalid payload: '${value}' in ${name} is not a valid xs:decimal; scientific notation is not ` +
          `allowed, only fixed decimal notation (e.g. 150.00). Schema: ${schemaSays}`,
      };
    }
    return {
      ruleId: 'XSD-DECIMAL',
      text:
        `'${value}' in ${name} is not a valid xs:decimal (fixed decimal notation, e.g. 150.00). Schema: ` +
        `${schemaSays}`,
    };
  }
  if (
    local === 'OrderReference' &&
    /This element is not expected/.test(issue.message) &&
    element &&
    previousElementSibling(element)?.localName === 'OrderReference'
  ) {
    return {
      ruleId: 'XSD-ORDER-REFERENCE',
      text:
        `At most one OrderReference per invoice (UBL 2.1, Peppol BIS Billing 3.0); invoice more orders with ` +
        `more invoices. Schema: ${schemaSays}`,
    };
  }
  return { ruleId: 'XSD', text: schemaSays };
}
