import type { DocumentAllowanceCharge, Invoice, InvoiceLine, PostalAddress } from '../model';
import type { WriteResult } from '../ubl-writer';
import { el, group, leaf, serialize, type XmlElement } from '../xml-write';
import { NS } from '../../formats/xml/namespaces';
import { add, compare, divide, fixed, isNegative, isZero, multiply, negate, round, subtract } from './amounts';
import { isDecimal } from '../decimal';
import {
  BT3_TO_TIPO_DOCUMENTO,
  CATEGORY_TO_NATURA,
  CODICE_TIPO_BUYER,
  CODICE_TIPO_SELLER,
  EAS_CODDEST,
  EAS_IPA,
  EAS_PEC,
  FORMAT_BY_MIME,
  ICD_CODICE_FISCALE,
  MEANS_TO_MODALITA,
  NATURA,
} from './codes';

/**
 * EN 16931 model → FatturaPA 1.2.2 FatturaElettronica (FPA12 when the buyer is addressed by its IPA office code,
 * FPR12 otherwise), elements in schema order, after the Italian mapping (codes.ts). Document level allowances and
 * charges become discount (SC) and ancillary charge (AC) lines, as FatturaPA's VAT summary must add up from the lines.
 * Values FatturaPA requires that EN 16931 does not have (transmission data, RegimeFiscale) are written with the
 * documented default and listed in `filled`; what FatturaPA cannot hold is listed in `notCarried`. The caller checks
 * the FatturaPA requirements (requirements.ts) first, so the mandatory elements are there.
 */

const ASCII = /[^\x20-\x7e]/g;
const LATIN1 = /[^\x20-\x7e\xa0-\xff]/g;

export function writeFatturaPa(inv: Invoice): WriteResult {
  return new FatturaPaWriter(inv).write();
}

class FatturaPaWriter {
  private readonly notCarried: string[] = [];
  private readonly filled: string[] = [];
  private readonly normalised: string[] = [];

  constructor(private readonly inv: Invoice) {}

  /**
   * Free text in a FatturaPA string type: characters outside its set are replaced, overlong text is cut; both reported.
   */
  private txt(term: string, value: string | undefined, max: number, latin = true): string | undefined {
    if (value === undefined) return undefined;
    let v = value.replace(/\s+/g, ' ').trim();
    const bad = latin ? LATIN1 : ASCII;
    if (v.replace(bad, '') !== v) {
      v = v.replace(bad, '?');
      this.notCarried.push(`${term}: characters FatturaPA does not allow here were replaced by "?"`);
    }
    if (v.length > max) {
      this.notCarried.push(
        `${term}: cut to the ${max} characters FatturaPA allows ("${v.slice(max, max + 20)}..." is lost)`,
      );
      v = v.slice(0, max);
    }
    return v === '' ? undefined : v;
  }

  private lost(term: string, present: unknown, why = 'FatturaPA has no element for it'): void {
    if (
      present !== undefined &&
      present !== null &&
      present !== '' &&
      !(Array.isArray(present) && present.length === 0)
    )
      this.notCarried.push(`${term}: ${why}`);
  }

  private fiscalId(name: string, vat: string | undefined): XmlElement | undefined {
    if (vat === undefined) return undefined;
    const m = /^([A-Z]{2})(.+)$/.exec(vat.replace(/\s+/g, ''));
    if (!m) return undefined;
    return el(name, {}, leaf('IdPaese', m[1]), leaf('IdCodice', (m[2] as string).slice(0, 28)));
  }

  private address(name: string, a: PostalAddress | undefined, who: string): XmlElement | undefined {
    if (!a) return undefined;
    const italian = a.countryCode === 'IT';
    let cap = a.postCode;
    if (!italian && (cap === undefined || !/^\d{5}$/.test(cap))) {
      this.filled.push(`${who} CAP = "00000" (FatturaPA requires a five digit CAP; abroad it is 00000)`);
      this.lost(`${who} post code`, cap, `"${cap}" is not an Italian CAP; written as 00000`);
      cap = '00000';
    }
    this.lost(`${who} address line 2`, a.line2);
    this.lost(`${who} address line 3`, a.line3);
    const province =
      a.countrySubdivision !== undefined && italian && /^[A-Z]{2}$/.test(a.countrySubdivision)
        ? a.countrySubdivision
        : undefined;
    if (province === undefined)
      this.lost(`${who} country subdivision`, a.countrySubdivision, 'Provincia holds only an Italian province code');
    return el(
      name,
      {},
      leaf('Indirizzo', this.txt(`${who} address line 1`, a.line1, 60)),
      leaf('CAP', cap),
      leaf('Comune', this.txt(`${who} city`, a.city, 60)),
      leaf('Provincia', province),
      leaf('Nazione', a.countryCode),
    );
  }

  private amount2(v: string): string {
    return fixed(v, 2, 2);
  }

  private rate(v: string | undefined): string {
    return fixed(v ?? '0', 2, 2);
  }

  private natura(category: string | undefined): string | undefined {
    return category === undefined || category === 'S' ? undefined : CATEGORY_TO_NATURA[category];
  }

  write(): WriteResult {
    const inv = this.inv;
    const address = inv.buyer.electronicAddress;
    const versione = address?.schemeId === EAS_IPA ? 'FPA12' : 'FPR12';
    const root = el(
      'p:FatturaElettronica',
      { 'xmlns:p': NS.fatturaPA12, 'xmlns:ds': 'http://www.w3.org/2000/09/xmldsig#', versione },
      el(
        'FatturaElettronicaHeader',
        {},
        this.transmission(versione),
        this.seller(),
        this.taxRepresentative(),
        this.buyer(),
        // BT-3 389: the buyer issues the invoice on the seller's behalf
        leaf('SoggettoEmittente', inv.typeCode === '389' ? 'CC' : undefined),
      ),
      this.body(),
    );
    this.notCarriedHeader();
    return {
      xml: serialize(root),
      notCarried: this.notCarried,
      filled: this.filled,
      normalised: this.normalised,
      documentType: 'Invoice',
    };
  }

  private transmission(versione: string): XmlElement {
    const inv = this.inv;
    const address = inv.buyer.electronicAddress;
    let code: string;
    let pec: string | undefined;
    if (address?.schemeId === EAS_IPA || address?.schemeId === EAS_CODDEST) code = address.value;
    else if (address?.schemeId === EAS_PEC || address?.schemeId === 'EM') {
      code = '0000000';
      pec = address.value;
    } else {
      // Abroad: SdI's code for a foreign buyer (the requirements refuse an Italian buyer without an SdI address).
      code = 'XXXXXXX';
      this.filled.push('CodiceDestinatario = "XXXXXXX" (the buyer is abroad and has no SdI code)');
      this.lost(
        'BT-49 Buyer electronic address',
        address?.value,
        `scheme ${address?.schemeId ?? 'none'} is no SdI address (FatturaPA routes by CodiceDestinatario or PEC)`,
      );
    }
    const progressivo = (inv.number ?? '').replace(/[^A-Za-z0-9]/g, '').slice(-10) || '1';
    this.filled.push(`IdTrasmittente = the seller VAT identifier (BT-31): the seller transmits its own invoice`);
    this.filled.push(
      `ProgressivoInvio = "${progressivo}" (taken from the invoice number; a transmitting intermediary numbers its ` +
        `own files)`,
    );
    return el(
      'DatiTrasmissione',
      {},
      this.fiscalId('IdTrasmittente', inv.seller.vatIdentifier),
      leaf('ProgressivoInvio', progressivo),
      leaf('FormatoTrasmissione', versione),
      leaf('CodiceDestinatario', code),
      leaf('PECDestinatario', pec),
    );
  }

  private seller(): XmlElement {
    const s = this.inv.seller;
    const cf =
      s.legalRegistrationIdentifier?.schemeId === ICD_CODICE_FISCALE ? s.legalRegistrationIdentifier.value : undefined;
    if (cf === undefined)
      this.lost(
        'BT-30 Seller legal registration identifier',
        s.legalRegistrationIdentifier?.value,
        'only a codice fiscale (scheme 0210) has a place (CodiceFiscale)',
      );
    this.filled.push(
      'RegimeFiscale = "RF01" (ordinary VAT regime; EN 16931 does not say which regime the seller is in)',
    );
    const contact = s.contact;
    const phone = contact?.telephone?.replace(/[\s()./-]/g, '');
    const phoneOk = phone !== undefined && /^[\x20-\x7e]{5,12}$/.test(phone);
    if (!phoneOk)
      this.lost('BT-42 Seller contact telephone number', contact?.telephone, 'Telefono takes 5 to 12 characters');
    else if (phone !== contact?.telephone)
      this.normalised.push(`BT-42 Seller contact telephone number written without spaces and separators: "${phone}"`);
    const emailOk = contact?.email !== undefined && contact.email.length >= 7 && contact.email.length <= 256;
    if (!emailOk) this.lost('BT-43 Seller contact email address', contact?.email, 'Email takes 7 to 256 characters');
    this.lost('BT-41 Seller contact point', contact?.point);
    return el(
      'CedentePrestatore',
      {},
      el(
        'DatiAnagrafici',
        {},
        this.fiscalId('IdFiscaleIVA', s.vatIdentifier),
        leaf('CodiceFiscale', cf),
        el('Anagrafica', {}, leaf('Denominazione', this.txt('BT-27 Seller name', s.name, 80))),
        leaf('RegimeFiscale', 'RF01'),
      ),
      this.address('Sede', s.postalAddress, 'Seller'),
      group(
        'Contatti',
        {},
        leaf('Telefono', phoneOk ? phone : undefined),
        leaf('Email', emailOk ? contact?.email : undefined),
      ),
      leaf(
        'RiferimentoAmministrazione',
        this.txt('BT-19 Buyer accounting reference', this.inv.buyerAccountingReference, 20, false),
      ),
    );
  }

  private taxRepresentative(): XmlElement | undefined {
    const t = this.inv.taxRepresentative;
    if (!t) return undefined;
    const id = this.fiscalId('IdFiscaleIVA', t.vatIdentifier);
    if (!id) {
      this.lost('BG-11 Seller tax representative', t.name, 'FatturaPA needs its VAT identifier (BT-63)');
      return undefined;
    }
    this.lost('BG-12 Seller tax representative postal address', t.postalAddress);
    return el(
      'RappresentanteFiscale',
      {},
      el(
        'DatiAnagrafici',
        {},
        id,
        el('Anagrafica', {}, leaf('Denominazione', this.txt('BT-62 Seller tax representative name', t.name, 80))),
      ),
    );
  }

  private buyer(): XmlElement {
    const b = this.inv.buyer;
    const cf =
      b.legalRegistrationIdentifier?.schemeId === ICD_CODICE_FISCALE ? b.legalRegistrationIdentifier.value : undefined;
    if (cf === undefined)
      this.lost(
        'BT-47 Buyer legal registration identifier',
        b.legalRegistrationIdentifier?.value,
        'only a codice fiscale (scheme 0210) has a place (CodiceFiscale)',
      );
    return el(
      'CessionarioCommittente',
      {},
      el(
        'DatiAnagrafici',
        {},
        this.fiscalId('IdFiscaleIVA', b.vatIdentifier),
        leaf('CodiceFiscale', cf),
        el('Anagrafica', {}, leaf('Denominazione', this.txt('BT-44 Buyer name', b.name, 80))),
      ),
      this.address('Sede', b.postalAddress, 'Buyer'),
    );
  }

  private notCarriedHeader(): void {
    const inv = this.inv;
    const s = inv.seller;
    const b = inv.buyer;
    this.lost('BT-6 VAT accounting currency code', inv.vatAccountingCurrencyCode);
    this.lost('BT-111 Invoice total VAT amount in accounting currency', inv.totals.totalVatAmountInAccountingCurrency);
    this.lost('BT-7 Value added tax point date', inv.vatPointDate);
    this.lost('BT-8 Value added tax point date code', inv.vatPointDateCode);
    this.lost('BT-10 Buyer reference', inv.buyerReference);
    this.lost('BT-14 Sales order reference', inv.salesOrderReference);
    this.lost(
      'BT-16 Despatch advice reference',
      inv.despatchAdviceReference,
      'FatturaPA DatiDDT needs the despatch advice date, which EN 16931 does not have',
    );
    this.lost('BT-20 Payment terms', inv.paymentTerms);
    this.lost('BT-21 Invoice note subject code', inv.notes.find((n) => n.subjectCode !== undefined)?.subjectCode);
    this.lost('BT-23 Business process type', inv.processControl.businessProcessType);
    this.lost('BT-28 Seller trading name', s.tradingName);
    this.lost('BT-29 Seller identifier', s.identifiers.map((i) => i.value).join(', ') || undefined);
    this.lost('BT-32 Seller tax registration identifier', s.taxRegistrationIdentifier);
    this.lost('BT-33 Seller additional legal information', s.additionalLegalInformation);
    this.lost('BT-34 Seller electronic address', s.electronicAddress?.value);
    this.lost('BT-45 Buyer trading name', b.tradingName);
    this.lost('BT-46 Buyer identifier', b.identifier?.value);
    this.lost('BG-9 Buyer contact', b.contact && (b.contact.point ?? b.contact.email ?? b.contact.telephone));
    this.lost('BT-60 Payee identifier', inv.payee?.identifier?.value);
    this.lost('BT-61 Payee legal registration identifier', inv.payee?.legalRegistrationIdentifier?.value);
    this.lost('BT-70 Deliver to party name', inv.delivery?.partyName);
    this.lost('BT-71 Deliver to location identifier', inv.delivery?.locationIdentifier?.value);
    this.lost(
      'BG-14 Invoicing period',
      inv.invoicingPeriod && (inv.invoicingPeriod.startDate ?? inv.invoicingPeriod.endDate),
      'FatturaPA has periods per line only',
    );
  }

  private body(): XmlElement {
    const inv = this.inv;
    const td = BT3_TO_TIPO_DOCUMENTO[inv.typeCode ?? ''] ?? 'TD01';
    if (inv.typeCode === '384')
      this.normalised.push(
        'BT-3 384 (corrected invoice) written as TD01 with the corrected invoice in DatiFattureCollegate',
      );
    const rounding = inv.totals.roundingAmount;
    const total =
      inv.totals.totalWithVat !== undefined
        ? rounding !== undefined
          ? add(inv.totals.totalWithVat, rounding)
          : inv.totals.totalWithVat
        : undefined;
    const causali: string[] = [];
    for (const n of inv.notes) {
      const text = this.txt('BT-22 Invoice note', n.note, 10_000) ?? '';
      for (let k = 0; k < text.length; k += 200) causali.push(text.slice(k, k + 200));
    }
    const dgd = el(
      'DatiGeneraliDocumento',
      {},
      leaf('TipoDocumento', td),
      leaf('Divisa', inv.currencyCode),
      leaf('Data', inv.issueDate),
      leaf('Numero', inv.number),
      leaf('ImportoTotaleDocumento', total !== undefined ? this.amount2(total) : undefined),
      leaf('Arrotondamento', rounding !== undefined ? this.amount2(rounding) : undefined),
      causali.map((c) => leaf('Causale', c)),
    );
    return el(
      'FatturaElettronicaBody',
      {},
      el('DatiGenerali', {}, dgd, this.references()),
      this.goodsAndServices(),
      this.payment(),
      this.attachments(),
    );
  }

  private correlated(
    name: string,
    id: string | undefined,
    extra: { lineRefs?: string[]; item?: string; cup?: string; cig?: string; date?: string } = {},
  ): XmlElement | undefined {
    if (id === undefined) return undefined;
    return el(
      name,
      {},
      (extra.lineRefs ?? []).map((r) => leaf('RiferimentoNumeroLinea', r)),
      leaf('IdDocumento', id),
      leaf('Data', extra.date),
      leaf('NumItem', extra.item),
      leaf('CodiceCUP', extra.cup),
      leaf('CodiceCIG', extra.cig),
    );
  }

  private references(): XmlElement[] {
    const inv = this.inv;
    const out: Array<XmlElement | undefined> = [];
    const cup = this.txt('BT-11 Project reference', inv.projectReference, 15, false);
    const cig = this.txt('BT-17 Tender or lot reference', inv.tenderOrLotReference, 15, false);
    const po = this.txt('BT-13 Purchase order reference', inv.purchaseOrderReference, 20, false);
    const contract = this.txt('BT-12 Contract reference', inv.contractReference, 20, false);
    // CUP and CIG sit in a referenced document: the order, else the contract.
    const onPo = po !== undefined;
    const onContract = !onPo && contract !== undefined;
    if (!onPo && !onContract) {
      this.lost('BT-11 Project reference', cup, 'CodiceCUP needs a purchase order or contract reference to sit in');
      this.lost(
        'BT-17 Tender or lot reference',
        cig,
        'CodiceCIG needs a purchase order or contract reference to sit in',
      );
    }
    out.push(this.correlated('DatiOrdineAcquisto', po, onPo ? { cup, cig } : {}));
    inv.lines.forEach((l, k) => {
      if (l.purchaseOrderLineReference === undefined) return;
      if (po === undefined)
        this.lost(
          `BT-132 Referenced purchase order line reference (line ${l.identifier})`,
          l.purchaseOrderLineReference,
          'FatturaPA needs the order (BT-13) to refer to its line',
        );
      else
        out.push(
          this.correlated('DatiOrdineAcquisto', po, {
            lineRefs: [String(k + 1)],
            item: this.txt('BT-132 Referenced purchase order line reference', l.purchaseOrderLineReference, 20, false),
          }),
        );
    });
    out.push(this.correlated('DatiContratto', contract, onContract ? { cup, cig } : {}));
    if (inv.invoicedObjectIdentifier?.schemeId !== undefined)
      this.lost('BT-18-1 Invoiced object identifier scheme', inv.invoicedObjectIdentifier.schemeId);
    out.push(
      this.correlated(
        'DatiConvenzione',
        this.txt('BT-18 Invoiced object identifier', inv.invoicedObjectIdentifier?.value, 20, false),
      ),
    );
    out.push(
      this.correlated(
        'DatiRicezione',
        this.txt('BT-15 Receiving advice reference', inv.receivingAdviceReference, 20, false),
      ),
    );
    for (const p of inv.precedingInvoices)
      out.push(
        this.correlated('DatiFattureCollegate', this.txt('BT-25 Preceding invoice reference', p.reference, 20, false), {
          ...(p.issueDate !== undefined ? { date: p.issueDate } : {}),
        }),
      );
    const d = inv.delivery;
    if (d) {
      const a = d.address;
      const resa =
        a && a.line1 !== undefined && a.city !== undefined && a.countryCode !== undefined
          ? this.address('IndirizzoResa', a, 'Deliver to')
          : undefined;
      if (a && !resa)
        this.lost(
          'BG-15 Deliver to address',
          a.line1 ?? a.city ?? a.countryCode,
          'IndirizzoResa needs street, city and country',
        );
      out.push(
        group(
          'DatiTrasporto',
          {},
          resa,
          leaf('DataOraConsegna', d.actualDeliveryDate !== undefined ? `${d.actualDeliveryDate}T00:00:00` : undefined),
        ),
      );
    }
    return out.filter((x): x is XmlElement => x !== undefined);
  }

  private goodsAndServices(): XmlElement {
    const inv = this.inv;
    const lines: XmlElement[] = inv.lines.map((l, k) => this.line(l, k + 1));
    inv.allowanceCharges.forEach((ac, k) => lines.push(this.allowanceChargeLine(ac, inv.lines.length + k + 1)));
    const summary = inv.vatBreakdown.map((v) => {
      const natura = this.natura(v.categoryCode);
      const law = v.exemptionReasonText ?? v.exemptionReasonCode;
      const vatex = natura !== undefined ? NATURA[natura]?.vatex : undefined;
      if (
        v.exemptionReasonCode !== undefined &&
        v.exemptionReasonText !== undefined &&
        v.exemptionReasonCode !== vatex
      ) {
        this.notCarried.push(
          `BT-121 VAT exemption reason code "${v.exemptionReasonCode}": RiferimentoNormativo holds the reason text ` +
            `(BT-120)`,
        );
      }
      return el(
        'DatiRiepilogo',
        {},
        leaf('AliquotaIVA', this.rate(v.rate)),
        leaf('Natura', natura),
        leaf('ImponibileImporto', this.amount2(v.taxableAmount ?? '0')),
        leaf('Imposta', this.amount2(v.taxAmount ?? '0')),
        leaf(
          'RiferimentoNormativo',
          natura !== undefined ? this.txt('BT-120 VAT exemption reason text', law, 100) : undefined,
        ),
      );
    });
    return el('DatiBeniServizi', {}, lines, summary);
  }

  private line(l: InvoiceLine, number: number): XmlElement {
    const id = `line ${l.identifier}`;
    if (String(number) !== l.identifier)
      this.normalised.push(
        `BT-126 Invoice line identifier "${l.identifier}" written as NumeroLinea ${number} (FatturaPA numbers lines ` +
          `1, 2, ...)`,
      );
    const qty = l.quantity ?? '1';
    const negativeQty = isNegative(qty);
    const absQty = negativeQty ? negate(qty) : qty;
    // FatturaPA prices are per unit: an EN base quantity is divided out.
    let unitPrice = l.price.netPrice ?? '0';
    if (l.price.baseQuantity !== undefined && !isZero(l.price.baseQuantity)) {
      const d = divide(unitPrice, l.price.baseQuantity, 8);
      if (!d.exact)
        this.notCarried.push(
          `BT-146 Item net price of ${id}: ${unitPrice} per ${l.price.baseQuantity} rounded to ${d.value} per unit`,
        );
      unitPrice = d.value;
    }
    if (negativeQty) unitPrice = negate(unitPrice);
    this.lost(
      `BT-148 Item gross price of ${id}`,
      l.price.grossPrice,
      'FatturaPA has one unit price; the net price (BT-146) is written',
    );
    this.lost(
      `BT-147 Item price discount of ${id}`,
      l.price.discount,
      'FatturaPA has one unit price; the net price (BT-146) is written',
    );
    if (l.price.baseQuantity !== undefined && l.price.baseQuantity !== '1')
      this.normalised.push(
        `BT-149 Item price base quantity of ${id} (${l.price.baseQuantity}) divided into the unit price`,
      );
    // FatturaPA applies each discount to the unit price the previous one left. An EN percentage whose base is that
    // running price times the quantity is written as Percentuale (nothing lost); anything else as an amount per unit.
    let running = unitPrice;
    const discounts = l.allowanceCharges.map((ac, k) => {
      const what = `BG-${ac.charge ? 28 : 27} line ${ac.charge ? 'charge' : 'allowance'} ${k + 1} of ${id}`;
      this.lost(`BT-${ac.charge ? 144 : 139} reason of ${id}`, ac.reason);
      this.lost(`BT-${ac.charge ? 145 : 140} reason code of ${id}`, ac.reasonCode);
      let perUnit: string;
      let pct: string | undefined;
      const asPercentage =
        ac.percentage !== undefined &&
        ac.baseAmount !== undefined &&
        !isZero(absQty) &&
        isDecimal(ac.percentage) &&
        compare(round(multiply(running, absQty), 2), ac.baseAmount) === 0 &&
        compare(round(multiply(divide(multiply(running, ac.percentage), '100', 8).value, absQty), 2), ac.amount) === 0;
      if (asPercentage && ac.percentage !== undefined) {
        pct = fixed(ac.percentage, 2, 2);
        perUnit = divide(multiply(running, ac.percentage), '100', 8).value;
      } else {
        const d = isZero(absQty) ? { value: ac.amount, exact: false } : divide(ac.amount, absQty, 8);
        if (!d.exact) this.notCarried.push(`${what}: ${ac.amount} over ${absQty} units rounded to ${d.value} per unit`);
        perUnit = d.value;
        this.lost(`BT-${ac.charge ? 143 : 138} percentage of ${id}`, ac.percentage, 'written as an amount per unit');
        this.lost(`BT-${ac.charge ? 142 : 137} base amount of ${id}`, ac.baseAmount, 'written as an amount per unit');
      }
      running = ac.charge ? add(running, perUnit) : subtract(running, perUnit);
      return el(
        'ScontoMaggiorazione',
        {},
        leaf('Tipo', ac.charge ? 'MG' : 'SC'),
        leaf('Percentuale', pct),
        leaf('Importo', pct === undefined ? fixed(perUnit, 2, 8) : undefined),
      );
    });
    const item = l.item;
    const codes: XmlElement[] = [];
    const code = (tipo: string, value: string | undefined, term: string): void => {
      const v = this.txt(`${term} of ${id}`, value, 35);
      if (v !== undefined) codes.push(el('CodiceArticolo', {}, leaf('CodiceTipo', tipo), leaf('CodiceValore', v)));
    };
    code(CODICE_TIPO_SELLER, item.sellersIdentifier, "BT-155 Item Seller's identifier");
    code(CODICE_TIPO_BUYER, item.buyersIdentifier, "BT-156 Item Buyer's identifier");
    if (item.standardIdentifier) {
      if (item.standardIdentifier.schemeId !== undefined && /^\d{4}$/.test(item.standardIdentifier.schemeId))
        code(item.standardIdentifier.schemeId, item.standardIdentifier.value, 'BT-157 Item standard identifier');
      else
        this.lost(
          `BT-157 Item standard identifier of ${id}`,
          item.standardIdentifier.value,
          'CodiceTipo takes its ISO 6523 scheme, which is missing',
        );
    }
    for (const c of item.classificationIdentifiers) {
      if (
        c.schemeId !== undefined &&
        /^[A-Z]{2,3}$/.test(c.schemeId) &&
        c.schemeId !== CODICE_TIPO_SELLER &&
        c.schemeId !== CODICE_TIPO_BUYER
      ) {
        code(c.schemeId, c.value, 'BT-158 Item classification identifier');
        this.lost(`BT-158-2 Item classification scheme version of ${id}`, c.schemeVersion);
      } else
        this.lost(
          `BT-158 Item classification identifier of ${id}`,
          c.value,
          'its scheme cannot be told apart from the other article codes',
        );
    }
    const other: XmlElement[] = [];
    const gestionale = (key: string, value: string | undefined, term: string): void => {
      if (value === undefined) return;
      const v = this.txt(`${term} of ${id}`, value, 60);
      other.push(el('AltriDatiGestionali', {}, leaf('TipoDato', key), leaf('RiferimentoTesto', v)));
    };
    gestionale('BT-127', l.note, 'BT-127 Invoice line note');
    gestionale('BT-128', l.objectIdentifier?.value, 'BT-128 Invoice line object identifier');
    this.lost(`BT-128-1 Invoice line object identifier scheme of ${id}`, l.objectIdentifier?.schemeId);
    gestionale('BT-154', item.description, 'BT-154 Item description');
    gestionale('BT-159', item.countryOfOrigin, 'BT-159 Item country of origin');
    for (const a of item.attributes) {
      if (/^[\x20-\x7e]{1,10}$/.test(a.name) && !/^BT-\d+$/.test(a.name))
        gestionale(a.name, a.value, 'BT-161 Item attribute value');
      else
        this.lost(
          `BG-32 Item attribute "${a.name}" of ${id}`,
          a.value,
          'TipoDato takes a name of at most 10 ASCII characters',
        );
    }
    const unit =
      l.quantityUnitCode !== undefined && /^[\x20-\x7e]{1,10}$/.test(l.quantityUnitCode)
        ? l.quantityUnitCode
        : undefined;
    const natura = this.natura(l.vat.categoryCode);
    return el(
      'DettaglioLinee',
      {},
      leaf('NumeroLinea', String(number)),
      codes,
      leaf('Descrizione', this.txt(`BT-153 Item name of ${id}`, item.name, 1000)),
      leaf('Quantita', fixed(absQty, 2, 8)),
      leaf('UnitaMisura', unit),
      leaf('DataInizioPeriodo', l.period?.startDate),
      leaf('DataFinePeriodo', l.period?.endDate),
      leaf('PrezzoUnitario', fixed(unitPrice, 2, 8)),
      discounts,
      leaf('PrezzoTotale', fixed(l.netAmount ?? '0', 2, 8)),
      leaf('AliquotaIVA', this.rate(l.vat.rate)),
      leaf('Natura', natura),
      leaf(
        'RiferimentoAmministrazione',
        this.txt(`BT-133 Invoice line Buyer accounting reference of ${id}`, l.buyerAccountingReference, 20, false),
      ),
      other,
    );
  }

  /** BG-20 / BG-21 as a discount (SC) or ancillary charge (AC) line, so the VAT summary adds up from the lines. */
  private allowanceChargeLine(ac: DocumentAllowanceCharge, number: number): XmlElement {
    const kind = ac.charge ? 'charge' : 'allowance';
    const signed = ac.charge ? ac.amount : negate(ac.amount);
    this.lost(`BT-${ac.charge ? 105 : 98} Document level ${kind} reason code`, ac.reasonCode);
    this.lost(`BT-${ac.charge ? 101 : 94} Document level ${kind} percentage`, ac.percentage, 'written as its amount');
    this.lost(`BT-${ac.charge ? 100 : 93} Document level ${kind} base amount`, ac.baseAmount, 'written as its amount');
    const description =
      ac.reason ??
      (ac.reasonCode !== undefined
        ? `${ac.charge ? 'Maggiorazione' : 'Sconto'} ${ac.reasonCode}`
        : ac.charge
          ? 'Spesa accessoria'
          : 'Sconto');
    return el(
      'DettaglioLinee',
      {},
      leaf('NumeroLinea', String(number)),
      leaf('TipoCessionePrestazione', ac.charge ? 'AC' : 'SC'),
      leaf('Descrizione', this.txt(`BT-${ac.charge ? 104 : 97} Document level ${kind} reason`, description, 1000)),
      leaf('PrezzoUnitario', fixed(signed, 2, 8)),
      leaf('PrezzoTotale', fixed(signed, 2, 8)),
      leaf('AliquotaIVA', this.rate(ac.vatRate)),
      leaf('Natura', this.natura(ac.vatCategoryCode)),
    );
  }

  private payment(): XmlElement | undefined {
    const inv = this.inv;
    const p = inv.paymentInstructions;
    if (!p) {
      this.lost(
        'BT-9 Payment due date',
        inv.paymentDueDate,
        'FatturaPA states it with the payment means (BG-16), which the invoice does not have',
      );
      this.lost(
        'BT-59 Payee name',
        inv.payee?.name,
        'FatturaPA names the payee (Beneficiario) with the payment means (BG-16), which the invoice does not have',
      );
      return undefined;
    }
    let modalita = MEANS_TO_MODALITA[p.meansTypeCode ?? ''];
    if (modalita === undefined && p.meansTypeCode === 'ZZZ') modalita = /^(MP\d\d)\b/.exec(p.meansText ?? '')?.[1];
    const viaCode =
      p.meansText !== undefined &&
      p.meansTypeCode === 'ZZZ' &&
      modalita !== undefined &&
      p.meansText.startsWith(modalita);
    if (!viaCode) this.lost('BT-82 Payment means text', p.meansText);
    const transfer = p.creditTransfers[0];
    const iban =
      transfer && /^[a-zA-Z]{2}[0-9]{2}[a-zA-Z0-9]{11,30}$/.test(transfer.accountIdentifier)
        ? transfer.accountIdentifier
        : undefined;
    if (transfer && iban === undefined)
      this.lost('BT-84 Payment account identifier', transfer.accountIdentifier, 'IBAN takes an IBAN only');
    const bic =
      transfer?.serviceProviderIdentifier !== undefined &&
      /^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$/.test(transfer.serviceProviderIdentifier)
        ? transfer.serviceProviderIdentifier
        : undefined;
    if (bic === undefined)
      this.lost(
        'BT-86 Payment service provider identifier',
        transfer?.serviceProviderIdentifier,
        'BIC takes a BIC only',
      );
    this.lost('BT-85 Payment account name', transfer?.accountName);
    this.lost(
      'BG-17 further credit transfers',
      p.creditTransfers
        .slice(1)
        .map((t) => t.accountIdentifier)
        .join(', ') || undefined,
      'one IBAN per payment detail is written',
    );
    this.lost('BG-18 Payment card information', p.card?.primaryAccountNumber);
    this.lost(
      'BG-19 Direct debit',
      p.directDebit &&
        (p.directDebit.mandateReference ??
          p.directDebit.debitedAccountIdentifier ??
          p.directDebit.bankAssignedCreditorIdentifier),
    );
    return el(
      'DatiPagamento',
      {},
      leaf('CondizioniPagamento', 'TP02'),
      el(
        'DettaglioPagamento',
        {},
        leaf('Beneficiario', this.txt('BT-59 Payee name', inv.payee?.name, 200)),
        leaf('ModalitaPagamento', modalita),
        leaf('DataScadenzaPagamento', inv.paymentDueDate),
        leaf('ImportoPagamento', this.amount2(inv.totals.amountDueForPayment ?? '0')),
        leaf('IBAN', iban),
        leaf('BIC', bic),
        leaf('CodicePagamento', this.txt('BT-83 Remittance information', p.remittanceInformation, 60, false)),
      ),
    );
  }

  private attachments(): XmlElement[] {
    const out: XmlElement[] = [];
    for (const d of this.inv.supportingDocuments) {
      const a = d.attachment;
      if (!a) {
        this.lost(
          `BG-24 Supporting document "${d.reference}"`,
          d.externalLocation ?? d.reference,
          'Allegati holds embedded documents only',
        );
        continue;
      }
      const name = this.txt('BT-125-2 Attached document filename', a.filename ?? d.reference, 60);
      if (a.filename !== undefined && a.filename !== d.reference)
        this.lost(
          `BT-122 Supporting document reference "${d.reference}"`,
          d.reference,
          'NomeAttachment holds the file name',
        );
      this.lost(`BT-124 External document location of "${d.reference}"`, d.externalLocation);
      const format = a.mimeCode !== undefined ? FORMAT_BY_MIME[a.mimeCode] : undefined;
      out.push(
        el(
          'Allegati',
          {},
          leaf('NomeAttachment', name),
          leaf('FormatoAttachment', format),
          leaf('DescrizioneAttachment', this.txt('BT-123 Supporting document description', d.description, 100)),
          leaf('Attachment', a.base64),
        ),
      );
    }
    return out;
  }
}
