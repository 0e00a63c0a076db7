import { GatewayError } from '../core/gateway-error';
import type { Invoice, ReadProblem, UnmappedElement } from '../en16931';
import {
  detectFormatFromDocument,
  extractFromPdf,
  findFormats,
  getFormat,
  isPdf,
  parseXml,
  parseXmlForReading,
  type DetectedFormat,
  type ReadDocument,
  type XmlLimits,
} from '../formats';
import { modelReader, modelWriter } from './codecs';
import { lookupTransformation } from './table';
import { TARGET_FLAVOURS, targetFlavour, type Requirement, type TargetFlavour } from './targets';

/**
 * One document from one format into another, through the EN 16931 model: detect (or take `sourceFormat`), read,
 * look the pair up in the transformation table, adapt the CIUS identifiers, check what the target CIUS requires, write.
 * Nothing is stored. What could not be carried over is in the result, never silently dropped.
 *
 * Errors (GatewayError): 400 INVALID_XML / UNSAFE_XML / UNKNOWN_FORMAT (source not recognised), 400 BAD_REQUEST with
 * `reason` UNKNOWN_TARGET_FORMAT or TRANSFORMATION_NOT_SUPPORTED, 422 UNPROCESSABLE with `reason` CANNOT_CONVERT and
 * `missing` (target requirements not met) or `invalid` (values the model cannot take).
 */

export interface TransformOptions {
  /** Target format URN or format id (`xrechnung-cii`, `peppol-bis3-ubl`, ...). */
  targetFormat: string;
  /** Source format URN or id, when detection is not wanted or fails. */
  sourceFormat?: string;
  /** For a URN both syntaxes share (EN 16931, XRechnung, NLCIUS, BIS 3): which one. Default: the source's syntax. */
  targetSyntax?: 'UBL' | 'CII';
  limits?: Partial<XmlLimits>;
  /** Creation date written into a PDF target (default: now). */
  date?: Date;
  /**
   * @internal How the source is parsed: 'read-tree' (default), the light tree built from the scanner's pass, or
   * 'xmldom', the full DOM. Both give the same result; the equivalence test runs the corpus through each.
   */
  sourceTree?: 'read-tree' | 'xmldom';
}

export interface FormatRef {
  id: string;
  name: string;
  syntax: string;
  documentType: string;
  customizationId?: string;
  /** Factur-X targets: the XML travels in a PDF/A-3, as the named attachment. */
  container?: 'pdf';
  attachment?: string;
}

export interface TransformReport {
  source: FormatRef;
  target: FormatRef;
  /** Source elements the model has no place for (XPath-like paths, with their text). */
  unmapped: UnmappedElement[];
  /** Model content the target syntax cannot carry. */
  notCarried: string[];
  /** Values the target requires that the source lacks, and what was written instead (e.g. BT-23 default). */
  filled: string[];
  /** Identifiers changed for the target flavour (BT-24, BT-23). */
  changed: string[];
}

export interface TransformResult {
  /** The target XML; for a Factur-X target, the CII embedded in the PDF. */
  xml: string;
  /** What to send: the XML for an XML target, the PDF/A-3 for a Factur-X target. */
  body: Buffer;
  contentType: 'application/xml' | 'application/pdf';
  /** Set for Factur-X targets: the PDF/A-3 with the XML embedded. */
  pdf?: Buffer;
  report: TransformReport;
}

/**
 * Runs transformDocument somewhere: on a thread of the document pool in the API and worker processes (conversions are
 * synchronous and long for a large invoice), in process where there is none (tests, tools).
 */
export type TransformRunner = (input: Buffer, options: TransformOptions) => Promise<TransformResult>;

export const inProcessTransform: TransformRunner = async (input, options) => transformDocument(input, options);

const baseId = (id: string): string => id.replace(/-(invoice|creditnote)$/, '');

function notSupported(from: string, to: string, why: string): GatewayError {
  return new GatewayError('BAD_REQUEST', `Transformation from ${from} to ${to} is not supported: ${why}`, {
    details: { reason: 'TRANSFORMATION_NOT_SUPPORTED', sourceFormat: from, targetFormat: to },
  });
}

/** The target: a flavour the gateway writes, or the base id of a known format (for the table's refusal). */
function resolveTarget(
  targetFormat: string,
  sourceSyntax: string,
  targetSyntax: 'UBL' | 'CII' | undefined,
): TargetFlavour | string {
  const asId = baseId(targetFormat.trim().toLowerCase());
  const byId = targetFlavour(asId);
  if (byId) return byId;
  if (getFormat(targetFormat) || getFormat(`${asId}-invoice`)) return asId;
  const named = [
    ...new Set(
      findFormats(targetFormat)
        .filter((f) => !f.refused)
        .map((f) => baseId(f.id)),
    ),
  ];
  if (named.length === 0) {
    throw new GatewayError('BAD_REQUEST', `targetFormat "${targetFormat}" is not a known format URN or id`, {
      details: { reason: 'UNKNOWN_TARGET_FORMAT', targetFormat },
    });
  }
  // A URN shared by an XML flavour and a Factur-X one (EN 16931, XRechnung) means the XML; Factur-X PDFs are asked for
  // by their own URN (EXTENDED) or id.
  const all = TARGET_FLAVOURS.filter((t) => named.includes(t.id));
  const xmlOnly = all.filter((t) => !t.facturx);
  const flavours = xmlOnly.length > 0 ? xmlOnly : all;
  if (flavours.length === 0) return named[0] as string;
  const wanted = targetSyntax ?? sourceSyntax;
  return flavours.find((t) => t.syntax === wanted) ?? (flavours[0] as TargetFlavour);
}

function readSource(
  input: Buffer | Uint8Array | string,
  opts: Pick<TransformOptions, 'sourceFormat' | 'limits' | 'sourceTree'>,
): { doc: ReadDocument; format: DetectedFormat } {
  let xml: Buffer | Uint8Array | string = input;
  let container: 'pdf' | undefined;
  if (typeof input !== 'string' && isPdf(input)) {
    xml = extractFromPdf(input).xml;
    container = 'pdf';
  }
  const doc = opts.sourceTree === 'xmldom' ? parseXml(xml, opts.limits) : parseXmlForReading(xml, opts.limits);
  const format = detectFormatFromDocument(doc, {
    ...(opts.sourceFormat ? { sourceFormat: opts.sourceFormat } : {}),
    ...(container ? { container } : {}),
  });
  return { doc, format };
}

function cannotConvert(message: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('UNPROCESSABLE', message, { details: { reason: 'CANNOT_CONVERT', ...details } });
}

/**
 * The EN 16931 model of an invoice or credit note in any format the gateway reads (a Factur-X PDF: its XML), for what
 * is made of the model itself (the e-mail of a sales invoice: its addresses, subject and attachments). Throws 400 for
 * a document the gateway cannot read and 422 for values the model cannot take.
 */
export function readInvoiceModel(
  input: Buffer | Uint8Array | string,
  opts: Pick<TransformOptions, 'sourceFormat' | 'limits'> = {},
): { invoice: Invoice; format: DetectedFormat } {
  const { doc, format } = readSource(input, opts);
  const reader = modelReader(format);
  if (!reader || (format.documentType !== 'Invoice' && format.documentType !== 'CreditNote')) {
    throw new GatewayError('BAD_REQUEST', `The ${format.name} document cannot be read as an invoice`, {
      details: { reason: 'TRANSFORMATION_NOT_SUPPORTED', sourceFormat: format.id },
    });
  }
  const read = reader(doc, format);
  if (read.problems.length > 0) {
    throw cannotConvert(`The document has values that cannot be read: ${describeProblems(read.problems)}`, {
      invalid: read.problems,
    });
  }
  return { invoice: read.invoice, format };
}

export function transformDocument(input: Buffer | Uint8Array | string, opts: TransformOptions): TransformResult {
  const { doc, format } = readSource(input, opts);
  const sourceBase = baseId(format.id);
  const target = resolveTarget(opts.targetFormat, format.syntax, opts.targetSyntax);
  const targetId = typeof target === 'string' ? target : target.id;
  const lookup = lookupTransformation(sourceBase, targetId);
  if ('notSupported' in lookup) throw notSupported(format.id, targetId, lookup.notSupported);
  if (typeof target === 'string')
    throw notSupported(format.id, targetId, 'the target is not a format the gateway writes');
  if (format.documentType !== 'Invoice' && format.documentType !== 'CreditNote')
    throw notSupported(format.id, targetId, 'only invoices and credit notes can be transformed');

  const reader = modelReader(format);
  const writer = modelWriter(target);
  if (!reader || !writer)
    throw notSupported(
      format.id,
      targetId,
      `no ${reader ? 'writer' : 'reader'} for the ${reader ? target.syntax : format.syntax} syntax is built`,
    );
  const read = reader(doc, format);
  if (read.problems.length > 0) {
    throw cannotConvert(`The document has values that cannot be converted: ${describeProblems(read.problems)}`, {
      invalid: read.problems,
    });
  }
  const inv = read.invoice;
  const changed: string[] = [];
  const filled: string[] = [];
  adaptFlavour(inv, target, changed, filled);
  const missing = target.requirements.filter((r) => !r.holds(inv));
  if (missing.length > 0) {
    throw cannotConvert(
      `${target.name} requires data the document does not have: ` +
        `${missing.map((m) => `${m.rule} (${m.terms.join(', ')}): ${m.message}`).join('; ')}`,
      {
        target: target.id,
        missing: missing.map((m: Requirement) => ({ rule: m.rule, terms: m.terms, message: m.message })),
      },
    );
  }
  const written = writer(inv, target, opts.date ? { date: opts.date } : {});
  const documentType = written.documentType;
  return {
    xml: written.xml,
    ...(written.pdf
      ? { body: written.pdf, contentType: 'application/pdf' as const, pdf: written.pdf }
      : { body: Buffer.from(written.xml, 'utf8'), contentType: 'application/xml' as const }),
    report: {
      source: {
        id: format.id,
        name: format.name,
        syntax: format.syntax,
        documentType: format.documentType,
        ...(format.customizationId !== undefined ? { customizationId: format.customizationId } : {}),
      },
      target: {
        id: target.syntax === 'UBL' ? `${target.id}-${documentType.toLowerCase()}` : target.id,
        name: target.name,
        syntax: target.syntax,
        documentType,
        ...(target.specificationId !== '' ? { customizationId: inv.processControl.specificationIdentifier } : {}),
        ...(target.facturx ? { container: 'pdf' as const, attachment: target.facturx.filename } : {}),
      },
      unmapped: read.unmapped,
      notCarried: written.notCarried,
      filled: [...(read.filled ?? []), ...filled, ...written.filled],
      changed: [...changed, ...(read.normalised ?? []), ...written.normalised],
    },
  };
}

function describeProblems(problems: readonly ReadProblem[]): string {
  const shown = problems.slice(0, 5).map((p) => `${p.term} at ${p.path}: ${p.message}`);
  return shown.join('; ') + (problems.length > 5 ? ` (and ${problems.length - 5} more)` : '');
}

/**
 * BT-24 names the target CIUS in the version the gateway writes (an XRechnung 2.x source, taken only when the caller
 * names it with sourceFormat since detection refuses it, becomes 3.0; an unknown CIUS
 * becomes plain EN 16931, whose rules are the only ones known to hold); BT-23 where the target requires one.
 */
function adaptFlavour(inv: Invoice, target: TargetFlavour, changed: string[], filled: string[]): void {
  const pc = inv.processControl;
  // A syntax without BT-24 (FatturaPA) has an empty specificationId: nothing to change.
  if (target.specificationId !== '' && pc.specificationIdentifier !== target.specificationId) {
    changed.push(`BT-24 Specification identifier: "${pc.specificationIdentifier}" → "${target.specificationId}"`);
    pc.specificationIdentifier = target.specificationId;
  }
  // PEPPOL-EN16931-R005: BT-6 must differ from BT-5. Equal, it repeats BT-5 (and BT-111 repeats BT-110): left out.
  if (
    target.family === 'peppol-bis3' &&
    inv.vatAccountingCurrencyCode !== undefined &&
    inv.vatAccountingCurrencyCode === inv.currencyCode
  ) {
    changed.push(
      `BT-6 VAT accounting currency code "${inv.vatAccountingCurrencyCode}" left out: it equals BT-5, which Peppol ` +
        `does not allow (PEPPOL-EN16931-R005)`,
    );
    delete inv.vatAccountingCurrencyCode;
    delete inv.totals.totalVatAmountInAccountingCurrency;
  }
  target.adapt?.(inv, changed);
  if (target.defaultProcess !== undefined) {
    const current = pc.businessProcessType;
    if (current === undefined || current === '') {
      filled.push(
        `BT-23 Business process type = "${target.defaultProcess}" (${target.name} requires one; the source has none)`,
      );
      pc.businessProcessType = target.defaultProcess;
    } else if (target.acceptsProcess && !target.acceptsProcess.test(current)) {
      changed.push(
        `BT-23 Business process type: "${current}" → "${target.defaultProcess}" (${target.name} accepts only its ` +
          `own process identifiers)`,
      );
      pc.businessProcessType = target.defaultProcess;
    }
  }
}
