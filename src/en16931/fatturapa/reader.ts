import type { ReadDocument, ReadElement } from '../../formats/xml/read-tree';
import {
  emptyInvoice,
  type DocumentAllowanceCharge,
  type Identifier,
  type InvoiceLine,
  type LineAllowanceCharge,
  type PostalAddress,
  type ReadResult,
  type UnmappedElement,
  type VatBreakdown,
} from '../model';
import { compact, paymentOrNothing, pathOf, ReadContext } from '../xml-read';
import { EN16931 } from '../../formats/vocabulary';
import { NS } from '../../formats/xml/namespaces';
import { add, compare, divide, equal, isNegative, isZero, multiply, negate, round, subtract, sum } from './amounts';
import {
  EAS_CODDEST,
  EAS_IPA,
  EAS_PEC,
  ICD_CODICE_FISCALE,
  MIME_BY_FORMAT,
  MODALITA_TO_MEANS,
  NATURA,
  TIPO_DOCUMENTO_TO_BT3,
  UNIT_BY_ITALIAN,
  CODICE_TIPO_BUYER,
  CODICE_TIPO_SELLER,
} from './codes';

/**
 * FatturaPA 1.2.x (FatturaElettronica, FPA12 / FPR12) → EN 16931 model, after the Italian mapping (codes.ts). One
 * FatturaElettronicaBody is one invoice: a file with several bodies is a batch and is refused. What EN 16931 has no
 * term for (withholding tax, stamp duty, REA registration, transmission data, ...) is listed in `unmapped`; values the
 * model requires that FatturaPA leaves implicit (BT-24, a quantity of one) are listed in `filled`.
 */

const N = ''; // FatturaPA children are unqualified (no elementFormDefault in the schema)

/**
 * Lines FatturaPA marks as discounts / premiums / rebates (SC, PR, AB) or ancillary charges (AC) become BG-20 / BG-21.
 */
const ALLOWANCE_LINE_TYPES = new Set(['SC', 'PR', 'AB']);
const CHARGE_LINE_TYPE = 'AC';

export function readFatturaPa(doc: ReadDocument): ReadResult {
  const root = doc.documentElement;
  if (!root || root.localName !== 'FatturaElettronica' || root.namespaceURI !== NS.fatturaPA12) {
    throw new Error('not a FatturaPA 1.2 FatturaElettronica document');
  }
  const r = new FatturaPaReader(root);
  try {
    return r.read();
  } catch (e) {
    // Arithmetic on a value that is not a decimal: the value was already reported as a problem (422), or is now.
    if (!(e instanceof RangeError)) throw e;
    return r.failed(e.message);
  }
}

class FatturaPaReader {
  private readonly ctx = new ReadContext();
  private readonly inv = emptyInvoice();
  private readonly extraUnmapped: UnmappedElement[] = [];
  private readonly filled: string[] = [];
  /** [NumeroLinea, NumItem] of order references per line, applied once the lines are read (BT-132). */
  private readonly pendingPoLines: Array<[string, string]> = [];

  constructor(private readonly root: ReadElement) {}

  private c(el: ReadElement | undefined, ...names: string[]): ReadElement | undefined {
    return this.ctx.path(el, ...names.map((n) => [N, n] as const));
  }
  private all(el: ReadElement | undefined, name: string): ReadElement[] {
    return el ? this.ctx.children(el, N, name) : [];
  }
  private text(el: ReadElement | undefined, ...names: string[]): string | undefined {
    return this.ctx.take(this.c(el, ...names));
  }
  private problem(el: ReadElement, term: string, message: string): void {
    this.ctx.problems.push({ path: pathOf(el), term, message });
  }
  /** Read, but kept in the unmapped list with a note: the value was interpreted, not carried as it is. */
  private interpreted(el: ReadElement, note: string): void {
    this.extraUnmapped.push({ path: pathOf(el), text: note });
  }

  failed(message: string): ReadResult {
    if (this.ctx.problems.length === 0) this.problem(this.root, 'BG-22', `amounts cannot be computed: ${message}`);
    return { invoice: this.inv, syntax: 'FatturaPA', unmapped: [], problems: this.ctx.problems };
  }

  read(): ReadResult {
    const ctx = this.ctx;
    const inv = this.inv;
    ctx.attr(this.root, 'versione');
    const header = this.c(this.root, 'FatturaElettronicaHeader');
    const bodies = this.all(this.root, 'FatturaElettronicaBody');
    if (bodies.length !== 1) {
      this.problem(
        this.root,
        'BG-25',
        `the file holds ${bodies.length} FatturaElettronicaBody elements; each is an invoice of its own (a batch), ` +
          `and one conversion makes one invoice`,
      );
    }
    const body = bodies[0];
    inv.processControl = { specificationIdentifier: EN16931 };
    this.filled.push(
      `BT-24 Specification identifier = "${EN16931}" (FatturaPA has none; the mapping makes a plain EN 16931 invoice)`,
    );

    this.readTransmission(this.c(header, 'DatiTrasmissione'));
    this.readSeller(this.c(header, 'CedentePrestatore'));
    this.readTaxRepresentative(this.c(header, 'RappresentanteFiscale'));
    this.readBuyer(this.c(header, 'CessionarioCommittente'));
    if (body) this.readBody(body);
    // An ordinary invoice the buyer issued on the seller's behalf is a self-billed invoice (BT-3 389).
    const issuer = this.c(header, 'SoggettoEmittente');
    if (
      this.ctx.take(issuer) === 'CC' &&
      inv.typeCode === '380' &&
      this.text(body, 'DatiGenerali', 'DatiGeneraliDocumento', 'TipoDocumento') === 'TD01'
    )
      inv.typeCode = '389';
    else if (issuer)
      this.interpreted(
        issuer,
        `${issuer.textContent?.trim() ?? ''} (who issued the invoice has no EN 16931 term beyond BT-3 389)`,
      );

    const unmapped = [...ctx.unmapped(this.root), ...this.extraUnmapped];
    return { invoice: inv, syntax: 'FatturaPA', unmapped, problems: ctx.problems, filled: this.filled };
  }

  private readTransmission(dt: ReadElement | undefined): void {
    if (!dt) return;
    const code = this.c(dt, 'CodiceDestinatario');
    const pec = this.c(dt, 'PECDestinatario');
    const format = this.ctx.take(this.c(dt, 'FormatoTrasmissione'));
    const value = this.ctx.take(code);
    // BT-49: the routing address of the buyer. "0000000" means no code (PEC or the buyer's SdI mailbox), "XXXXXXX" a
    // buyer abroad: neither is an address of the buyer.
    if (pec) {
      this.inv.buyer.electronicAddress = { value: this.ctx.take(pec) ?? '', schemeId: EAS_PEC };
      if (value !== undefined && value !== '0000000' && code)
        this.interpreted(code, `${value} (BT-49 holds the PEC address)`);
    } else if (value !== undefined && value !== '0000000' && value !== 'XXXXXXX') {
      this.inv.buyer.electronicAddress = {
        value,
        schemeId: format === 'FPA12' || value.length === 6 ? EAS_IPA : EAS_CODDEST,
      };
    } else if (code && value !== undefined) {
      this.interpreted(code, `${value} (no SdI code of the buyer: not an electronic address)`);
    }
  }

  private fiscalId(el: ReadElement | undefined): string | undefined {
    if (!el) return undefined;
    const country = this.text(el, 'IdPaese') ?? '';
    const code = this.text(el, 'IdCodice') ?? '';
    this.ctx.accept(el);
    return `${country}${code}`;
  }

  private name(anagrafica: ReadElement | undefined): string | undefined {
    if (!anagrafica) return undefined;
    const denominazione = this.text(anagrafica, 'Denominazione');
    if (denominazione !== undefined) return denominazione;
    const parts = [this.text(anagrafica, 'Nome'), this.text(anagrafica, 'Cognome')].filter(
      (p): p is string => p !== undefined,
    );
    return parts.length > 0 ? parts.join(' ') : undefined;
  }

  private address(el: ReadElement | undefined): PostalAddress | undefined {
    if (!el) return undefined;
    const street = this.text(el, 'Indirizzo');
    const number = this.text(el, 'NumeroCivico');
    const country = this.text(el, 'Nazione');
    const cap = this.text(el, 'CAP');
    return compact<PostalAddress>({
      line1: street !== undefined && number !== undefined ? `${street} ${number}` : street,
      city: this.text(el, 'Comune'),
      // "00000" is what FatturaPA asks for abroad: it is no post code
      postCode: cap === '00000' && country !== 'IT' ? undefined : cap,
      countrySubdivision: this.text(el, 'Provincia'),
      countryCode: country,
    });
  }

  private codiceFiscale(el: ReadElement | undefined): Identifier | undefined {
    const v = this.ctx.take(el);
    return v !== undefined ? { value: v, schemeId: ICD_CODICE_FISCALE } : undefined;
  }

  private readSeller(cp: ReadElement | undefined): void {
    if (!cp) return;
    const s = this.inv.seller;
    const da = this.c(cp, 'DatiAnagrafici');
    s.vatIdentifier = this.fiscalId(this.c(da, 'IdFiscaleIVA'));
    const cf = this.codiceFiscale(this.c(da, 'CodiceFiscale'));
    if (cf) s.legalRegistrationIdentifier = cf;
    s.name = this.name(this.c(da, 'Anagrafica'));
    s.postalAddress = this.address(this.c(cp, 'Sede'));
    const contatti = this.c(cp, 'Contatti');
    const contact = compact({ telephone: this.text(contatti, 'Telefono'), email: this.text(contatti, 'Email') });
    if (contact) s.contact = contact;
    // BT-19 per the Italian mapping
    const ref = this.text(cp, 'RiferimentoAmministrazione');
    if (ref !== undefined) this.inv.buyerAccountingReference = ref;
    Object.assign(s, compact(s));
    s.identifiers = [];
  }

  private readTaxRepresentative(rf: ReadElement | undefined): void {
    if (!rf) return;
    const da = this.c(rf, 'DatiAnagrafici');
    const rep = compact({
      name: this.name(this.c(da, 'Anagrafica')),
      vatIdentifier: this.fiscalId(this.c(da, 'IdFiscaleIVA')),
    });
    if (rep) this.inv.taxRepresentative = rep;
  }

  private readBuyer(cc: ReadElement | undefined): void {
    if (!cc) return;
    const b = this.inv.buyer;
    const da = this.c(cc, 'DatiAnagrafici');
    const vat = this.fiscalId(this.c(da, 'IdFiscaleIVA'));
    if (vat !== undefined) b.vatIdentifier = vat;
    const cf = this.codiceFiscale(this.c(da, 'CodiceFiscale'));
    if (cf) b.legalRegistrationIdentifier = cf;
    const name = this.name(this.c(da, 'Anagrafica'));
    if (name !== undefined) b.name = name;
    const address = this.address(this.c(cc, 'Sede'));
    if (address) b.postalAddress = address;
  }

  private readBody(body: ReadElement): void {
    const inv = this.inv;
    const dg = this.c(body, 'DatiGenerali');
    const dgd = this.c(dg, 'DatiGeneraliDocumento');
    const tipo = this.c(dgd, 'TipoDocumento');
    const td = this.ctx.take(tipo);
    if (td !== undefined && tipo) {
      const code = TIPO_DOCUMENTO_TO_BT3[td];
      if (code === undefined) this.problem(tipo, 'BT-3', `TipoDocumento "${td}" is not a FatturaPA 1.2 document type`);
      else {
        inv.typeCode = code;
        if (!['TD01', 'TD04', 'TD05'].includes(td))
          this.interpreted(tipo, `${td} (read as BT-3 ${code}; the Italian document type is finer than UNTDID 1001)`);
      }
    }
    inv.currencyCode = this.text(dgd, 'Divisa');
    inv.issueDate = this.ctx.isoDate(this.c(dgd, 'Data'), 'BT-2');
    inv.number = this.text(dgd, 'Numero');
    for (const causale of this.all(dgd, 'Causale')) inv.notes.push({ note: this.ctx.take(causale) ?? '' });
    const rounding = this.ctx.decimal(this.c(dgd, 'Arrotondamento'), 'BT-114');

    this.readReferences(dg);
    const bs = this.c(body, 'DatiBeniServizi');
    for (const line of this.all(bs, 'DettaglioLinee')) this.readLine(line);
    for (const cassa of this.all(dgd, 'DatiCassaPrevidenziale')) this.readCassa(cassa);
    for (const r of this.all(bs, 'DatiRiepilogo')) this.readSummary(r);
    this.readDocumentDiscounts(dgd);
    this.computeTotals(rounding, dgd);
    this.readPayment(body, dgd);
    this.readAttachments(body);
  }

  private readReferences(dg: ReadElement | undefined): void {
    const inv = this.inv;
    const cupCig = (el: ReadElement): void => {
      const cup = this.text(el, 'CodiceCUP');
      const cig = this.text(el, 'CodiceCIG');
      if (cup !== undefined && inv.projectReference === undefined) inv.projectReference = cup;
      if (cig !== undefined && inv.tenderOrLotReference === undefined) inv.tenderOrLotReference = cig;
    };
    for (const po of this.all(dg, 'DatiOrdineAcquisto')) {
      const id = this.text(po, 'IdDocumento');
      const lineRefs = this.all(po, 'RiferimentoNumeroLinea');
      if (inv.purchaseOrderReference === undefined) inv.purchaseOrderReference = id;
      if (lineRefs.length > 0) {
        // A PO line reference (NumItem) for the lines named: BT-132 of those lines (read after the lines exist).
        const item = this.text(po, 'NumItem');
        if (item !== undefined && id === inv.purchaseOrderReference) {
          for (const ref of lineRefs) this.pendingPoLines.push([this.ctx.take(ref) ?? '', item]);
        }
      }
      cupCig(po);
    }
    const simple = (name: string, set: (v: string) => void): void => {
      for (const [k, el] of this.all(dg, name).entries()) {
        const id = this.text(el, 'IdDocumento');
        if (k === 0 && id !== undefined) set(id);
        cupCig(el);
      }
    };
    simple('DatiContratto', (v) => (inv.contractReference = v));
    simple('DatiConvenzione', (v) => (inv.invoicedObjectIdentifier = { value: v }));
    simple('DatiRicezione', (v) => (inv.receivingAdviceReference = v));
    for (const fc of this.all(dg, 'DatiFattureCollegate')) {
      const reference = this.text(fc, 'IdDocumento') ?? '';
      const issueDate = this.ctx.isoDate(this.c(fc, 'Data'), 'BT-26');
      inv.precedingInvoices.push(issueDate !== undefined ? { reference, issueDate } : { reference });
      cupCig(fc);
    }
    const ddt = this.all(dg, 'DatiDDT')[0];
    if (ddt) inv.despatchAdviceReference = this.text(ddt, 'NumeroDDT');
    const transport = this.c(dg, 'DatiTrasporto');
    const delivered = this.c(transport, 'DataOraConsegna');
    const resa = this.c(transport, 'IndirizzoResa');
    if (delivered || resa) {
      const when = this.ctx.take(delivered);
      const delivery = compact({ actualDeliveryDate: when?.slice(0, 10), address: this.address(resa) });
      if (delivered && when !== undefined && !/T00:00:00(\.0+)?(Z|[+-]\d{2}:\d{2})?$/.test(when))
        this.interpreted(delivered, `${when} (BT-72 is a date: the time is not kept)`);
      if (delivery) this.inv.delivery = delivery;
    }
  }

  private quantityUnit(el: ReadElement | undefined): string {
    const raw = this.ctx.take(el);
    if (raw === undefined || raw === '') {
      return 'C62';
    }
    const upper = raw.toUpperCase();
    const mapped = UNIT_BY_ITALIAN[upper];
    if (mapped !== undefined) {
      if (el) this.interpreted(el, `${raw} (read as UN/ECE Rec 20 ${mapped})`);
      return mapped;
    }
    if (/^[A-Z0-9]{2,3}$/.test(raw)) return raw;
    if (el)
      this.problem(el, 'BT-130', `UnitaMisura "${raw}" is neither a UN/ECE Rec 20 code nor a unit the mapping knows`);
    return raw;
  }

  private vat(
    el: ReadElement,
    rateEl: ReadElement | undefined,
    naturaEl: ReadElement | undefined,
    term: string,
  ): { categoryCode?: string; rate?: string; natura?: string } {
    const rate = this.ctx.decimal(rateEl, term);
    const natura = this.ctx.take(naturaEl);
    if (rate === undefined) return {};
    if (!isZero(rate))
      return {
        categoryCode: 'S',
        rate: round(rate, 2)
          .replace(/\.00$/, '')
          .replace(/(\.\d)0$/, '$1'),
      };
    if (natura === undefined) {
      this.problem(el, term, 'AliquotaIVA 0.00 without Natura: FatturaPA requires the nature of a zero-rate operation');
      return { rate: '0' };
    }
    const meaning = NATURA[natura];
    if (!meaning) {
      this.problem(naturaEl ?? el, term, `Natura "${natura}" is not a FatturaPA 1.2 code`);
      return { rate: '0' };
    }
    return { categoryCode: meaning.category, rate: '0', natura };
  }

  private readLine(le: ReadElement): void {
    const inv = this.inv;
    const identifier = this.text(le, 'NumeroLinea') ?? '';
    const typeEl = this.c(le, 'TipoCessionePrestazione');
    const tipo = this.ctx.take(typeEl);
    const total = this.ctx.decimal(this.c(le, 'PrezzoTotale'), 'BT-131') ?? '0';
    const vat = this.vat(le, this.c(le, 'AliquotaIVA'), this.c(le, 'Natura'), 'BT-152');
    const description = this.text(le, 'Descrizione');

    // A discount / charge line (SC, PR, AB, AC) is a document level allowance or charge of EN 16931.
    if (tipo !== undefined && (ALLOWANCE_LINE_TYPES.has(tipo) || tipo === CHARGE_LINE_TYPE) && this.isPlainLine(le)) {
      const charge = tipo === CHARGE_LINE_TYPE;
      const amount = charge ? total : negate(total);
      if (!isNegative(amount)) {
        this.ctx.take(this.c(le, 'PrezzoUnitario'));
        this.ctx.take(this.c(le, 'Quantita'));
        const ac: DocumentAllowanceCharge = {
          charge,
          amount,
          ...(vat.categoryCode !== undefined ? { vatCategoryCode: vat.categoryCode } : {}),
          ...(vat.rate !== undefined ? { vatRate: vat.rate } : {}),
          reason: description ?? (charge ? 'Spesa accessoria' : 'Sconto'),
        };
        inv.allowanceCharges.push(ac);
        return;
      }
    }
    if (tipo !== undefined && typeEl)
      this.interpreted(typeEl, `${tipo} (TipoCessionePrestazione has no EN 16931 term)`);

    const qtyEl = this.c(le, 'Quantita');
    let quantity = this.ctx.decimal(qtyEl, 'BT-129');
    let unit = this.quantityUnit(this.c(le, 'UnitaMisura'));
    if (quantity === undefined) {
      quantity = '1';
      unit = 'C62';
      this.filled.push(
        `BT-129 Invoiced quantity of line ${identifier} = 1 C62 (FatturaPA leaves it out for a single service)`,
      );
    }
    let unitPrice = this.ctx.decimal(this.c(le, 'PrezzoUnitario'), 'BT-146') ?? '0';
    // EN 16931 wants a non-negative net price (BR-27): a negative FatturaPA unit price is a negative quantity.
    if (isNegative(unitPrice)) {
      unitPrice = negate(unitPrice);
      quantity = negate(quantity);
    }
    const allowanceCharges: LineAllowanceCharge[] = [];
    let running = unitPrice;
    const absQty = isNegative(quantity) ? negate(quantity) : quantity;
    for (const sm of this.all(le, 'ScontoMaggiorazione')) {
      const charge = this.text(sm, 'Tipo') === 'MG';
      const pct = this.ctx.decimal(this.c(sm, 'Percentuale'), 'BT-138');
      const perUnit = this.ctx.decimal(this.c(sm, 'Importo'), 'BT-136');
      // FatturaPA applies each discount to the unit price left by the previous one; EN 16931 wants line amounts.
      const unitAmount = perUnit ?? (pct !== undefined ? divide(multiply(running, pct), '100', 8).value : '0');
      const ac: LineAllowanceCharge = {
        charge,
        amount: round(multiply(unitAmount, absQty), 2),
        reason: charge ? 'Maggiorazione' : 'Sconto',
      };
      if (pct !== undefined && perUnit === undefined)
        Object.assign(ac, { percentage: pct, baseAmount: round(multiply(running, absQty), 2) });
      allowanceCharges.push(ac);
      running = charge ? add(running, unitAmount) : subtract(running, unitAmount);
    }
    const start = this.ctx.isoDate(this.c(le, 'DataInizioPeriodo'), 'BT-134');
    const end = this.ctx.isoDate(this.c(le, 'DataFinePeriodo'), 'BT-135');
    const line: InvoiceLine = {
      identifier,
      quantity,
      quantityUnitCode: unit,
      netAmount: total,
      allowanceCharges,
      price: { netPrice: unitPrice },
      vat: compact({ categoryCode: vat.categoryCode, rate: vat.rate }) ?? {},
      item: { name: description, classificationIdentifiers: [], attributes: [] },
    };
    if (start !== undefined || end !== undefined) line.period = compact({ startDate: start, endDate: end }) ?? {};
    const accounting = this.text(le, 'RiferimentoAmministrazione');
    if (accounting !== undefined) line.buyerAccountingReference = accounting;
    for (const ca of this.all(le, 'CodiceArticolo')) {
      const tipoCodice = this.text(ca, 'CodiceTipo') ?? '';
      const valore = this.text(ca, 'CodiceValore') ?? '';
      if (tipoCodice === CODICE_TIPO_SELLER && line.item.sellersIdentifier === undefined)
        line.item.sellersIdentifier = valore;
      else if (tipoCodice === CODICE_TIPO_BUYER && line.item.buyersIdentifier === undefined)
        line.item.buyersIdentifier = valore;
      else if (/^\d{4}$/.test(tipoCodice) && line.item.standardIdentifier === undefined)
        line.item.standardIdentifier = { value: valore, schemeId: tipoCodice };
      else if (/^(EAN|GTIN)$/i.test(tipoCodice) && line.item.standardIdentifier === undefined)
        line.item.standardIdentifier = { value: valore, schemeId: '0160' };
      else if (/^[A-Z]{2,3}$/.test(tipoCodice))
        line.item.classificationIdentifiers.push({ value: valore, schemeId: tipoCodice });
      else if (line.item.sellersIdentifier === undefined) {
        line.item.sellersIdentifier = valore;
        this.interpreted(ca, `${tipoCodice}: ${valore} (read as BT-155 Item Seller's identifier)`);
      } else this.interpreted(ca, `${tipoCodice}: ${valore} (no EN 16931 term left for it)`);
    }
    for (const adg of this.all(le, 'AltriDatiGestionali')) {
      const key = this.text(adg, 'TipoDato') ?? '';
      const textEl = this.c(adg, 'RiferimentoTesto');
      const value = this.ctx.take(textEl);
      if (this.c(adg, 'RiferimentoNumero') || this.c(adg, 'RiferimentoData') || value === undefined) {
        this.interpreted(adg, `${key} (other management data with a number or date has no EN 16931 term)`);
        continue;
      }
      if (key === 'BT-127' && line.note === undefined) line.note = value;
      else if (key === 'BT-154' && line.item.description === undefined) line.item.description = value;
      else if (key === 'BT-128' && line.objectIdentifier === undefined) line.objectIdentifier = { value };
      else if (key === 'BT-159' && line.item.countryOfOrigin === undefined) line.item.countryOfOrigin = value;
      else line.item.attributes.push({ name: key, value });
    }
    line.item = {
      ...compact(line.item),
      classificationIdentifiers: line.item.classificationIdentifiers,
      attributes: line.item.attributes,
    };
    inv.lines.push(line);
  }

  /** A discount/charge line carries nothing but a description, an amount and its VAT. */
  private isPlainLine(le: ReadElement): boolean {
    const allowed = new Set([
      'NumeroLinea',
      'TipoCessionePrestazione',
      'Descrizione',
      'Quantita',
      'UnitaMisura',
      'PrezzoUnitario',
      'PrezzoTotale',
      'AliquotaIVA',
      'Natura',
    ]);
    for (let c = le.firstChild; c; c = c.nextSibling)
      if (c.nodeType === 1 && !allowed.has((c as ReadElement).localName ?? '')) return false;
    const q = this.c(le, 'Quantita')?.textContent?.trim();
    return q === undefined || compare(q, '1') === 0;
  }

  /** DatiCassaPrevidenziale: a social security contribution the seller charges, inside the VAT summary: BG-21. */
  private readCassa(cassa: ReadElement): void {
    const tipo = this.text(cassa, 'TipoCassa') ?? '';
    const pct = this.ctx.decimal(this.c(cassa, 'AlCassa'), 'BT-101');
    const amount = this.ctx.decimal(this.c(cassa, 'ImportoContributoCassa'), 'BT-99') ?? '0';
    const base = this.ctx.decimal(this.c(cassa, 'ImponibileCassa'), 'BT-100');
    const vat = this.vat(cassa, this.c(cassa, 'AliquotaIVA'), this.c(cassa, 'Natura'), 'BT-103');
    this.inv.allowanceCharges.push({
      charge: true,
      amount,
      ...(base !== undefined ? { baseAmount: base } : {}),
      ...(pct !== undefined && base !== undefined ? { percentage: pct } : {}),
      ...(vat.categoryCode !== undefined ? { vatCategoryCode: vat.categoryCode } : {}),
      ...(vat.rate !== undefined ? { vatRate: vat.rate } : {}),
      reason: `Contributo cassa previdenziale ${tipo}`,
    });
  }

  private readSummary(r: ReadElement): void {
    const vat = this.vat(r, this.c(r, 'AliquotaIVA'), this.c(r, 'Natura'), 'BT-119');
    const vb: VatBreakdown = {
      taxableAmount: this.ctx.decimal(this.c(r, 'ImponibileImporto'), 'BT-116'),
      taxAmount: this.ctx.decimal(this.c(r, 'Imposta'), 'BT-117'),
      categoryCode: vat.categoryCode,
      rate: vat.rate,
    };
    const spese = this.c(r, 'SpeseAccessorie');
    const speseAmount = this.ctx.decimal(spese, 'BT-99');
    if (speseAmount !== undefined && !isZero(speseAmount)) {
      this.inv.allowanceCharges.push({
        charge: true,
        amount: speseAmount,
        ...(vat.categoryCode ? { vatCategoryCode: vat.categoryCode } : {}),
        ...(vat.rate ? { vatRate: vat.rate } : {}),
        reason: 'Spese accessorie',
      });
    }
    const law = this.text(r, 'RiferimentoNormativo');
    if (vat.natura !== undefined) {
      const meaning = NATURA[vat.natura];
      vb.exemptionReasonText = law ?? `${vat.natura} ${meaning?.text ?? ''}`.trim();
      if (meaning?.vatex) vb.exemptionReasonCode = meaning.vatex;
    } else if (law !== undefined) {
      const el = this.c(r, 'RiferimentoNormativo');
      if (el) this.interpreted(el, `${law} (EN 16931 has no exemption reason for a taxed category)`);
    }
    // EN 16931 has one breakdown per category and rate; FatturaPA may split one (e.g. by EsigibilitaIVA): merged.
    const same = this.inv.vatBreakdown.find((v) => v.categoryCode === vb.categoryCode && v.rate === vb.rate);
    if (same) {
      same.taxableAmount = add(same.taxableAmount ?? '0', vb.taxableAmount ?? '0');
      same.taxAmount = add(same.taxAmount ?? '0', vb.taxAmount ?? '0');
      if (vb.exemptionReasonText !== undefined && vb.exemptionReasonText !== same.exemptionReasonText) {
        same.exemptionReasonText =
          same.exemptionReasonText !== undefined
            ? `${same.exemptionReasonText}; ${vb.exemptionReasonText}`
            : vb.exemptionReasonText;
      }
      this.interpreted(r, `merged into the VAT breakdown of category ${vb.categoryCode ?? '?'} at ${vb.rate ?? '?'} %`);
      return;
    }
    this.inv.vatBreakdown.push(compact(vb) ?? {});
  }

  /**
   * ScontoMaggiorazione of the whole document: EN 16931 can only hold it as an allowance/charge that is part of the VAT
   * base, i.e. when the VAT summary already includes it, and with the VAT category of a single-rate invoice.
   */
  private readDocumentDiscounts(dgd: ReadElement | undefined): void {
    const list = this.all(dgd, 'ScontoMaggiorazione');
    if (list.length === 0) return;
    const inv = this.inv;
    const lineSum = sum(inv.lines.map((l) => l.netAmount ?? '0'));
    const acSum = sum(inv.allowanceCharges.map((a) => (a.charge ? a.amount : negate(a.amount))));
    const summary = sum(inv.vatBreakdown.map((v) => v.taxableAmount ?? '0'));
    const gap = subtract(summary, add(lineSum, acSum));
    const single = inv.vatBreakdown.length === 1 ? inv.vatBreakdown[0] : undefined;
    const parsed = list.map((sm) => ({
      sm,
      charge: this.text(sm, 'Tipo') === 'MG',
      pct: this.ctx.decimal(this.c(sm, 'Percentuale'), 'BT-94'),
      amount: this.ctx.decimal(this.c(sm, 'Importo'), 'BT-92'),
    }));
    const effect = sum(parsed.map((p) => (p.amount === undefined ? '0' : p.charge ? p.amount : negate(p.amount))));
    if (!single || parsed.some((p) => p.amount === undefined) || !equal(gap, effect)) {
      for (const p of parsed) {
        this.problem(
          p.sm,
          'BG-20',
          'a document level ScontoMaggiorazione that is not part of a single-rate VAT summary (DatiRiepilogo) has ' +
            'no EN 16931 equivalent',
        );
      }
      return;
    }
    for (const p of parsed) {
      inv.allowanceCharges.push({
        charge: p.charge,
        amount: p.amount ?? '0',
        ...(p.pct !== undefined ? { percentage: p.pct, baseAmount: lineSum } : {}),
        ...(single.categoryCode !== undefined ? { vatCategoryCode: single.categoryCode } : {}),
        ...(single.rate !== undefined ? { vatRate: single.rate } : {}),
        reason: p.charge ? 'Maggiorazione' : 'Sconto',
      });
    }
  }

  private computeTotals(rounding: string | undefined, dgd: ReadElement | undefined): void {
    const inv = this.inv;
    for (const [lineNo, item] of this.pendingPoLines) {
      const line = inv.lines.find((l) => l.identifier === lineNo);
      if (line && line.purchaseOrderLineReference === undefined) line.purchaseOrderLineReference = item;
    }
    const lines = sum(inv.lines.map((l) => l.netAmount ?? '0'));
    const allowances = inv.allowanceCharges.filter((a) => !a.charge).map((a) => a.amount);
    const charges = inv.allowanceCharges.filter((a) => a.charge).map((a) => a.amount);
    const withoutVat = add(subtract(lines, sum(allowances)), sum(charges));
    const vat = sum(inv.vatBreakdown.map((v) => v.taxAmount ?? '0'));
    const withVat = add(withoutVat, vat);
    inv.totals = {
      sumOfLineNetAmounts: lines,
      ...(allowances.length > 0 ? { sumOfAllowances: sum(allowances) } : {}),
      ...(charges.length > 0 ? { sumOfCharges: sum(charges) } : {}),
      totalWithoutVat: withoutVat,
      totalVatAmount: vat,
      totalWithVat: withVat,
      ...(rounding !== undefined ? { roundingAmount: rounding } : {}),
      amountDueForPayment: rounding !== undefined ? add(withVat, rounding) : withVat,
    };
    const totalEl = this.c(dgd, 'ImportoTotaleDocumento');
    const declared = this.ctx.decimal(totalEl, 'BT-112');
    if (totalEl && declared !== undefined && !equal(declared, inv.totals.amountDueForPayment ?? '0')) {
      this.interpreted(
        totalEl,
        `${declared} (differs from the computed total with VAT and rounding ${inv.totals.amountDueForPayment})`,
      );
    }
  }

  private readPayment(body: ReadElement, dgd: ReadElement | undefined): void {
    const inv = this.inv;
    const dp = this.all(body, 'DatiPagamento')[0];
    if (!dp) return;
    const cond = this.c(dp, 'CondizioniPagamento');
    const condValue = this.ctx.take(cond);
    if (cond && condValue !== 'TP02')
      this.interpreted(cond, `${condValue} (instalments / advance payment terms have no EN 16931 code)`);
    const details = this.all(dp, 'DettaglioPagamento');
    const d = details[0];
    if (!d) return;
    const modEl = this.c(d, 'ModalitaPagamento');
    const mod = this.ctx.take(modEl) ?? '';
    const means = MODALITA_TO_MEANS[mod];
    const due = this.ctx.isoDate(this.c(d, 'DataScadenzaPagamento'), 'BT-9');
    if (due !== undefined) inv.paymentDueDate = due;
    const beneficiary = this.text(d, 'Beneficiario');
    if (beneficiary !== undefined && beneficiary !== inv.seller.name) inv.payee = { name: beneficiary };
    const iban = this.text(d, 'IBAN');
    const bic = this.text(d, 'BIC');
    const payment = paymentOrNothing({
      meansTypeCode: means?.code,
      meansText: means?.code === 'ZZZ' ? `${mod} ${means.text}` : undefined,
      remittanceInformation: this.text(d, 'CodicePagamento'),
      creditTransfers:
        iban !== undefined
          ? [compact({ accountIdentifier: iban, serviceProviderIdentifier: bic }) as { accountIdentifier: string }]
          : [],
    });
    if (!means && modEl) this.problem(modEl, 'BT-81', `ModalitaPagamento "${mod}" is not a FatturaPA 1.2 code`);
    if (payment) inv.paymentInstructions = payment;
    // The amount to pay: less than the total when part was paid before. Withholding tax or split payment also make it
    // smaller; those are not EN 16931 prepayments, so then the amount stays in the unmapped list.
    const amountEl = this.c(d, 'ImportoPagamento');
    const amount = this.ctx.decimal(amountEl, 'BT-115');
    const due115 = inv.totals.amountDueForPayment ?? '0';
    const withheld =
      this.c(dgd, 'DatiRitenuta') !== undefined ||
      this.all(this.c(body, 'DatiBeniServizi'), 'DatiRiepilogo').some(
        (r) => r.getElementsByTagName('EsigibilitaIVA').item(0)?.textContent?.trim() === 'S',
      );
    if (amountEl && amount !== undefined && details.length === 1 && !equal(amount, due115)) {
      if (!withheld && compare(amount, due115) < 0 && !isNegative(amount)) {
        inv.totals.paidAmount = subtract(due115, amount);
        inv.totals.amountDueForPayment = amount;
      } else
        this.interpreted(
          amountEl,
          `${amount} (the amount due is ${due115}; the difference is withholding or split payment, which EN 16931 ` +
            `does not hold)`,
        );
    }
    for (const extra of details.slice(1)) {
      const when = extra.getElementsByTagName('DataScadenzaPagamento').item(0)?.textContent?.trim();
      this.interpreted(extra, `instalment${when ? ` due ${when}` : ''} (EN 16931 has one payment due date)`);
      this.ctx.accept(extra);
      for (let c = extra.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) this.ctx.accept(c as ReadElement);
    }
  }

  private readAttachments(body: ReadElement): void {
    for (const a of this.all(body, 'Allegati')) {
      const name = this.text(a, 'NomeAttachment') ?? '';
      const formatEl = this.c(a, 'FormatoAttachment');
      const format = this.ctx.take(formatEl);
      const mime =
        format !== undefined
          ? MIME_BY_FORMAT[format.toUpperCase()]
          : MIME_BY_FORMAT[(/\.([A-Za-z]+)$/.exec(name)?.[1] ?? '').toUpperCase()];
      if (format !== undefined && mime === undefined && formatEl)
        this.interpreted(formatEl, `${format} (no MIME code EN 16931 allows)`);
      const description = this.text(a, 'DescrizioneAttachment');
      const base64 = (this.ctx.take(this.c(a, 'Attachment')) ?? '').replace(/\s+/g, '');
      this.inv.supportingDocuments.push({
        reference: name,
        ...(description !== undefined ? { description } : {}),
        attachment: { base64, ...(mime !== undefined ? { mimeCode: mime } : {}), filename: name },
      });
    }
  }
}
