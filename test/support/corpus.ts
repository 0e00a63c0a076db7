import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Real documents written by others live beside the repo, never in it. */
export const CORPUS_DIR = path.resolve(__dirname, '../../../shared/corpus');

export function corpusFile(relative: string): Buffer {
  return readFileSync(path.join(CORPUS_DIR, relative));
}

export const SAMPLE_UBL_INVOICE = 'en16931/ubl-examples/ubl-tc434-example1.xml';
export const SAMPLE_CII_INVOICE = 'en16931/cii-examples/CII_example1.xml';
