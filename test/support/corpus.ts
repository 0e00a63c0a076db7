import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Real documents written by others live beside the repo, never in it. */
export const CORPUS_DIR = path.resolve(__dirname, '../../../shared/corpus');

/**
 * The corpus path of `relative`, which must exist: a suite that needs the corpus fails with this message instead of
 * skipping silently (the corpus is not in the repository; see ../shared/corpus/SOURCES.md).
 */
export function requireCorpus(relative = '.'): string {
  const full = path.join(CORPUS_DIR, relative);
  if (!existsSync(full)) {
    throw new Error(
      `${full} missing: tests read the shared corpus beside the repository (../shared/corpus, SOURCES.md)`,
    );
  }
  return full;
}

export function corpusFile(relative: string): Buffer {
  return readFileSync(path.join(CORPUS_DIR, relative));
}

export const SAMPLE_UBL_INVOICE = 'en16931/ubl-examples/ubl-tc434-example1.xml';
export const SAMPLE_CII_INVOICE = 'en16931/cii-examples/CII_example1.xml';
