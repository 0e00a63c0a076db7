import type { ReadDocument } from '../formats/xml/read-tree';
import {
  readCii,
  readEbInterface,
  readUbl,
  writeCii,
  writeEbInterface,
  writeUbl,
  type Invoice,
  type ReadResult,
  type WriteResult,
} from '../en16931';
import type { DetectedFormat } from '../formats';
import { writeFacturXPdf } from './facturx-pdf';
import { readFatturaPa } from './fatturapa/reader';
import { writeFatturaPa } from './fatturapa/writer';
import type { TargetFlavour } from './targets';

/**
 * How each syntax enters and leaves the EN 16931 model. Every conversion of the table goes source → model → target,
 * so a new syntax plugs in here (a reader, a writer or both) and in the table; transform.ts does not change.
 */

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

/** Readers by source base format id (checked first, for formats sharing a syntax name) and by syntax. */
const READERS_BY_FORMAT = new Map<string, ModelReader>();
const READERS_BY_SYNTAX = new Map<string, ModelReader>([
  ['UBL', (doc) => readUbl(doc)],
  ['CII', (doc) => readCii(doc)],
  ['FatturaPA', (doc) => readFatturaPa(doc)],
  ['ebInterface', (doc) => readEbInterface(doc)],
]);
const WRITERS_BY_SYNTAX = new Map<string, ModelWriter>([
  ['UBL', (inv, target) => writeUbl(inv, target.taxSchemeId !== undefined ? { taxSchemeId: target.taxSchemeId } : {})],
  ['CII', (inv) => writeCii(inv)],
  ['FatturaPA', (inv) => writeFatturaPa(inv)],
  ['ebInterface', (inv) => writeEbInterface(inv)],
]);

const baseId = (id: string): string => id.replace(/-(invoice|creditnote)$/, '');

export function modelReader(format: DetectedFormat): ModelReader | undefined {
  return READERS_BY_FORMAT.get(baseId(format.id)) ?? READERS_BY_SYNTAX.get(format.syntax);
}

/** Factur-X targets: the CII embedded in a PDF/A-3 with a rendering of the invoice. */
const FACTURX_WRITER: ModelWriter = (inv, target, options) =>
  writeFacturXPdf(inv, target, options?.date ? { date: options.date } : {});

export function modelWriter(target: TargetFlavour): ModelWriter | undefined {
  if (target.facturx) return FACTURX_WRITER;
  return WRITERS_BY_SYNTAX.get(target.syntax);
}

/** Registers a reader for source formats (base ids) that need their own, e.g. a UBL 1.0 dialect. */
export function registerFormatReader(baseIds: readonly string[], reader: ModelReader): void {
  for (const id of baseIds) READERS_BY_FORMAT.set(id, reader);
}

export function registerSyntax(syntax: string, codec: { read?: ModelReader; write?: ModelWriter }): void {
  if (codec.read) READERS_BY_SYNTAX.set(syntax, codec.read);
  if (codec.write) WRITERS_BY_SYNTAX.set(syntax, codec.write);
}
