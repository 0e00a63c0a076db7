import type { Invoice } from '../en16931';

/** One rule a target format's document must meet; unmet, the conversion is refused (422) naming it. */
export interface Requirement {
  /** The rule of the target specification, e.g. BR-DE-15, PEPPOL-EN16931-R003, BR-NL-1. */
  rule: string;
  /** The business terms concerned. */
  terms: string[];
  message: string;
  /** True when the document meets the requirement. */
  holds(inv: Invoice): boolean;
}
