import { FORMAT_CATALOGUE } from './catalogue';
import { DOCUMENT_TYPES, type DocumentType, type FormatDefinition, type Syntax } from './vocabulary';

/**
 * The format registry detection reads: every format definition of the catalogue (catalogue.ts), in its order, with
 * lookups by id, URN and alias. The identifiers and types are the catalogue's vocabulary (vocabulary.ts).
 */

export * from './vocabulary';

export const FORMATS: readonly FormatDefinition[] = Object.freeze(FORMAT_CATALOGUE.flatMap((e) => e.formats));

// ---------------------------------------------------------------------------------------------------------------------
// Lookups

export interface FormatListing {
  id: string;
  name: string;
  syntax: Syntax;
  urn: string;
  documentTypes: DocumentType[];
  version?: string;
  refused?: boolean;
}

export function documentTypesOf(def: FormatDefinition): DocumentType[] {
  const out = new Set<DocumentType>();
  for (const r of def.roots) {
    if (r.documentType === 'byTypeCode' || r.documentType === 'byEbInterfaceDocumentType') {
      out.add('Invoice');
      out.add('CreditNote');
    } else out.add(r.documentType);
  }
  return DOCUMENT_TYPES.filter((t) => out.has(t));
}

/** The registry as data. Refused (retired) formats are left out unless asked for. */
export function listFormats(opts: { includeRefused?: boolean } = {}): FormatListing[] {
  return FORMATS.filter((f) => opts.includeRefused || !f.refused).map((f) => ({
    id: f.id,
    name: f.name,
    syntax: f.syntax,
    urn: f.urn,
    documentTypes: documentTypesOf(f),
    ...(f.version ? { version: f.version } : {}),
    ...(f.refused ? { refused: true } : {}),
  }));
}

export function getFormat(id: string): FormatDefinition | undefined {
  const key = id.trim().toLowerCase();
  return FORMATS.find((f) => f.id === key);
}

/** Entries a `sourceFormat` value (id, URN or alias) names; several when a URN covers invoice and credit note. */
export function findFormats(idOrUrn: string): FormatDefinition[] {
  const key = idOrUrn.trim();
  const lower = key.toLowerCase();
  return FORMATS.filter((f) => f.id === lower || f.urn === key || (f.aliases ?? []).includes(key));
}
