import type { TddProfileId, TddVersion } from './types';

/**
 * The Tax Data Document profiles the library writes and validates, as data. A profile is one TDD of the OpenPeppol
 * family: the same structure (pxs:TaxData with the reported document), its own namespace, TDT-001 value, Peppol
 * document type id and pinned rule packs. Adding a profile of the same structure is a row here plus its packs in
 * transforms/rules-manifest.json (docs/decisions.md "Tax Data Document").
 */

export const TDD_PROFILE_IDS: readonly TddProfileId[] = ['vida-1', 'sk-1'];

/** The profile of an authority configured without one (configuration files written before profiles existed). */
export const DEFAULT_TDD_PROFILE: TddProfileId = 'vida-1';

export interface TddProfileVersion {
  /**
   * The pinned rule packs (`id@version`, comma separated, as the validator's ruleSet) the documents of this version
   * are validated with; undefined when the artefacts are not pinned, and then validation is refused.
   */
  rulePacks: string | undefined;
  /** Whether the packs include an XSD: false when the profile publishes Schematron only. */
  schema: boolean;
}

export interface TddProfile {
  id: TddProfileId;
  /** Human name, e.g. for the stored document's format. */
  name: string;
  /** The gateway's format id of documents of this profile. */
  formatId: string;
  /** The XML namespace of pxs:TaxData and the pxs: elements. */
  namespace: string;
  /** TDT-001 Specification identifier (cbc:CustomizationID). */
  customizationId: string;
  /** TDT-002 Business process type (cbc:ProfileID). */
  profileId: string;
  /** The Peppol document type id the TDD is sent under (busdox-docid-qns::<ns>::TaxData##<customization>::1.0). */
  documentTypeId: string;
  /** The Peppol process id the TDD is sent under. */
  processId: string;
  /**
   * Business terms this profile requires beyond the ones every profile does (`missingTerms`), as the profile's rules
   * require them: asked before deriving, so a missing one is a derivation error naming the term.
   */
  requiredTerms: readonly 'BT-44'[];
  /** The specification versions of this profile the writer renders, with their pinned rule packs. */
  versions: Readonly<Partial<Record<TddVersion, TddProfileVersion>>>;
}

const PROCESS_ID = 'cenbii-procid-ubl::urn:peppol:taxreporting';

function documentTypeIdOf(namespace: string, customizationId: string): string {
  return `busdox-docid-qns::${namespace}::TaxData##${customizationId}::1.0`;
}

const VIDA_NAMESPACE = 'urn:peppol:schema:vida-taxdata:1.0';
const VIDA_CUSTOMIZATION = 'urn:peppol:taxdata:vida-1';
const SK_NAMESPACE = 'urn:peppol:schema:sk-taxdata:1.0';
const SK_CUSTOMIZATION = 'urn:peppol:taxdata:sk-1';

export const TDD_PROFILES: Readonly<Record<TddProfileId, TddProfile>> = {
  /**
   * The Peppol ViDA pilot TDD. 1.1.0 (XSD and Schematron of 2026-09-14) is rendered but has no pinned packs: the
   * registry rules:fetch uses serves the ViDA artefacts only up to 1.0.0.
   */
  'vida-1': {
    id: 'vida-1',
    name: 'Peppol ViDA pilot Tax Data Document',
    formatId: 'peppol-vida-tdd',
    namespace: VIDA_NAMESPACE,
    customizationId: VIDA_CUSTOMIZATION,
    profileId: 'urn:peppol:taxreporting',
    documentTypeId: documentTypeIdOf(VIDA_NAMESPACE, VIDA_CUSTOMIZATION),
    processId: PROCESS_ID,
    requiredTerms: [],
    versions: {
      '1.0.0': { rulePacks: 'peppol-vida-tdd-xsd@1.0.0,peppol-vida-tdd@1.0.0', schema: true },
      '1.1.0': { rulePacks: undefined, schema: true },
    },
  },
  /**
   * The Slovak Republic TDD 1.0.0 (mandatory from 2027-01-01): the ViDA 1.0.0 structure in its own namespace. Only
   * the Schematron is published (phive-rules-peppol); there is no SK schema, so no schema check runs.
   */
  'sk-1': {
    id: 'sk-1',
    name: 'Peppol Slovak Republic Tax Data Document',
    formatId: 'peppol-sk-tdd',
    namespace: SK_NAMESPACE,
    customizationId: SK_CUSTOMIZATION,
    profileId: 'urn:peppol:taxreporting',
    documentTypeId: documentTypeIdOf(SK_NAMESPACE, SK_CUSTOMIZATION),
    processId: PROCESS_ID,
    // The Slovak CEN rules keep BR-07 (Buyer name), which ViDA 1.0.0 dropped.
    requiredTerms: ['BT-44'],
    versions: {
      '1.0.0': { rulePacks: 'peppol-sk-tdd@1.0.0', schema: false },
    },
  },
};

/** The profile of an id; refuses an unknown one, listing the known. */
export function tddProfile(id: string = DEFAULT_TDD_PROFILE): TddProfile {
  const p = (TDD_PROFILES as Readonly<Record<string, TddProfile | undefined>>)[id];
  if (!p) throw new Error(`unknown Tax Data Document profile "${id}" (known: ${TDD_PROFILE_IDS.join(', ')})`);
  return p;
}

/** The profile a document of this root namespace is written in, if any. */
export function tddProfileOfNamespace(namespace: string | null | undefined): TddProfile | undefined {
  return TDD_PROFILE_IDS.map((id) => TDD_PROFILES[id]).find((p) => p.namespace === namespace);
}
