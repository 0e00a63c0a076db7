import type { TargetFlavour } from '../en16931/codec-types';
import { FORMAT_CATALOGUE } from '../formats/catalogue';

/**
 * The EN 16931 flavours the gateway can write: the catalogue entries with a target (src/formats/catalogue.ts), with
 * the specification identifier (BT-24) and business process (BT-23) they get, the norm's mandatory terms, and what each
 * CIUS requires beyond the norm (src/en16931/cius-requirements.ts). A requirement the document does not meet refuses
 * the conversion (422) with its rule and term; nothing is invented to satisfy it.
 */

export type { FacturXProfile, Requirement, TargetFlavour } from '../en16931/codec-types';

export const TARGET_FLAVOURS: readonly TargetFlavour[] = FORMAT_CATALOGUE.flatMap((e) => (e.target ? [e.target] : []));

export function targetFlavour(id: string): TargetFlavour | undefined {
  return TARGET_FLAVOURS.find((t) => t.id === id);
}
