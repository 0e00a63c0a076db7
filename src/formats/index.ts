/** Document formats: the secure XML parser, the format catalogue, detection and the Factur-X PDF reader. */
export {
  detectFormat,
  detectFormatFromDocument,
  classify,
  resolveSourceFormat,
  factsFromDocument,
  factsFromXml,
  DOM_DETECTION_MAX_BYTES,
  type DetectedFormat,
  type DetectOptions,
  type DocumentFacts,
} from './detect';
export {
  FORMATS,
  listFormats,
  getFormat,
  findFormats,
  documentTypesOf,
  type DocumentType,
  type FormatDefinition,
  type FormatListing,
  type Syntax,
} from './format-ids';
export { peppolDocumentTypeId } from './document-type-id';
export { FORMAT_CATALOGUE, catalogueEntry, type CatalogueEntry, type RuleSpec } from './catalogue';
export {
  extractFromPdf,
  readHybridPdf,
  isPdf,
  DEFAULT_PDF_LIMITS,
  INVOICE_ATTACHMENT_NAMES,
  type HybridPdf,
  type PdfAttachment,
  type PdfLayer,
  type PdfLimits,
} from './facturx/pdf-attachment';
export {
  parseXml,
  parseXmlForReading,
  decodeXml,
  scanXmlInput,
  select,
  selectOne,
  text,
  DEFAULT_XML_LIMITS,
  type XmlLimits,
  type NamespaceMap,
  type XPathVariables,
} from './xml/secure-parser';
export { NS, UBL_NS, CII_NS } from './xml/namespaces';
export type { ReadAttr, ReadDocument, ReadElement, ReadList, ReadNode } from './xml/read-tree';
