import type { ModelReader, ModelWriter, TargetFlavour } from '../en16931/codec-types';
import type { DetectedFormat } from '../formats';
import { catalogueEntry } from '../formats/catalogue';

/**
 * How each format enters and leaves the EN 16931 model: its catalogue entry's reader and writer
 * (src/formats/catalogue.ts). Every conversion of the table goes source → model → target; transform.ts does not change
 * when a format is added.
 */

export type { ModelOutput, ModelReader, ModelWriter, WriterOptions } from '../en16931/codec-types';

export function modelReader(format: DetectedFormat): ModelReader | undefined {
  return catalogueEntry(format.id)?.reader;
}

export function modelWriter(target: TargetFlavour): ModelWriter | undefined {
  return catalogueEntry(target.id)?.writer;
}
