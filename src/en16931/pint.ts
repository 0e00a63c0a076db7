import type { ReadDocument, ReadElement } from '../formats/xml/read-tree';
import type { Invoice, ReadProblem, ReadResult } from './model';
import { readUbl } from './ubl-reader';
import { pathOf } from './xml-read';
import type { DetectedFormat } from '../formats/vocabulary';
import { NS } from '../formats/xml/namespaces';
import type { Requirement } from './codec-types';

/**
 * Peppol PINT (Peppol International Invoicing) ↔ the EN 16931 model. PINT is UBL 2.1 with its own BT-24
 * (`urn:peppol:pint:billing-1@<jurisdiction>-1`) and BT-23 (`urn:peppol:bis:billing`), and it is wider than EN 16931:
 * sales taxes other than VAT (GST in Australia, New Zealand and Singapore, Japanese consumption tax), tax categories
 * outside EN 16931's UNTDID 5305 subset, parties anywhere. So:
 * - PINT → EN 16931 formats only when the content is EN 16931 content: VAT as the tax scheme, EN 16931 VAT categories,
 *   and (outside PINT-EU, whose rules are EN 16931's) seller and buyer in the EU/EEA. Otherwise 422 naming why.
 * - EN 16931 → PINT-EU always (same rules); → PINT A-NZ only for an Australian or New Zealand seller with the
 * identifiers
 *   and tax categories A-NZ requires (requirements below). The other jurisdictions need data EN 16931 does not hold and
 * are
 *   refused in the table.
 */

export const PINT_BILLING_SOURCES = [
  'pint-ubl',
  'pint-eu-ubl',
  'pint-aunz-ubl',
  'pint-jp-ubl',
  'pint-sg-ubl',
  'pint-my-ubl',
  'pint-ae-ubl',
  'pint-om-ubl',
] as const;
export const PINT_SELF_BILLING = [
  'pint-selfbilling-ubl',
  'pint-aunz-selfbilling-ubl',
  'pint-jp-selfbilling-ubl',
  'pint-my-selfbilling-ubl',
  'pint-ae-selfbilling-ubl',
  'pint-jp-nontax-ubl',
] as const;
/** PINT flavours the gateway writes from the EN 16931 model. */
export const PINT_TARGETS = ['pint-eu-ubl', 'pint-aunz-ubl'] as const;

export const PINT_PROCESS = 'urn:peppol:bis:billing';
export const PINT_EU = 'urn:peppol:pint:billing-1@eu-1';
export const PINT_AUNZ = 'urn:peppol:pint:billing-1@aunz-1';

/** EN 16931's VAT category codes (UNTDID 5305 subset of BR-CL-17/18). */
export const EN16931_VAT_CATEGORIES: ReadonlySet<string> = new Set(['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M']);

/** EU member states (ISO 3166; Greece as GR), the EEA states and the code EN 16931 uses for Northern Ireland. */
export const EU_EEA: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'IS',
  'LI',
  'NO',
  'XI',
]);

const elementsByLocal = (doc: ReadDocument, ns: string, local: string): ReadElement[] => {
  const list = doc.getElementsByTagNameNS(ns, local);
  const out: ReadElement[] = [];
  for (let k = 0; k < list.length; k++) {
    const e = list.item(k);
    if (e) out.push(e);
  }
  return out;
};

/**
 * Reads a PINT billing document with the UBL reader, then refuses what EN 16931 cannot hold (as read problems, 422).
 */
export function readPint(doc: ReadDocument, format: DetectedFormat): ReadResult {
  const read = readUbl(doc);
  const problems: ReadProblem[] = [...read.problems];
  // The tax charged is named in the tax categories; PartyTaxScheme may also carry a "TAX" registration (BT-32).
  const charged = (e: ReadElement): boolean =>
    e.parentNode !== null &&
    ['TaxCategory', 'ClassifiedTaxCategory'].includes((e.parentNode as ReadElement).localName ?? '');
  for (const scheme of elementsByLocal(doc, NS.cac, 'TaxScheme').filter(charged)) {
    let idEl: ReadElement | undefined;
    for (let c = scheme.firstChild; c && !idEl; c = c.nextSibling) {
      if (c.nodeType === 1 && (c as ReadElement).localName === 'ID' && (c as ReadElement).namespaceURI === NS.cbc)
        idEl = c as ReadElement;
    }
    const value = (idEl?.textContent ?? '').trim();
    if (idEl && value !== 'VAT') {
      problems.push({
        path: pathOf(idEl),
        term: 'BT-118-1',
        message: `the tax scheme is "${value}"; EN 16931 covers VAT only, so a ${value} invoice is no EN 16931 invoice`,
      });
    }
  }
  const inv = read.invoice;
  const categories = new Set(
    [...inv.vatBreakdown.map((v) => v.categoryCode), ...inv.lines.map((l) => l.vat.categoryCode)].filter(
      (c): c is string => c !== undefined,
    ),
  );
  for (const c of categories) {
    if (!EN16931_VAT_CATEGORIES.has(c)) {
      problems.push({
        path: '/Invoice//cac:TaxCategory/cbc:ID',
        term: 'BT-118',
        message:
          `tax category "${c}" is allowed by PINT but not by EN 16931 (UNTDID 5305 subset S, Z, E, AE, K, G, ` +
          `O, L, M)`,
      });
    }
  }
  if (format.id.replace(/-(invoice|creditnote)$/, '') !== 'pint-eu-ubl') {
    for (const [who, term, code] of [
      ['seller', 'BT-40', inv.seller.postalAddress?.countryCode],
      ['buyer', 'BT-55', inv.buyer.postalAddress?.countryCode],
    ] as const) {
      if (code !== undefined && !EU_EEA.has(code)) {
        problems.push({
          path: who === 'seller' ? '/Invoice/cac:AccountingSupplierParty' : '/Invoice/cac:AccountingCustomerParty',
          term,
          message:
            `the ${who} is in ${code}, outside the EU/EEA: the invoice follows that jurisdiction's tax ` +
            `rules, not EN 16931's`,
        });
      }
    }
  }
  return { ...read, problems };
}

const present = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';
const sellerCountry = (i: Invoice): string | undefined => i.seller.postalAddress?.countryCode;
const AUNZ_CATEGORIES = new Set(['S', 'Z', 'E', 'G', 'O']);
const abn = (v: string | undefined): boolean => v !== undefined && /^\d{11}$/.test(v.replace(/\s+/g, ''));
const sellerAbn = (i: Invoice): boolean =>
  (i.seller.legalRegistrationIdentifier?.schemeId === '0151' && abn(i.seller.legalRegistrationIdentifier.value)) ||
  (i.seller.electronicAddress?.schemeId === '0151' && abn(i.seller.electronicAddress.value));
const sellerNzbn = (i: Invoice): boolean =>
  i.seller.legalRegistrationIdentifier?.schemeId === '0088' || i.seller.electronicAddress?.schemeId === '0088';

/** What PINT A-NZ requires of content coming from an EN 16931 invoice (GST, A-NZ parties, A-NZ categories). */
export const PINT_AUNZ_RULES: Requirement[] = [
  {
    rule: 'PINT-AUNZ jurisdiction',
    terms: ['BT-40'],
    message: 'PINT A-NZ is for a seller in Australia (AU) or New Zealand (NZ)',
    holds: (i) => sellerCountry(i) === 'AU' || sellerCountry(i) === 'NZ',
  },
  {
    rule: 'PINT-AUNZ currency',
    terms: ['BT-5'],
    message: 'the invoice currency (BT-5) must be AUD or NZD for a conversion to PINT A-NZ',
    holds: (i) => i.currencyCode === 'AUD' || i.currencyCode === 'NZD',
  },
  {
    rule: 'aligned-ibrp-sr-AU ABN',
    terms: ['BT-30', 'BT-34'],
    message:
      'an Australian seller must give its ABN (11 digits, scheme 0151) as legal registration identifier (BT-30) or ' +
      'electronic address (BT-34)',
    holds: (i) => sellerCountry(i) !== 'AU' || sellerAbn(i),
  },
  {
    rule: 'aligned-ibrp-sr-NZ NZBN',
    terms: ['BT-30', 'BT-34'],
    message:
      'a New Zealand seller must give its NZBN (scheme 0088) as legal registration identifier (BT-30) or electronic ' +
      'address (BT-34)',
    holds: (i) => sellerCountry(i) !== 'NZ' || sellerNzbn(i),
  },
  {
    rule: 'PINT-AUNZ tax categories',
    terms: ['BT-118', 'BT-151'],
    message:
      'A-NZ GST uses tax categories S, Z, E, G and O only (no reverse charge, intra-community or IGIC/IPSI categories)',
    holds: (i) =>
      [...i.vatBreakdown.map((v) => v.categoryCode), ...i.lines.map((l) => l.vat.categoryCode)].every(
        (c) => c === undefined || AUNZ_CATEGORIES.has(c),
      ),
  },
  {
    rule: 'PINT-AUNZ seller tax identifier',
    terms: ['BT-31'],
    message:
      'a seller charging GST (category S) must give its GST registration (ABN or NZ GST number) as seller tax ' +
      'identifier (BT-31)',
    holds: (i) => !i.vatBreakdown.some((v) => v.categoryCode === 'S') || present(i.seller.vatIdentifier),
  },
];

/**
 * EN 16931 requires an ISO 3166 prefix on VAT identifiers (BR-CO-09); A-NZ tax identifiers are the bare ABN (11 digits)
 * or NZ GST number, so the prefix goes.
 */
export function adaptAunz(inv: Invoice, changed: string[]): void {
  const strip = (v: string | undefined, term: string): string | undefined => {
    const m = v === undefined ? null : /^(AU|NZ)\s*(\d[\d\s-]*)$/.exec(v);
    if (!m || v === undefined) return v;
    const bare = (m[2] as string).replace(/[\s-]/g, '');
    changed.push(`${term} "${v}" → "${bare}" (A-NZ tax identifiers carry no country prefix)`);
    return bare;
  };
  const s = strip(inv.seller.vatIdentifier, 'BT-31 Seller tax identifier');
  if (s !== undefined) inv.seller.vatIdentifier = s;
  const b = strip(inv.buyer.vatIdentifier, 'BT-48 Buyer tax identifier');
  if (b !== undefined) inv.buyer.vatIdentifier = b;
  if (inv.taxRepresentative) {
    const t = strip(inv.taxRepresentative.vatIdentifier, 'BT-63 Tax representative tax identifier');
    if (t !== undefined) inv.taxRepresentative.vatIdentifier = t;
  }
}
