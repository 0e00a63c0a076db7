import type { DetectedFormat, Syntax } from '../formats/vocabulary';
import type { ReadDocument } from '../formats/xml/read-tree';
import type { Invoice, ReadResult } from './model';
import type { WriteResult } from './ubl-writer';

/**
 * The shapes every reader, writer and CIUS requirement of the format catalogue (src/formats/catalogue.ts) has. Every
 * conversion goes source → model → target, so a format plugs in with a reader, a writer or both.
 */

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

/** Reads a parsed source document into the model; `format` is what detection (or `sourceFormat`) said it is. */
export type ModelReader = (doc: ReadDocument, format: DetectedFormat) => ReadResult;

/** What a writer produced: the XML, and for a container target (Factur-X) the file that carries it. */
export interface ModelOutput extends WriteResult {
  /** The container document (a Factur-X PDF/A-3) when the target is not bare XML. */
  pdf?: Buffer;
}

export interface WriterOptions {
  /** Creation date written into a PDF (default: now); fixed in tests for stable bytes. */
  date?: Date;
}

/** Writes the model in the target's syntax. */
export type ModelWriter = (inv: Invoice, target: TargetFlavour, options?: WriterOptions) => ModelOutput;

/** How a Factur-X profile is packaged (Factur-X 1.0 / ZUGFeRD 2.x, PDF part). */
export interface FacturXProfile {
  /** XMP fx:ConformanceLevel. */
  conformanceLevel: string;
  /** Embedded file name: `factur-x.xml`, `xrechnung.xml` for the XRECHNUNG profile (ZUGFeRD 2.1.1 and later). */
  filename: string;
  /** MINIMUM and BASIC WL are not invoices (`Data`); the invoice profiles are the invoice itself (`Alternative`). */
  relationship: 'Alternative' | 'Data';
}

/** An EN 16931 flavour the gateway writes: identifiers it gets, what its CIUS requires beyond the norm. */
export interface TargetFlavour {
  /** Base format id (without -invoice / -creditnote). */
  id: string;
  name: string;
  /** The syntax written (the catalogue entry's writer). */
  syntax: Syntax;
  /**
   * CIUS family: same family keeps the source's BT-24 (its version), another family sets `specificationId`.
   * 'fatturapa' is the Italian national syntax, which has no BT-24 (its `specificationId` is empty).
   */
  family: 'en16931' | 'peppol-bis3' | 'xrechnung' | 'nlcius' | 'pint' | 'fatturapa' | 'ebinterface' | 'facturx';
  specificationId: string;
  /** BT-23 written when the document has none (or one the target does not accept). */
  defaultProcess?: string;
  acceptsProcess?: RegExp;
  requirements: readonly Requirement[];
  /** cac:TaxScheme/cbc:ID written for the sales tax when it is not VAT (PINT A-NZ: GST). */
  taxSchemeId?: string;
  /** Target-specific rewriting of identifiers before the requirements are checked (each change listed in `changed`). */
  adapt?: (inv: Invoice, changed: string[]) => void;
  /** Factur-X / ZUGFeRD targets: the CII goes into a PDF/A-3 (the entry's writer is the PDF writer). */
  facturx?: FacturXProfile;
}
