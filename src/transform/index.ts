/** Transformation between e-invoice formats through the EN 16931 model; the table of supported pairs is data. */
export {
  transformDocument,
  readInvoiceModel,
  inProcessTransform,
  type TransformRunner,
  type TransformOptions,
  type TransformResult,
  type TransformReport,
  type FormatRef,
} from './transform';
export {
  FATTURAPA,
  TRANSFORMATIONS,
  lookupTransformation,
  listTransformations,
  renderTransformationTable,
  EN16931_TARGETS,
  EBINTERFACE_SOURCES,
  EBINTERFACE_TARGETS,
  type TransformationRow,
  type TransformationListing,
} from './table';
export { TARGET_FLAVOURS, targetFlavour, type TargetFlavour, type Requirement } from './targets';
