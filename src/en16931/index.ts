/** The EN 16931 semantic model and its UBL 2.1 / CII D16B readers and writers. */
export * from './model';
export { readUbl } from './ubl-reader';
export { readCii, TAX_POINT_CODE_2005_TO_2475, TAX_POINT_CODE_2475_TO_2005 } from './cii-reader';
export { writeUbl, type WriteResult, type UblWriteOptions } from './ubl-writer';
export { writeCii } from './cii-writer';
export { readEbInterface, EBINTERFACE_READ_NAMESPACES } from './ebinterface-reader';
export { writeEbInterface, EBINTERFACE_61_NS } from './ebinterface-writer';
export { canonicalJson } from './xml-read';
export { comparableCore } from './compare';
export { add as addDecimal, subtract as subtractDecimal, compare as compareDecimal, isDecimal } from './decimal';
