import type { DetectedFormat } from './detect';
import { PEPPOL_SYNTAX_VERSIONS } from './vocabulary';

/**
 * The Peppol document type identifier value (scheme `busdox-docid-qns`) of a detected UBL or CII document:
 * `<root namespace>::<root name>##<customization id>::<syntax version>` (Peppol Policy for use of identifiers 4.x,
 * section 5). Undefined for syntaxes that are not exchanged under such an identifier (the catalogue's
 * `peppolSyntaxVersion`), or without a CustomizationID.
 */
export function peppolDocumentTypeId(
  format: Pick<DetectedFormat, 'syntax' | 'rootName' | 'rootNamespace' | 'customizationId'>,
): string | undefined {
  if (!format.customizationId) return undefined;
  const version = PEPPOL_SYNTAX_VERSIONS[format.syntax];
  if (!version) return undefined;
  return `${format.rootNamespace}::${format.rootName}##${format.customizationId}::${version}`;
}
