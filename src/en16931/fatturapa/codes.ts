/**
 * Code correspondences between FatturaPA 1.2.x and EN 16931, after the Italian mapping (AgID technical rules,
 * "Regole di mapping", and the CIUS-IT). Where FatturaPA is finer than EN 16931 (TipoDocumento, Natura sub-codes,
 * ModalitaPagamento) the reader keeps the closest EN code and reports the original; the writer picks the code the
 * Italian rules name for the EN value.
 */

/** TipoDocumento → BT-3 (UNTDID 1001). */
export const TIPO_DOCUMENTO_TO_BT3: Readonly<Record<string, string>> = {
  TD01: '380', // fattura
  TD02: '386', // acconto/anticipo su fattura
  TD03: '386', // acconto/anticipo su parcella
  TD04: '381', // nota di credito
  TD05: '383', // nota di debito
  TD06: '380', // parcella
  TD16: '380', // integrazione fattura reverse charge interno
  TD17: '380', // integrazione/autofattura acquisto servizi dall'estero
  TD18: '380', // integrazione acquisto beni intracomunitari
  TD19: '380', // integrazione/autofattura acquisto beni ex art. 17 c.2
  TD20: '389', // autofattura per regolarizzazione
  TD21: '389', // autofattura per splafonamento
  TD22: '380', // estrazione beni da deposito IVA
  TD23: '380', // estrazione beni da deposito IVA con versamento
  TD24: '380', // fattura differita (lettera a)
  TD25: '380', // fattura differita (lettera b)
  TD26: '380', // cessione di beni ammortizzabili e passaggi interni
  TD27: '389', // autoconsumo / cessioni gratuite senza rivalsa
  TD28: '380', // acquisti da San Marino con IVA
};

/** BT-3 → TipoDocumento: the plain document of each EN type. */
export const BT3_TO_TIPO_DOCUMENTO: Readonly<Record<string, string>> = {
  '380': 'TD01',
  '384': 'TD01', // corrected invoice: an ordinary invoice referring to the corrected one (BG-3)
  '386': 'TD02',
  '381': 'TD04',
  '383': 'TD05',
  '389': 'TD01', // self-billed: an ordinary invoice with SoggettoEmittente CC (issued by the buyer)
  '751': 'TD01',
};

export interface NaturaMeaning {
  /** BT-118 / BT-151 */
  category: string;
  /** BT-121 where the VATEX code says exactly what the Natura says */
  vatex?: string;
  /** Short Italian description, used as BT-120 when the document gives no RiferimentoNormativo. */
  text: string;
}

/** Natura (zero-rate VAT nature) → EN 16931 VAT category. */
export const NATURA: Readonly<Record<string, NaturaMeaning>> = {
  N1: { category: 'O', text: 'Escluse ex art. 15 DPR 633/72' },
  N2: { category: 'O', text: 'Non soggette' },
  'N2.1': { category: 'O', text: 'Non soggette ad IVA ai sensi degli artt. da 7 a 7-septies DPR 633/72' },
  'N2.2': { category: 'O', text: 'Non soggette - altri casi' },
  N3: { category: 'Z', text: 'Non imponibili' },
  'N3.1': { category: 'G', vatex: 'VATEX-EU-G', text: 'Non imponibili - esportazioni' },
  'N3.2': { category: 'K', vatex: 'VATEX-EU-IC', text: 'Non imponibili - cessioni intracomunitarie' },
  'N3.3': { category: 'Z', text: 'Non imponibili - cessioni verso San Marino' },
  'N3.4': { category: 'Z', text: "Non imponibili - operazioni assimilate alle cessioni all'esportazione" },
  'N3.5': { category: 'Z', text: "Non imponibili - a seguito di dichiarazioni d'intento" },
  'N3.6': { category: 'Z', text: 'Non imponibili - altre operazioni che non concorrono alla formazione del plafond' },
  N4: { category: 'E', text: 'Esenti' },
  N5: { category: 'E', text: 'Regime del margine / IVA non esposta in fattura' },
  N6: { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile' },
  'N6.1': {
    category: 'AE',
    vatex: 'VATEX-EU-AE',
    text: 'Inversione contabile - cessione di rottami e altri materiali di recupero',
  },
  'N6.2': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - cessione di oro e argento' },
  'N6.3': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - subappalto nel settore edile' },
  'N6.4': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - cessione di fabbricati' },
  'N6.5': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - cessione di telefoni cellulari' },
  'N6.6': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - cessione di prodotti elettronici' },
  'N6.7': {
    category: 'AE',
    vatex: 'VATEX-EU-AE',
    text: 'Inversione contabile - prestazioni comparto edile e settori connessi',
  },
  'N6.8': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - operazioni settore energetico' },
  'N6.9': { category: 'AE', vatex: 'VATEX-EU-AE', text: 'Inversione contabile - altri casi' },
  N7: { category: 'O', text: 'IVA assolta in altro stato UE' },
};

/**
 * EN 16931 VAT category (0 % categories) → Natura. Since 2021 SdI refuses the bare N2, N3 and N6: the sub-code for
 * "other cases" is written where EN 16931 says no more.
 */
export const CATEGORY_TO_NATURA: Readonly<Record<string, string>> = {
  Z: 'N3.6',
  E: 'N4',
  AE: 'N6.9',
  K: 'N3.2',
  G: 'N3.1',
  O: 'N2.2',
};

/** ModalitaPagamento → BT-81 (UNTDID 4461); ZZZ where UNTDID has no equivalent (the Italian name goes to BT-82). */
export const MODALITA_TO_MEANS: Readonly<Record<string, { code: string; text: string }>> = {
  MP01: { code: '10', text: 'contanti' },
  MP02: { code: '20', text: 'assegno' },
  MP03: { code: '23', text: 'assegno circolare' },
  MP04: { code: '10', text: 'contanti presso Tesoreria' },
  MP05: { code: '30', text: 'bonifico' },
  MP06: { code: 'ZZZ', text: 'vaglia cambiario' },
  MP07: { code: 'ZZZ', text: 'bollettino bancario' },
  MP08: { code: '48', text: 'carta di pagamento' },
  MP09: { code: '49', text: 'RID' },
  MP10: { code: '49', text: 'RID utenze' },
  MP11: { code: '49', text: 'RID veloce' },
  MP12: { code: 'ZZZ', text: 'RIBA' },
  MP13: { code: 'ZZZ', text: 'MAV' },
  MP14: { code: 'ZZZ', text: 'quietanza erario' },
  MP15: { code: 'ZZZ', text: 'giroconto su conti di contabilità speciale' },
  MP16: { code: '49', text: 'domiciliazione bancaria' },
  MP17: { code: 'ZZZ', text: 'domiciliazione postale' },
  MP18: { code: 'ZZZ', text: 'bollettino di c/c postale' },
  MP19: { code: '59', text: 'SEPA Direct Debit' },
  MP20: { code: '59', text: 'SEPA Direct Debit CORE' },
  MP21: { code: '59', text: 'SEPA Direct Debit B2B' },
  MP22: { code: '97', text: 'trattenuta su somme già riscosse' },
  MP23: { code: 'ZZZ', text: 'PagoPA' },
};

/** BT-81 → ModalitaPagamento. */
export const MEANS_TO_MODALITA: Readonly<Record<string, string>> = {
  '10': 'MP01',
  '20': 'MP02',
  '23': 'MP03',
  '30': 'MP05',
  '31': 'MP05',
  '42': 'MP05',
  '58': 'MP05',
  '48': 'MP08',
  '54': 'MP08',
  '55': 'MP08',
  '49': 'MP09',
  '59': 'MP19',
  '97': 'MP22',
};

/** FormatoAttachment (free text, usually an extension) ↔ BT-125-1 MIME codes EN 16931 allows. */
export const MIME_BY_FORMAT: Readonly<Record<string, string>> = {
  PDF: 'application/pdf',
  PNG: 'image/png',
  JPG: 'image/jpeg',
  JPEG: 'image/jpeg',
  CSV: 'text/csv',
  XLSX: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ODS: 'application/vnd.oasis.opendocument.spreadsheet',
};
export const FORMAT_BY_MIME: Readonly<Record<string, string>> = {
  'application/pdf': 'PDF',
  'image/png': 'PNG',
  'image/jpeg': 'JPG',
  'text/csv': 'CSV',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'XLSX',
  'application/vnd.oasis.opendocument.spreadsheet': 'ODS',
};

/**
 * UnitaMisura is free text in FatturaPA. Common Italian abbreviations → UN/ECE Rec 20; a value that already looks like
 * a Rec 20 code is taken as is.
 */
export const UNIT_BY_ITALIAN: Readonly<Record<string, string>> = {
  PZ: 'H87',
  PEZZI: 'H87',
  PEZZO: 'H87',
  NR: 'C62',
  'N.': 'C62',
  NUM: 'C62',
  ORE: 'HUR',
  ORA: 'HUR',
  H: 'HUR',
  GG: 'DAY',
  GIORNI: 'DAY',
  KG: 'KGM',
  G: 'GRM',
  LT: 'LTR',
  L: 'LTR',
  M: 'MTR',
  MQ: 'MTK',
  MC: 'MTQ',
  KM: 'KMT',
  KWH: 'KWH',
  MESI: 'MON',
  MESE: 'MON',
};

/** Item identifiers in CodiceArticolo: CodiceTipo values the writer uses (UNTDID 7143 where one fits). */
export const CODICE_TIPO_SELLER = 'SA'; // 7143 SA: supplier's article number
export const CODICE_TIPO_BUYER = 'IN'; // 7143 IN: buyer's item number

/** Electronic address schemes (EAS) that FatturaPA routing (DatiTrasmissione) carries. */
export const EAS_IPA = '0201'; // Codice Univoco Ufficio IPA (public administration, 6 characters)
export const EAS_PEC = '0202'; // Posta Elettronica Certificata
export const EAS_CODDEST = '0205'; // Codice destinatario SdI (7 characters)
export const ICD_CODICE_FISCALE = '0210';
