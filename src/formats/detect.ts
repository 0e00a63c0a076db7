import { truncateForEcho as echo } from '../core/truncate';
import type { ReadDocument, ReadElement, ReadNode } from './xml/read-tree';
import { childElements } from './xml/helpers';
import { GatewayError } from '../core/gateway-error';
import { extractFromPdf, isPdf, type PdfLimits } from './facturx/pdf-attachment';
import {
  FORMATS,
  SI_UBL_1_REFUSAL,
  findFormats,
  type DocumentType,
  type FormatDefinition,
  type IdentifierTest,
  type Matcher,
  type RootSpec,
} from './format-ids';
import { NS } from './xml/namespaces';
import { parseXml, scanXmlInput, type XmlLimits } from './xml/secure-parser';
import type { RawAttribute, ScanVisitor } from './xml/xml-scanner';

import type { DetectedFormat } from './vocabulary';

export type { DetectedFormat };

/**
 * What detection reads from a document. Both readers below (DOM and streaming) produce exactly this, and the
 * classification only ever looks at it, so both paths give the same answer.
 */
export interface DocumentFacts {
  rootLocalName: string;
  rootNamespace: string;
  /** The root's name as written, for messages. */
  rootQName: string;
  /** Root attributes without namespace, whitespace-normalised (FatturaPA `versione`, ebInterface `DocumentType`). */
  rootAttributes: Record<string, string>;
  customizationId?: string;
  profileId?: string;
  ublVersionId?: string;
  /** BT-3 invoice type code (CII and ZUGFeRD 1 only, where one root carries invoices and credit notes). */
  typeCode?: string;
  /** Every namespace URI declared anywhere in the document, sorted. */
  declaredNamespaces: string[];
}

export interface DetectOptions {
  /** A format id or URN that overrides detection; it must be known and fit the document's root element. */
  sourceFormat?: string;
  limits?: Partial<XmlLimits>;
  pdfLimits?: Partial<PdfLimits>;
  /**
   * 'dom' parses the document; 'stream' reads it with the lexical scanner only; 'auto' (default) uses the DOM up to
   * DOM_DETECTION_MAX_BYTES. Both give the same result for well-formed input.
   */
  strategy?: 'auto' | 'dom' | 'stream';
}

/** Above this size detection reads the document without building a DOM. */
export const DOM_DETECTION_MAX_BYTES = 512 * 1024;

// ---------------------------------------------------------------------------------------------------------------------
// Where the identifiers live, relative to the root: each path is a chain of child elements (namespace, local name).

type Step = readonly [namespace: string, localName: string];
type FactName = 'customizationId' | 'profileId' | 'ublVersionId' | 'typeCode';
type FactPaths = Partial<Record<FactName, readonly Step[]>>;

const UBL_PATHS: FactPaths = {
  customizationId: [[NS.cbc, 'CustomizationID']],
  profileId: [[NS.cbc, 'ProfileID']],
  ublVersionId: [[NS.cbc, 'UBLVersionID']],
};

const CII_PATHS: FactPaths = {
  customizationId: [
    [NS.rsm, 'ExchangedDocumentContext'],
    [NS.ram, 'GuidelineSpecifiedDocumentContextParameter'],
    [NS.ram, 'ID'],
  ],
  profileId: [
    [NS.rsm, 'ExchangedDocumentContext'],
    [NS.ram, 'BusinessProcessSpecifiedDocumentContextParameter'],
    [NS.ram, 'ID'],
  ],
  typeCode: [
    [NS.rsm, 'ExchangedDocument'],
    [NS.ram, 'TypeCode'],
  ],
};

const ZF1_PATHS: FactPaths = {
  customizationId: [
    [NS.zf1Rsm, 'SpecifiedExchangedDocumentContext'],
    [NS.zf1Ram, 'GuidelineSpecifiedDocumentContextParameter'],
    [NS.zf1Ram, 'ID'],
  ],
  profileId: [
    [NS.zf1Rsm, 'SpecifiedExchangedDocumentContext'],
    [NS.zf1Ram, 'BusinessProcessSpecifiedDocumentContextParameter'],
    [NS.zf1Ram, 'ID'],
  ],
  typeCode: [
    [NS.zf1Rsm, 'HeaderExchangedDocument'],
    [NS.zf1Ram, 'TypeCode'],
  ],
};

const UBL_NAMESPACE_PREFIX = 'urn:oasis:names:specification:ubl:schema:xsd:';

function factPathsFor(rootNamespace: string, rootLocalName: string): FactPaths {
  if (rootNamespace.startsWith(UBL_NAMESPACE_PREFIX)) return UBL_PATHS;
  if (rootNamespace === NS.rsm && rootLocalName === 'CrossIndustryInvoice') return CII_PATHS;
  if (rootNamespace === NS.zf1Rsm && rootLocalName === 'CrossIndustryDocument') return ZF1_PATHS;
  return {};
}

/** XPath normalize-space(): XML whitespace only. */
function normalizeSpace(s: string): string {
  return s.replace(/[ \t\r\n]+/g, ' ').trim();
}

function isNamespaceDeclaration(name: string): boolean {
  return name === 'xmlns' || name.startsWith('xmlns:');
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading facts from a DOM

/** First element (document order) at the end of `steps` below `el`. */
function findPath(el: ReadElement, steps: readonly Step[], k = 0): ReadElement | undefined {
  const step = steps[k];
  if (!step) return undefined;
  for (const child of childElements(el)) {
    if (child.localName === step[1] && (child.namespaceURI ?? '') === step[0]) {
      if (k === steps.length - 1) return child;
      const found = findPath(child, steps, k + 1);
      if (found) return found;
    }
  }
  return undefined;
}

export function factsFromDocument(doc: ReadDocument): DocumentFacts {
  const root = doc.documentElement;
  if (!root) throw new GatewayError('INVALID_XML', '1:1: no root element');
  const rootNamespace = root.namespaceURI ?? '';
  const rootLocalName = root.localName ?? root.nodeName;
  const facts: DocumentFacts = {
    rootLocalName,
    rootNamespace,
    rootQName: root.nodeName,
    rootAttributes: {},
    declaredNamespaces: [],
  };
  for (let k = 0; k < root.attributes.length; k++) {
    const a = root.attributes.item(k);
    if (a && !a.namespaceURI && !isNamespaceDeclaration(a.name)) facts.rootAttributes[a.name] = normalizeSpace(a.value);
  }
  const paths = factPathsFor(rootNamespace, rootLocalName);
  for (const [fact, steps] of Object.entries(paths) as Array<[FactName, readonly Step[]]>) {
    const el = findPath(root, steps);
    if (el) facts[fact] = normalizeSpace(el.textContent ?? '');
  }
  // Namespace declarations anywhere (SETU declares its extension namespace, possibly without using it). The read tree
  // collected them while it was built; an xmldom document is walked for them.
  if (doc.declaredNamespaces) {
    facts.declaredNamespaces = [...doc.declaredNamespaces].sort();
    return facts;
  }
  const declared = new Set<string>();
  const pending: ReadNode[] = [root];
  while (pending.length > 0) {
    const el = pending.pop() as ReadElement;
    for (let k = 0; k < el.attributes.length; k++) {
      const a = el.attributes.item(k);
      if (a && isNamespaceDeclaration(a.name) && a.value !== '') declared.add(a.value);
    }
    for (let c = el.lastChild; c; c = c.previousSibling) if (c.nodeType === 1) pending.push(c);
  }
  facts.declaredNamespaces = [...declared].sort();
  return facts;
}

// ---------------------------------------------------------------------------------------------------------------------
// Reading facts while scanning, without a DOM

class FactCollector implements ScanVisitor {
  facts: DocumentFacts | undefined;
  /** Namespace and local name of the open elements, root first. */
  private readonly path: Step[] = [];
  private readonly declared = new Set<string>();
  private paths: Array<[FactName, readonly Step[]]> = [];
  private capture: { fact: FactName; depth: number; parts: string[] } | undefined;

  get wantsText(): boolean {
    return this.capture !== undefined;
  }

  startElement(name: string, attributes: readonly RawAttribute[], _offset: number, ns: string, local: string): void {
    for (const a of attributes) if (isNamespaceDeclaration(a.name) && a.value !== '') this.declared.add(a.value);
    this.path.push([ns, local]);
    const depth = this.path.length - 1;
    if (depth === 0) {
      const rootAttributes: Record<string, string> = {};
      for (const a of attributes)
        if (!a.name.includes(':') && a.name !== 'xmlns') rootAttributes[a.name] = normalizeSpace(a.value);
      this.facts = { rootLocalName: local, rootNamespace: ns, rootQName: name, rootAttributes, declaredNamespaces: [] };
      this.paths = Object.entries(factPathsFor(ns, local)) as Array<[FactName, readonly Step[]]>;
      return;
    }
    if (this.capture || !this.facts) return;
    for (const [fact, steps] of this.paths) {
      if (steps.length !== depth || this.facts[fact] !== undefined) continue;
      if (steps.every((step, k) => this.path[k + 1]?.[0] === step[0] && this.path[k + 1]?.[1] === step[1])) {
        this.capture = { fact, depth, parts: [] };
        break;
      }
    }
  }

  endElement(): void {
    const depth = this.path.length - 1;
    if (this.capture && this.capture.depth === depth && this.facts) {
      this.facts[this.capture.fact] = normalizeSpace(this.capture.parts.join(''));
      this.capture = undefined;
    }
    this.path.pop();
  }

  text(value: string): void {
    this.capture?.parts.push(value);
  }

  finish(): DocumentFacts {
    if (!this.facts) throw new GatewayError('INVALID_XML', '1:1: no root element');
    this.facts.declaredNamespaces = [...this.declared].sort();
    return this.facts;
  }
}

/** Reads the facts with the lexical scanner only: every safety check runs, no DOM is built. */
export function factsFromXml(input: Buffer | Uint8Array | string, limits?: Partial<XmlLimits>): DocumentFacts {
  const collector = new FactCollector();
  scanXmlInput(input, limits, collector);
  return collector.finish();
}

// ---------------------------------------------------------------------------------------------------------------------
// Classification

/** UNCL1001 codes of the credit note group (EN 16931 / Peppol credit note code list). */
const CREDIT_NOTE_TYPE_CODES = new Set(['81', '83', '261', '262', '296', '308', '381', '396', '420', '458', '532']);

function rootMatches(spec: RootSpec, facts: DocumentFacts): boolean {
  if (spec.localName !== facts.rootLocalName) return false;
  return spec.namespace === facts.rootNamespace || (spec.namespacePattern?.test(facts.rootNamespace) ?? false);
}

function testIdentifier(test: IdentifierTest, value: string | undefined): RegExpExecArray | boolean {
  if (value === undefined) return false;
  if ('equals' in test) return value === test.equals;
  if ('startsWith' in test) return value.startsWith(test.startsWith);
  if ('contains' in test) return value.includes(test.contains);
  return test.pattern.exec(value) ?? false;
}

interface Candidate {
  def: FormatDefinition;
  root: RootSpec;
  matcher: Matcher;
  score: number;
  captured: RegExpExecArray | undefined;
}

function applies(
  m: Matcher,
  facts: DocumentFacts,
  container: 'pdf' | undefined,
): { ok: boolean; captured?: RegExpExecArray } {
  if (m.container === 'pdf' && container !== 'pdf') return { ok: false };
  if (m.declaresNamespace !== undefined && !facts.declaredNamespaces.includes(m.declaresNamespace))
    return { ok: false };
  if (m.customizationId) {
    const r = testIdentifier(m.customizationId, facts.customizationId);
    if (r === false) return { ok: false };
    return r === true ? { ok: true } : { ok: true, captured: r };
  }
  return { ok: true };
}

function bestCandidate(
  defs: readonly FormatDefinition[],
  facts: DocumentFacts,
  container: 'pdf' | undefined,
): Candidate | undefined {
  let best: Candidate | undefined;
  for (const def of defs) {
    const root = def.roots.find((r) => rootMatches(r, facts));
    if (!root) continue;
    for (const matcher of def.match) {
      const r = applies(matcher, facts, container);
      if (!r.ok) continue;
      if (!best || matcher.score > best.score)
        best = { def, root, matcher, score: matcher.score, captured: r.captured };
    }
  }
  return best;
}

function documentTypeOf(root: RootSpec, facts: DocumentFacts): DocumentType {
  if (root.documentType === 'byTypeCode') {
    return facts.typeCode !== undefined && CREDIT_NOTE_TYPE_CODES.has(facts.typeCode) ? 'CreditNote' : 'Invoice';
  }
  if (root.documentType === 'byEbInterfaceDocumentType') {
    return facts.rootAttributes['DocumentType'] === 'CreditMemo' ? 'CreditNote' : 'Invoice';
  }
  return root.documentType;
}

function versionOf(c: Candidate, facts: DocumentFacts): string | undefined {
  if (c.matcher.version) return c.matcher.version;
  if (c.matcher.versionGroup !== undefined && c.captured?.[c.matcher.versionGroup])
    return c.captured[c.matcher.versionGroup];
  if (c.def.versionAttribute && facts.rootAttributes[c.def.versionAttribute])
    return facts.rootAttributes[c.def.versionAttribute];
  return c.def.version;
}

function toDetected(c: Candidate, facts: DocumentFacts, container: 'pdf' | undefined): DetectedFormat {
  const version = versionOf(c, facts);
  return {
    id: c.def.id,
    name: c.def.name,
    syntax: c.def.syntax,
    documentType: documentTypeOf(c.root, facts),
    urn: c.def.urn,
    rootName: facts.rootLocalName,
    rootNamespace: facts.rootNamespace,
    ...(facts.customizationId !== undefined ? { customizationId: facts.customizationId } : {}),
    ...(facts.profileId !== undefined ? { profileId: facts.profileId } : {}),
    ...(version !== undefined ? { version } : {}),
    ...(container ? { container } : {}),
  };
}

/** Known roots that are not business documents the gateway takes, with what to do instead. */
const ROOT_HINTS: ReadonlyArray<{ namespace: string; localName?: string; hint: string }> = [
  { namespace: NS.sbdh, hint: 'this is a Peppol SBDH envelope; send the business document it carries' },
  { namespace: NS.vefaTestSet, hint: 'this is a VEFA validator test set, not a business document' },
  { namespace: NS.orderX, hint: 'this is an Order-X order, which is not supported' },
  { namespace: NS.svefakturaEnvelope, hint: 'this is a Svefaktura ObjectEnvelope; send the invoice it carries' },
];

function describeRoot(facts: DocumentFacts): string {
  const ns = facts.rootNamespace ? `"${echo(facts.rootNamespace)}"` : '(none)';
  return `root element <${echo(facts.rootQName)}> in namespace ${ns}`;
}

function unknownFormat(facts: DocumentFacts, container: 'pdf' | undefined): GatewayError {
  const seen: string[] = [describeRoot(facts)];
  const paths = factPathsFor(facts.rootNamespace, facts.rootLocalName);
  const isUbl = paths === UBL_PATHS;
  const isCii = paths === CII_PATHS || paths === ZF1_PATHS;
  const idName = isUbl ? 'CustomizationID (BT-24)' : 'GuidelineSpecifiedDocumentContextParameter/ID (BT-24)';
  if (facts.customizationId !== undefined) seen.push(`${idName} "${echo(facts.customizationId)}"`);
  if (facts.profileId !== undefined && isUbl) seen.push(`ProfileID "${echo(facts.profileId)}"`);
  if (container) seen.push('read from a PDF attachment');

  const hints: string[] = [];
  const knownRoot = FORMATS.some((f) => f.roots.some((r) => rootMatches(r, facts)));
  if ((isUbl || isCii) && knownRoot) {
    if (facts.customizationId === undefined || facts.customizationId === '') {
      hints.push(`the specification identifier ${idName} is missing, so the format cannot be determined`);
      if (facts.profileId?.startsWith('urn:www.cenbii.eu:')) {
        hints.push(
          `ProfileID "${echo(facts.profileId)}" is a pre-EN 16931 CEN BII profile, as used by SI-UBL 1.2: ` +
            `${SI_UBL_1_REFUSAL}`,
        );
      }
    } else if (facts.customizationId.startsWith('urn:ferd:CrossIndustryDocument:invoice:1p0')) {
      hints.push('that is a ZUGFeRD 1.0 identifier, but ZUGFeRD 1.0 documents have the root rsm:CrossIndustryDocument');
    } else {
      hints.push(`the specification identifier is not one the gateway supports for <${echo(facts.rootLocalName)}>`);
    }
  } else if (!knownRoot) {
    const h = ROOT_HINTS.find(
      (r) => r.namespace === facts.rootNamespace && (r.localName === undefined || r.localName === facts.rootLocalName),
    );
    hints.push(h?.hint ?? 'this root element is not a supported document format');
  }
  return new GatewayError('UNKNOWN_FORMAT', `document format not recognised: ${seen.join(', ')}; ${hints.join('; ')}`, {
    details: {
      rootName: echo(facts.rootLocalName),
      rootNamespace: echo(facts.rootNamespace),
      ...(facts.customizationId !== undefined ? { customizationId: echo(facts.customizationId) } : {}),
    },
  });
}

/** Classifies facts against the registry; throws UNKNOWN_FORMAT (or the refusal of a retired format). */
export function classify(facts: DocumentFacts, container?: 'pdf'): DetectedFormat {
  const best = bestCandidate(FORMATS, facts, container);
  if (!best) throw unknownFormat(facts, container);
  if (best.def.refused) {
    const what = facts.customizationId !== undefined ? ` (CustomizationID "${echo(facts.customizationId)}")` : '';
    throw new GatewayError(best.def.refused.code, `${best.def.name}${what}: ${best.def.refused.message}`, {
      details: {
        format: best.def.id,
        refused: true,
        ...(facts.customizationId !== undefined ? { customizationId: echo(facts.customizationId) } : {}),
      },
    });
  }
  return toDetected(best, facts, container);
}

/** Applies an explicit sourceFormat (id or URN): it must be known and fit the document's root element. */
export function resolveSourceFormat(sourceFormat: string, facts: DocumentFacts, container?: 'pdf'): DetectedFormat {
  const all = findFormats(sourceFormat);
  const named = all.filter((f) => !f.refused);
  const refused = all.find((f) => f.refused)?.refused;
  if (named.length === 0 && refused) {
    // Naming a retired format gets its refusal, not "unknown".
    const def = all.find((f) => f.refused) as FormatDefinition;
    throw new GatewayError(refused.code, `${def.name}: ${refused.message}`, {
      details: { sourceFormat: echo(sourceFormat), format: def.id, refused: true },
    });
  }
  if (named.length === 0) {
    throw new GatewayError('UNKNOWN_FORMAT', `sourceFormat "${echo(sourceFormat)}" is not a known format id or URN`, {
      details: { sourceFormat: echo(sourceFormat), reason: 'unknown-source-format' },
    });
  }
  const fitting = named.filter((f) => f.roots.some((r) => rootMatches(r, facts)));
  if (fitting.length === 0) {
    const expected = [
      ...new Set(named.flatMap((f) => f.roots.map((r) => `<${r.localName}> in "${r.namespace}"`))),
    ].join(' or ');
    throw new GatewayError(
      'UNKNOWN_FORMAT',
      `sourceFormat "${echo(sourceFormat)}" (${named[0]?.syntax}) expects root element ${expected}, but the ` +
        `document has ${describeRoot(facts)}`,
      {
        details: {
          sourceFormat: echo(sourceFormat),
          reason: 'source-format-mismatch',
          rootName: echo(facts.rootLocalName),
          rootNamespace: echo(facts.rootNamespace),
        },
      },
    );
  }
  // When detection agrees with one of the named formats, keep its finer answer (version, container-specific id).
  try {
    const detected = classify(facts, container);
    if (fitting.some((f) => f.id === detected.id)) return detected;
  } catch {
    // forced formats need not be detectable
  }
  const rank = (f: FormatDefinition): number => {
    const pdfOnly = f.match.length > 0 && f.match.every((m) => m.container === 'pdf');
    const naming = f.id === sourceFormat.trim().toLowerCase() ? 0 : f.urn === sourceFormat.trim() ? 1 : 2;
    return (pdfOnly && container !== 'pdf' ? 10 : 0) + naming;
  };
  const def = [...fitting].sort((a, b) => rank(a) - rank(b))[0] as FormatDefinition;
  const root = def.roots.find((r) => rootMatches(r, facts)) as RootSpec;
  const matched = bestCandidate([def], facts, container);
  const candidate: Candidate = matched ?? { def, root, matcher: { score: 0 }, score: 0, captured: undefined };
  return toDetected(candidate, facts, container);
}

// ---------------------------------------------------------------------------------------------------------------------
// Entry points

function readFacts(input: Buffer | Uint8Array | string, opts: DetectOptions): DocumentFacts {
  const size = input.length;
  const strategy = opts.strategy ?? 'auto';
  const useDom = strategy === 'dom' || (strategy === 'auto' && size <= DOM_DETECTION_MAX_BYTES);
  return useDom ? factsFromDocument(parseXml(input, opts.limits)) : factsFromXml(input, opts.limits);
}

/**
 * Detects the format of an uploaded document: XML of any registered format, or a Factur-X / ZUGFeRD PDF (its
 * embedded XML is detected and `container: 'pdf'` set). Throws GatewayError: UNKNOWN_FORMAT (not recognised, retired
 * format, bad sourceFormat), INVALID_XML, UNSAFE_XML, PAYLOAD_TOO_LARGE, UNPROCESSABLE (unreadable PDF).
 *
 * SI-UBL 1.x and CEN BII / Peppol BIS 2 documents are refused with UNKNOWN_FORMAT (HTTP 400: the source format is
 * not supported), the message naming NLCIUS (SI-UBL 2.0) and BIS Billing 3 as the formats to use.
 */
export function detectFormat(input: Buffer | Uint8Array | string, opts: DetectOptions = {}): DetectedFormat {
  if (typeof input !== 'string' && isPdf(input)) {
    const attachment = extractFromPdf(input, opts.pdfLimits);
    const facts = readFacts(attachment.xml, opts);
    const detected = opts.sourceFormat ? resolveSourceFormat(opts.sourceFormat, facts, 'pdf') : classify(facts, 'pdf');
    return { ...detected, attachmentFilename: attachment.filename };
  }
  const facts = readFacts(input, opts);
  return opts.sourceFormat ? resolveSourceFormat(opts.sourceFormat, facts) : classify(facts);
}

/** Detection for a document already parsed with parseXml (validation and transformation hold one). */
export function detectFormatFromDocument(
  doc: ReadDocument,
  opts: { sourceFormat?: string; container?: 'pdf' } = {},
): DetectedFormat {
  const facts = factsFromDocument(doc);
  return opts.sourceFormat
    ? resolveSourceFormat(opts.sourceFormat, facts, opts.container)
    : classify(facts, opts.container);
}
