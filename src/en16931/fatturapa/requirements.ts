import type { Invoice } from '../model';
import type { Requirement } from '../codec-types';
import {
  BT3_TO_TIPO_DOCUMENTO,
  CATEGORY_TO_NATURA,
  EAS_CODDEST,
  EAS_IPA,
  EAS_PEC,
  ICD_CODICE_FISCALE,
  MEANS_TO_MODALITA,
} from './codes';

/**
 * What a FatturaPA 1.2 invoice needs beyond EN 16931 (mandatory elements of the schema and SdI's checks). Each rule
 * names the FatturaPA field number of the specification ("Specifiche tecniche", e.g. 1.1.4 CodiceDestinatario).
 */
export type FatturaPaRequirement = Requirement;

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';
const vatId = (v: string | undefined): boolean =>
  present(v) && /^[A-Z]{2}[A-Za-z0-9+*.-]{1,28}$/.test(v.replace(/\s+/g, ''));
const isIt = (c: string | undefined): boolean => c === 'IT';

function addressComplete(a: Invoice['seller']['postalAddress']): boolean {
  if (!a || !present(a.line1) || !present(a.city) || !present(a.countryCode)) return false;
  // An Italian address needs its five digit CAP; abroad FatturaPA takes 00000.
  return !isIt(a.countryCode) || (present(a.postCode) && /^\d{5}$/.test(a.postCode));
}

function categories(inv: Invoice): string[] {
  return [
    ...inv.lines.map((l) => l.vat.categoryCode),
    ...inv.vatBreakdown.map((v) => v.categoryCode),
    ...inv.allowanceCharges.map((a) => a.vatCategoryCode),
  ].filter(present);
}

export const FATTURAPA_RULES: FatturaPaRequirement[] = [
  {
    rule: 'FatturaPA 2.1.1.1',
    terms: ['BT-3'],
    message:
      `The invoice type code (BT-3) must be one FatturaPA has a TipoDocumento for ` +
      `(${Object.keys(BT3_TO_TIPO_DOCUMENTO).join(', ')})`,
    holds: (i) => BT3_TO_TIPO_DOCUMENTO[i.typeCode ?? ''] !== undefined,
  },
  {
    rule: 'FatturaPA 2.1.1.4',
    terms: ['BT-1'],
    message:
      'The invoice number (BT-1) must be at most 20 ASCII characters with at least one digit (Numero, BR-IT-010)',
    holds: (i) => present(i.number) && /^[\x20-\x7e]{1,20}$/.test(i.number) && /\d/.test(i.number),
  },
  {
    rule: 'FatturaPA 1.2.1.1',
    terms: ['BT-31'],
    message:
      'The seller VAT identifier (BT-31), with its country prefix, is required: it is the IdFiscaleIVA of ' +
      'CedentePrestatore and the IdTrasmittente',
    holds: (i) => vatId(i.seller.vatIdentifier),
  },
  {
    rule: 'FatturaPA 1.4.1',
    terms: ['BT-48', 'BT-47'],
    message:
      'The buyer needs a VAT identifier (BT-48) or a codice fiscale as legal registration identifier (BT-47 with ' +
      'scheme 0210): IdFiscaleIVA or CodiceFiscale of CessionarioCommittente',
    holds: (i) =>
      vatId(i.buyer.vatIdentifier) ||
      (i.buyer.legalRegistrationIdentifier?.schemeId === ICD_CODICE_FISCALE &&
        /^[A-Z0-9]{11,16}$/.test(i.buyer.legalRegistrationIdentifier.value)),
  },
  {
    rule: 'FatturaPA 1.1.4',
    terms: ['BT-49', 'BT-49-1'],
    message:
      'A buyer in Italy needs its SdI address as buyer electronic address (BT-49): a CodiceDestinatario (scheme ' +
      '0205, 7 characters), an IPA office code (scheme 0201, 6 characters) or a PEC address (scheme 0202)',
    holds: (i) => {
      if (!isIt(i.buyer.postalAddress?.countryCode)) return true;
      const a = i.buyer.electronicAddress;
      if (!a) return false;
      if (a.schemeId === EAS_CODDEST) return /^[A-Z0-9]{7}$/.test(a.value);
      if (a.schemeId === EAS_IPA) return /^[A-Z0-9]{6}$/.test(a.value);
      if (a.schemeId === EAS_PEC || a.schemeId === 'EM') return /^.+@.+\..+$/.test(a.value) && a.value.length <= 256;
      return false;
    },
  },
  {
    rule: 'FatturaPA 1.2.2',
    terms: ['BT-35', 'BT-37', 'BT-38', 'BT-40'],
    message:
      'The seller address (Sede) needs address line 1 (BT-35), city (BT-37), country (BT-40) and, in Italy, a five ' +
      'digit post code (BT-38)',
    holds: (i) => addressComplete(i.seller.postalAddress),
  },
  {
    rule: 'FatturaPA 1.4.2',
    terms: ['BT-50', 'BT-52', 'BT-53', 'BT-55'],
    message:
      'The buyer address (Sede) needs address line 1 (BT-50), city (BT-52), country (BT-55) and, in Italy, a five ' +
      'digit post code (BT-53)',
    holds: (i) => addressComplete(i.buyer.postalAddress),
  },
  {
    rule: 'FatturaPA 2.2.1.14',
    terms: ['BT-118', 'BT-151', 'BT-95', 'BT-102'],
    message:
      `Every VAT category must be one FatturaPA can state (S with its rate, or a Natura for ` +
      `${Object.keys(CATEGORY_TO_NATURA).join(', ')}); L and M are not Italian VAT`,
    holds: (i) => categories(i).every((c) => c === 'S' || CATEGORY_TO_NATURA[c] !== undefined),
  },
  {
    rule: 'FatturaPA 2.2.1.12',
    terms: ['BT-119', 'BT-152', 'BT-96', 'BT-103'],
    message: 'Every VAT rate must be given (AliquotaIVA is mandatory on lines and in the VAT summary)',
    holds: (i) =>
      i.lines.every((l) => present(l.vat.rate)) &&
      i.vatBreakdown.every((v) => present(v.rate)) &&
      i.allowanceCharges.every((a) => present(a.vatRate)),
  },
  {
    rule: 'FatturaPA 2.4.2.2',
    terms: ['BT-81'],
    message:
      `The payment means code (BT-81) must be one FatturaPA has a ModalitaPagamento for ` +
      `(${Object.keys(MEANS_TO_MODALITA).join(', ')})`,
    holds: (i) =>
      !i.paymentInstructions ||
      MEANS_TO_MODALITA[i.paymentInstructions.meansTypeCode ?? ''] !== undefined ||
      (i.paymentInstructions.meansTypeCode === 'ZZZ' && /^MP\d\d\b/.test(i.paymentInstructions.meansText ?? '')),
  },
  {
    rule: 'FatturaPA 2.2.1.1',
    terms: ['BG-25', 'BG-20', 'BG-21'],
    message: 'FatturaPA takes at most 9999 lines (invoice lines plus document level allowances and charges)',
    holds: (i) => i.lines.length + i.allowanceCharges.length <= 9999,
  },
  {
    rule: 'FatturaPA 2.2.1.4',
    terms: ['BT-153'],
    message: 'Every line needs an item name (BT-153): it is the mandatory Descrizione',
    holds: (i) => i.lines.every((l) => present(l.item.name)),
  },
];
