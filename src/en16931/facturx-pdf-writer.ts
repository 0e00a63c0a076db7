import type { FacturXProfile, TargetFlavour } from './codec-types';
import { writeCii } from './cii-writer';
import type { Invoice, PostalAddress } from './model';
import type { WriteResult } from './ubl-writer';
import {
  PAGE_HEIGHT,
  PAGE_WIDTH,
  PdfCanvas,
  writeHybridPdf,
  type PdfPage,
  type Rgb,
} from '../formats/facturx/pdf-writer';

/**
 * The Factur-X / ZUGFeRD writer: the model as CII (the target profile's BT-24 already set by the pipeline) embedded in
 * a PDF/A-3B whose pages are a readable rendering of the same model: parties, references, lines, allowances and
 * charges, VAT breakdown, totals and payment. The rendering is generated from the model, not a template of the
 * seller's own layout, and says so in its footer; the XML is the invoice's data.
 */

export interface PdfWriteResult extends WriteResult {
  pdf: Buffer;
  filename: string;
}

/** Fixed instant for tests (golden bytes); the document's creation date otherwise. */
export interface FacturXOptions {
  date?: Date;
}

const TYPE_NAMES: Record<string, string> = {
  '380': 'Invoice',
  '381': 'Credit note',
  '383': 'Debit note',
  '384': 'Corrected invoice',
  '386': 'Prepayment invoice',
  '389': 'Self-billed invoice',
  '751': 'Invoice information for accounting purposes',
  '261': 'Self-billed credit note',
  '396': 'Factored credit note',
  '393': 'Factored invoice',
};

const MEANS: Record<string, string> = {
  '1': 'Instrument not defined',
  '10': 'In cash',
  '20': 'Cheque',
  '30': 'Credit transfer',
  '31': 'Debit transfer',
  '42': 'Payment to bank account',
  '48': 'Bank card',
  '49': 'Direct debit',
  '54': 'Credit card',
  '55': 'Debit card',
  '57': 'Standing agreement',
  '58': 'SEPA credit transfer',
  '59': 'SEPA direct debit',
  '97': 'Clearing between partners',
  ZZZ: 'Mutually defined',
};

const MARGIN = 45;
const BOTTOM = 60;
const GREY: Rgb = [0.35, 0.35, 0.35];
const RULE: Rgb = [0.7, 0.7, 0.7];
const SHADE: Rgb = [0.93, 0.93, 0.93];

type Cell = { text: string; bold?: boolean };

/** Lays the invoice out top to bottom, starting a new page when the next block does not fit. */
class Layout {
  page: PdfPage;
  y = PAGE_HEIGHT - MARGIN;

  constructor(
    readonly canvas: PdfCanvas,
    private readonly header: string,
  ) {
    this.page = canvas.addPage();
  }

  private newPage(): void {
    this.page = this.canvas.addPage();
    this.y = PAGE_HEIGHT - MARGIN;
    this.page.text(MARGIN, this.y - 8, this.header, { size: 8, color: GREY });
    this.y -= 22;
  }

  ensure(height: number): void {
    if (this.y - height < BOTTOM) this.newPage();
  }

  /** Splits text into lines no wider than `width` (breaking long words too). */
  wrap(text: string, width: number, size: number, bold = false): string[] {
    const out: string[] = [];
    for (const para of text.split(/\r?\n/)) {
      let line = '';
      for (const word of para.split(/\s+/).filter((w) => w !== '')) {
        const candidate = line === '' ? word : `${line} ${word}`;
        if (this.canvas.widthOf(candidate, size, bold) <= width) {
          line = candidate;
          continue;
        }
        if (line !== '') out.push(line);
        line = word;
        while (this.canvas.widthOf(line, size, bold) > width && line.length > 1) {
          let cut = line.length - 1;
          while (cut > 1 && this.canvas.widthOf(line.slice(0, cut), size, bold) > width) cut--;
          out.push(line.slice(0, cut));
          line = line.slice(cut);
        }
      }
      out.push(line);
    }
    return out;
  }

  heading(text: string): void {
    this.ensure(40);
    this.y -= 14;
    this.page.text(MARGIN, this.y, text, { size: 10.5, bold: true });
    this.y -= 4;
    this.page.line(MARGIN, this.y, PAGE_WIDTH - MARGIN, this.y, 0.5, RULE);
    this.y -= 11;
  }

  /** Label: value pairs in two columns of the given width. */
  pairs(rows: [string, string][], x = MARGIN, width = PAGE_WIDTH - 2 * MARGIN): void {
    const labelWidth = Math.min(170, width * 0.4);
    for (const [label, value] of rows) {
      const lines = this.wrap(value, width - labelWidth, 8.5);
      this.ensure(lines.length * 11);
      this.page.text(x, this.y, label, { size: 8.5, color: GREY });
      for (const l of lines) {
        this.page.text(x + labelWidth, this.y, l, { size: 8.5 });
        this.y -= 11;
      }
    }
  }

  paragraph(text: string, size = 8.5): void {
    for (const l of this.wrap(text, PAGE_WIDTH - 2 * MARGIN, size)) {
      this.ensure(size + 3);
      this.page.text(MARGIN, this.y, l, { size });
      this.y -= size + 3;
    }
  }

  /** A table: column widths, alignment, a shaded header row, rows wrapped within their cells. */
  table(columns: { title: string; width: number; right?: boolean }[], rows: Cell[][]): void {
    const size = 8;
    const lineHeight = 10;
    const drawRow = (cells: Cell[], header: boolean): void => {
      const wrapped = cells.map((c, k) => this.wrap(c.text, (columns[k]?.width ?? 50) - 6, size, header || c.bold));
      const height = Math.max(1, ...wrapped.map((w) => w.length)) * lineHeight + 4;
      if (this.y - height < BOTTOM) {
        this.newPage();
        if (!header)
          drawRow(
            columns.map((c) => ({ text: c.title })),
            true,
          );
      }
      if (header) this.page.fillRect(MARGIN, this.y - height + lineHeight - 1, PAGE_WIDTH - 2 * MARGIN, height, SHADE);
      let x = MARGIN;
      wrapped.forEach((lines, k) => {
        const col = columns[k] as { width: number; right?: boolean };
        lines.forEach((l, n) => {
          const bold = header || (cells[k]?.bold ?? false);
          const tx = col.right ? x + col.width - 3 - this.canvas.widthOf(l, size, bold) : x + 3;
          this.page.text(tx, this.y - n * lineHeight, l, { size, bold });
        });
        x += col.width;
      });
      this.y -= height;
      if (!header)
        this.page.line(MARGIN, this.y + lineHeight - 2, PAGE_WIDTH - MARGIN, this.y + lineHeight - 2, 0.3, RULE);
    };
    this.ensure(3 * lineHeight);
    drawRow(
      columns.map((c) => ({ text: c.title })),
      true,
    );
    for (const r of rows) drawRow(r, false);
    this.y -= 4;
  }
}

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';
const join = (parts: (string | undefined)[], sep = ', '): string => parts.filter(present).join(sep);
const withScheme = (id: { value: string; schemeId?: string } | undefined): string | undefined =>
  id ? (id.schemeId ? `${id.value} (${id.schemeId})` : id.value) : undefined;

function addressLines(a: PostalAddress | undefined): string[] {
  if (!a) return [];
  return [
    a.line1,
    a.line2,
    a.line3,
    join([a.postCode, a.city], ' '),
    join([a.countrySubdivision, a.countryCode]),
  ].filter(present);
}

function partyBlock(layout: Layout, x: number, width: number, title: string, lines: string[], top: number): number {
  let y = top;
  layout.page.text(x, y, title, { size: 8, bold: true, color: GREY });
  y -= 12;
  lines.forEach((l, k) => {
    for (const w of layout.wrap(l, width, k === 0 ? 9.5 : 8.5, k === 0)) {
      layout.page.text(x, y, w, { size: k === 0 ? 9.5 : 8.5, bold: k === 0 });
      y -= k === 0 ? 12 : 10.5;
    }
  });
  return y;
}

/** Draws the invoice. */
function render(inv: Invoice, canvas: PdfCanvas, profile: FacturXProfile, profileName: string): void {
  const cur = inv.currencyCode ?? '';
  const money = (v: string | undefined): string => (present(v) ? `${v} ${cur}`.trim() : '');
  const typeName = TYPE_NAMES[inv.typeCode ?? ''] ?? `Document type ${inv.typeCode ?? '?'}`;
  const header = `${typeName} ${inv.number ?? ''} · ${inv.seller.name ?? ''}`;
  const layout = new Layout(canvas, header);
  const { page } = layout;

  // Title block.
  page.text(MARGIN, layout.y - 16, typeName, { size: 18, bold: true });
  const numberLine = `No. ${inv.number ?? ''}`;
  page.text(PAGE_WIDTH - MARGIN - canvas.widthOf(numberLine, 11, true), layout.y - 14, numberLine, {
    size: 11,
    bold: true,
  });
  const dateLine = `Issue date ${inv.issueDate ?? ''}`;
  page.text(PAGE_WIDTH - MARGIN - canvas.widthOf(dateLine, 9), layout.y - 28, dateLine, { size: 9 });
  layout.y -= 50;

  // Parties, side by side.
  const s = inv.seller;
  const b = inv.buyer;
  const half = (PAGE_WIDTH - 2 * MARGIN - 20) / 2;
  const sellerLines = [
    s.name ?? '',
    ...(present(s.tradingName) ? [s.tradingName] : []),
    ...addressLines(s.postalAddress),
    ...(present(s.vatIdentifier) ? [`VAT ID ${s.vatIdentifier}`] : []),
    ...(present(s.taxRegistrationIdentifier) ? [`Tax registration ${s.taxRegistrationIdentifier}`] : []),
    ...(s.legalRegistrationIdentifier ? [`Registration ${withScheme(s.legalRegistrationIdentifier)}`] : []),
    ...s.identifiers.map((i) => `ID ${withScheme(i)}`),
    ...(s.electronicAddress ? [`Electronic address ${withScheme(s.electronicAddress)}`] : []),
    ...(s.contact ? [join([s.contact.point, s.contact.telephone, s.contact.email])] : []),
    ...(present(s.additionalLegalInformation) ? [s.additionalLegalInformation] : []),
  ];
  const buyerLines = [
    b.name ?? '',
    ...(present(b.tradingName) ? [b.tradingName] : []),
    ...addressLines(b.postalAddress),
    ...(present(b.vatIdentifier) ? [`VAT ID ${b.vatIdentifier}`] : []),
    ...(b.legalRegistrationIdentifier ? [`Registration ${withScheme(b.legalRegistrationIdentifier)}`] : []),
    ...(b.identifier ? [`ID ${withScheme(b.identifier)}`] : []),
    ...(b.electronicAddress ? [`Electronic address ${withScheme(b.electronicAddress)}`] : []),
    ...(b.contact ? [join([b.contact.point, b.contact.telephone, b.contact.email])] : []),
  ].filter(present);
  const yS = partyBlock(layout, MARGIN, half, 'SELLER', sellerLines.filter(present), layout.y);
  const yB = partyBlock(layout, MARGIN + half + 20, half, 'BUYER', buyerLines, layout.y);
  layout.y = Math.min(yS, yB) - 6;

  // References and dates.
  const details: [string, string][] = [];
  const add = (label: string, v: string | undefined): void => {
    if (present(v)) details.push([label, v]);
  };
  add(
    'Currency',
    join([
      inv.currencyCode,
      inv.vatAccountingCurrencyCode ? `VAT accounting in ${inv.vatAccountingCurrencyCode}` : undefined,
    ]),
  );
  add('Payment due date', inv.paymentDueDate);
  add('VAT point date', inv.vatPointDate);
  add('Buyer reference', inv.buyerReference);
  add('Purchase order', inv.purchaseOrderReference);
  add('Sales order', inv.salesOrderReference);
  add('Contract', inv.contractReference);
  add('Project', inv.projectReference);
  add('Tender or lot', inv.tenderOrLotReference);
  add('Receiving advice', inv.receivingAdviceReference);
  add('Despatch advice', inv.despatchAdviceReference);
  add('Invoiced object', withScheme(inv.invoicedObjectIdentifier));
  add('Buyer accounting reference', inv.buyerAccountingReference);
  if (inv.invoicingPeriod)
    add('Invoicing period', join([inv.invoicingPeriod.startDate, inv.invoicingPeriod.endDate], ' – '));
  for (const p of inv.precedingInvoices)
    add('Preceding invoice', join([p.reference, p.issueDate ? `of ${p.issueDate}` : undefined], ' '));
  if (inv.delivery) {
    const d = inv.delivery;
    add('Deliver to', join([d.partyName, ...addressLines(d.address), withScheme(d.locationIdentifier)]));
    add('Delivery date', d.actualDeliveryDate);
  }
  if (inv.payee)
    add(
      'Payee',
      join([inv.payee.name, withScheme(inv.payee.identifier), withScheme(inv.payee.legalRegistrationIdentifier)]),
    );
  if (inv.taxRepresentative)
    add(
      'Seller tax representative',
      join([
        inv.taxRepresentative.name,
        inv.taxRepresentative.vatIdentifier,
        ...addressLines(inv.taxRepresentative.postalAddress),
      ]),
    );
  for (const d of inv.supportingDocuments)
    add(
      'Supporting document',
      join([
        d.reference,
        d.description,
        d.externalLocation,
        d.attachment?.filename ? `attached: ${d.attachment.filename}` : undefined,
      ]),
    );
  if (details.length > 0) {
    layout.heading('Details');
    layout.pairs(details);
  }
  if (inv.notes.length > 0) {
    layout.heading('Notes');
    for (const n of inv.notes) layout.paragraph(present(n.subjectCode) ? `[${n.subjectCode}] ${n.note}` : n.note);
  }

  // Lines.
  layout.heading('Lines');
  const usable = PAGE_WIDTH - 2 * MARGIN;
  layout.table(
    [
      { title: '#', width: 30 },
      { title: 'Item', width: usable - 30 - 70 - 75 - 55 - 80 },
      { title: 'Quantity', width: 70, right: true },
      { title: 'Net price', width: 75, right: true },
      { title: 'VAT', width: 55, right: true },
      { title: 'Net amount', width: 80, right: true },
    ],
    inv.lines.map((l) => {
      const item = [
        l.item.name ?? '',
        ...(present(l.item.description) ? [l.item.description] : []),
        ...(present(l.item.sellersIdentifier) ? [`Seller's ID ${l.item.sellersIdentifier}`] : []),
        ...(present(l.item.buyersIdentifier) ? [`Buyer's ID ${l.item.buyersIdentifier}`] : []),
        ...(l.item.standardIdentifier ? [`Standard ID ${withScheme(l.item.standardIdentifier)}`] : []),
        ...l.item.attributes.map((a) => `${a.name}: ${a.value}`),
        ...(present(l.note) ? [`Note: ${l.note}`] : []),
        ...(l.period ? [`Period ${join([l.period.startDate, l.period.endDate], ' – ')}`] : []),
        ...l.allowanceCharges.map(
          (ac) =>
            `${ac.charge ? 'Charge' : 'Allowance'} ${money(ac.amount)}${present(ac.reason) ? ` (${ac.reason})` : ''}`,
        ),
        ...(present(l.price.grossPrice)
          ? [
              `Gross price ${money(l.price.grossPrice)}` +
                (present(l.price.discount) ? `, discount ${money(l.price.discount)}` : ''),
            ]
          : []),
      ].join('\n');
      const base = present(l.price.baseQuantity)
        ? ` / ${l.price.baseQuantity} ${l.price.baseQuantityUnitCode ?? ''}`.trimEnd()
        : '';
      return [
        { text: l.identifier },
        { text: item },
        { text: join([l.quantity, l.quantityUnitCode], ' ') },
        { text: `${l.price.netPrice ?? ''}${base}` },
        { text: join([l.vat.categoryCode, present(l.vat.rate) ? `${l.vat.rate} %` : undefined], ' ') },
        { text: l.netAmount ?? '' },
      ];
    }),
  );

  if (inv.allowanceCharges.length > 0) {
    layout.heading('Document allowances and charges');
    layout.table(
      [
        { title: 'Kind', width: 80 },
        { title: 'Reason', width: usable - 80 - 90 - 80 },
        { title: 'VAT', width: 90, right: true },
        { title: 'Amount', width: 80, right: true },
      ],
      inv.allowanceCharges.map((ac) => [
        { text: ac.charge ? 'Charge' : 'Allowance' },
        {
          text: join([
            ac.reason,
            ac.reasonCode ? `code ${ac.reasonCode}` : undefined,
            present(ac.percentage) ? `${ac.percentage} % of ${ac.baseAmount ?? ''}` : undefined,
          ]),
        },
        { text: join([ac.vatCategoryCode, present(ac.vatRate) ? `${ac.vatRate} %` : undefined], ' ') },
        { text: ac.charge ? ac.amount : `-${ac.amount}` },
      ]),
    );
  }

  layout.heading('VAT breakdown');
  layout.table(
    [
      { title: 'Category', width: 60 },
      { title: 'Rate', width: 60, right: true },
      { title: 'Exemption reason', width: usable - 60 - 60 - 100 - 100 },
      { title: 'Taxable amount', width: 100, right: true },
      { title: 'VAT amount', width: 100, right: true },
    ],
    inv.vatBreakdown.map((v) => [
      { text: v.categoryCode ?? '' },
      { text: present(v.rate) ? `${v.rate} %` : '' },
      { text: join([v.exemptionReasonText, v.exemptionReasonCode]) },
      { text: v.taxableAmount ?? '' },
      { text: v.taxAmount ?? '' },
    ]),
  );

  // Totals, right-aligned.
  const t = inv.totals;
  const totals: [string, string | undefined, boolean][] = [
    ['Sum of line net amounts', t.sumOfLineNetAmounts, false],
    ['Allowances', present(t.sumOfAllowances) ? `-${t.sumOfAllowances}` : undefined, false],
    ['Charges', t.sumOfCharges, false],
    ['Total without VAT', t.totalWithoutVat, true],
    ['VAT', t.totalVatAmount, false],
    [`VAT in ${inv.vatAccountingCurrencyCode ?? ''}`, t.totalVatAmountInAccountingCurrency, false],
    ['Total with VAT', t.totalWithVat, true],
    ['Paid', present(t.paidAmount) ? `-${t.paidAmount}` : undefined, false],
    ['Rounding', t.roundingAmount, false],
    ['Amount due', t.amountDueForPayment, true],
  ];
  layout.heading('Totals');
  for (const [label, value, bold] of totals) {
    if (!present(value)) continue;
    layout.ensure(13);
    const shown = label.startsWith('VAT in ') ? `${value} ${inv.vatAccountingCurrencyCode ?? ''}` : money(value);
    layout.page.text(PAGE_WIDTH - MARGIN - 260, layout.y, label, { size: 9, bold });
    layout.page.text(PAGE_WIDTH - MARGIN - canvas.widthOf(shown, 9, bold), layout.y, shown, { size: 9, bold });
    layout.y -= 13;
  }

  // Payment.
  const pay = inv.paymentInstructions;
  const payment: [string, string][] = [];
  if (pay) {
    const means = present(pay.meansTypeCode)
      ? `${MEANS[pay.meansTypeCode] ?? 'Code'} (${pay.meansTypeCode})`
      : undefined;
    if (present(means) || present(pay.meansText)) payment.push(['Payment means', join([means, pay.meansText])]);
    for (const ct of pay.creditTransfers)
      payment.push([
        'Account',
        join([
          ct.accountIdentifier,
          ct.accountName,
          present(ct.serviceProviderIdentifier) ? `BIC ${ct.serviceProviderIdentifier}` : undefined,
        ]),
      ]);
    if (pay.card) payment.push(['Card', join([pay.card.primaryAccountNumber, pay.card.holderName])]);
    if (pay.directDebit) {
      const dd = pay.directDebit;
      payment.push([
        'Direct debit',
        join([
          dd.mandateReference ? `mandate ${dd.mandateReference}` : undefined,
          dd.bankAssignedCreditorIdentifier ? `creditor ${dd.bankAssignedCreditorIdentifier}` : undefined,
          dd.debitedAccountIdentifier ? `account ${dd.debitedAccountIdentifier}` : undefined,
        ]),
      ]);
    }
    if (present(pay.remittanceInformation)) payment.push(['Remittance information', pay.remittanceInformation]);
  }
  if (present(inv.paymentTerms)) payment.push(['Payment terms', inv.paymentTerms]);
  if (present(inv.paymentDueDate)) payment.push(['Due date', inv.paymentDueDate]);
  if (payment.length > 0) {
    layout.heading('Payment');
    layout.pairs(payment);
  }

  // Footers: page numbers and what this document is.
  const pages = canvas.pages;
  pages.forEach((p, k) => {
    p.line(MARGIN, 42, PAGE_WIDTH - MARGIN, 42, 0.3, RULE);
    p.text(
      MARGIN,
      30,
      `Factur-X ${profileName}: the structured invoice is embedded as ${profile.filename}; this page is a rendering ` +
        `of it.`,
      { size: 7, color: GREY },
    );
    const n = `Page ${k + 1} of ${pages.length}`;
    p.text(PAGE_WIDTH - MARGIN - canvas.widthOf(n, 7), 30, n, { size: 7, color: GREY });
  });
}

/** Writes the Factur-X PDF for a flavour with a `facturx` profile. */
export function writeFacturXPdf(inv: Invoice, target: TargetFlavour, options: FacturXOptions = {}): PdfWriteResult {
  const profile = target.facturx;
  if (!profile) throw new Error(`${target.id} is not a Factur-X target`);
  const written = writeCii(inv);
  const xml = Buffer.from(written.xml, 'utf8');
  const canvas = new PdfCanvas();
  render(inv, canvas, profile, profile.conformanceLevel);
  const typeName = TYPE_NAMES[inv.typeCode ?? ''] ?? 'Invoice';
  const pdf = writeHybridPdf(
    canvas,
    {
      filename: profile.filename,
      bytes: xml,
      relationship: profile.relationship,
      description: `Factur-X ${profile.conformanceLevel} invoice data (CII)`,
      conformanceLevel: profile.conformanceLevel,
      version: '1.0',
    },
    {
      title: `${typeName} ${inv.number ?? ''}`.trim(),
      author: inv.seller.name ?? '',
      subject: `${typeName} ${inv.number ?? ''} from ${inv.seller.name ?? ''} to ${inv.buyer.name ?? ''}`,
      creator: 'Invoice Gateway',
      producer: 'Invoice Gateway (Factur-X writer)',
      keywords: `Factur-X, ${profile.conformanceLevel}, ${inv.number ?? ''}`,
      date: options.date ?? new Date(),
    },
  );
  const missing = canvas.missingCharacters();
  return {
    ...written,
    pdf,
    filename: profile.filename,
    notCarried: [
      ...written.notCarried,
      ...(missing.length > 0
        ? [
            `PDF rendering: characters the embedded font cannot show were drawn as '?': ` +
              `${missing.map((c) => JSON.stringify(c)).join(', ')} (the embedded XML keeps them)`,
          ]
        : []),
    ],
  };
}
