/**
 * Peppol identifiers (Policy for use of Identifiers 4.4): participants (`iso6523-actorid-upis`), document types
 * (`busdox-docid-qns`, `peppol-doctype-wildcard`) and processes (`cenbii-procid-ubl`). Pure: no I/O.
 *
 * The URI form is `scheme::value`; percent-encoding is only for SMP URLs. Participant values of `iso6523-actorid-upis`
 * compare case-insensitively and are kept lower-cased here (the SML hashes the lower-cased value too); document type
 * and process values are case-sensitive and kept as given.
 */
import { PeppolError } from './peppol-error';

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const DOCTYPE_SCHEME_BUSDOX = 'busdox-docid-qns';
export const DOCTYPE_SCHEME_WILDCARD = 'peppol-doctype-wildcard';
export const PROCESS_SCHEME = 'cenbii-procid-ubl';
export const TRANSPORT_PROFILE_AS4_V2 = 'peppol-transport-as4-v2_0';

const MAX_SCHEME_LENGTH = 25;
const MAX_PARTICIPANT_VALUE_LENGTH = 4 + 1 + 130;
const MAX_DOCTYPE_VALUE_LENGTH = 500;
const MAX_PROCESS_VALUE_LENGTH = 200;
const PARTICIPANT_SCHEME_RE = /^[a-z0-9]+-[a-z0-9]+-[a-z0-9]+$/;
/** POLICY 1: after the ICD only letters, digits and `-._~`. */
const ISO6523_VALUE_RE = /^(\d{4}):([A-Za-z0-9\-._~]+)$/;
const WHITESPACE_RE = /[\t\n\v\f\r \u0085\u00a0]/;

export interface ParticipantId {
  readonly scheme: string;
  readonly value: string;
}
export interface DocumentTypeId {
  readonly scheme: string;
  readonly value: string;
}
export interface ProcessId {
  readonly scheme: string;
  readonly value: string;
}

function invalid(message: string, details: Record<string, unknown> = {}): PeppolError {
  return new PeppolError('BAD_REQUEST', 'invalid-identifier', message, { details });
}

/** Problem with an identifier scheme common to all identifier types, or undefined. */
function schemeProblem(scheme: string): string | undefined {
  if (scheme.length === 0) return 'the scheme is empty';
  if (scheme.length > MAX_SCHEME_LENGTH) return `the scheme is longer than ${MAX_SCHEME_LENGTH} characters`;
  if (scheme.includes('::')) return 'the scheme contains "::"';
  if (WHITESPACE_RE.test(scheme)) return 'the scheme contains whitespace';
  return undefined;
}

function isLatin1(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------------
// Participants

/** Why `scheme::value` is not a valid participant identifier, or undefined when it is. */
export function participantIdProblem(scheme: string, value: string): string | undefined {
  const sp = schemeProblem(scheme);
  if (sp) return sp;
  // The scheme becomes a DNS label in the SML name, hence the narrow pattern.
  if (!PARTICIPANT_SCHEME_RE.test(scheme.toLowerCase()))
    return `the participant scheme "${scheme}" does not have the form xxx-yyy-zzz`;
  if (value.length === 0) return 'the participant value is empty';
  if (value.length > MAX_PARTICIPANT_VALUE_LENGTH)
    return `the participant value is longer than ${MAX_PARTICIPANT_VALUE_LENGTH} characters`;
  if (scheme.toLowerCase() === PARTICIPANT_SCHEME) {
    if (!/^\d{4}:/.test(value)) return `the participant value "${value}" does not start with a 4-digit ICD and ":"`;
    if (!ISO6523_VALUE_RE.test(value)) {
      return (
        `the participant value "${value}" may only contain letters, digits and "-._~" after the ICD (Peppol ` +
        `POLICY 1)`
      );
    }
  } else if (!/^[\x21-\x7e]+$/.test(value)) {
    return 'the participant value must be printable US-ASCII';
  }
  return undefined;
}

export function participantId(scheme: string, value: string): ParticipantId {
  const problem = participantIdProblem(scheme, value);
  if (problem) throw invalid(`Invalid participant identifier ${scheme}::${value}: ${problem}`, { scheme, value });
  const s = scheme.toLowerCase();
  return Object.freeze({ scheme: s, value: s === PARTICIPANT_SCHEME ? value.toLowerCase() : value });
}

/** `0088:123` in the default scheme. */
export function peppolParticipant(value: string): ParticipantId {
  return participantId(PARTICIPANT_SCHEME, value);
}

/** Parses `iso6523-actorid-upis::0088:123` (the scheme is mandatory). */
export function parseParticipantId(uri: string): ParticipantId {
  const { scheme, value } = splitUri(uri, 'participant');
  return participantId(scheme, value);
}

export function participantIdEquals(a: ParticipantId, b: ParticipantId): boolean {
  if (a.scheme.toLowerCase() !== b.scheme.toLowerCase()) return false;
  return a.scheme.toLowerCase() === PARTICIPANT_SCHEME
    ? a.value.toLowerCase() === b.value.toLowerCase()
    : a.value === b.value;
}

/** The ICD of an `iso6523-actorid-upis` participant (`0088:…` → `0088`). */
export function icdOf(p: ParticipantId): string {
  const m = ISO6523_VALUE_RE.exec(p.value);
  if (p.scheme !== PARTICIPANT_SCHEME || !m) throw invalid(`${formatId(p)} is not an ISO 6523 participant identifier`);
  return m[1] as string;
}

// ---------------------------------------------------------------------------------------------------------------------
// Document types

export interface DocumentTypeParts {
  /**
   * Everything before `##`: `<root namespace>::<local name>` for XML syntaxes, e.g. `urn:peppol:doctype:pdf+xml`
   * otherwise.
   */
  syntaxSpecificId: string;
  /** Present when the syntax-specific id has the XML form. */
  rootNamespace?: string;
  localName?: string;
  customizationId: string;
  version: string;
}

/**
 * Splits a document type value into its parts (`<syntax id>##<customization>::<version>`), or undefined if it has not
 * that shape.
 */
export function documentTypeParts(value: string): DocumentTypeParts | undefined {
  const hash = value.indexOf('##');
  if (hash <= 0) return undefined;
  const syntaxSpecificId = value.slice(0, hash);
  const rest = value.slice(hash + 2);
  const sep = rest.lastIndexOf('::');
  if (sep <= 0 || sep + 2 >= rest.length) return undefined;
  const parts: DocumentTypeParts = {
    syntaxSpecificId,
    customizationId: rest.slice(0, sep),
    version: rest.slice(sep + 2),
  };
  const rootSep = syntaxSpecificId.lastIndexOf('::');
  if (rootSep > 0 && rootSep + 2 < syntaxSpecificId.length) {
    parts.rootNamespace = syntaxSpecificId.slice(0, rootSep);
    parts.localName = syntaxSpecificId.slice(rootSep + 2);
  }
  return parts;
}

export function documentTypeValueOf(parts: Omit<DocumentTypeParts, 'rootNamespace' | 'localName'>): string {
  return `${parts.syntaxSpecificId}##${parts.customizationId}::${parts.version}`;
}

export function documentTypeIdProblem(scheme: string, value: string): string | undefined {
  const sp = schemeProblem(scheme);
  if (sp) return sp;
  if (value.length === 0) return 'the document type value is empty';
  if (value.length > MAX_DOCTYPE_VALUE_LENGTH)
    return `the document type value is longer than ${MAX_DOCTYPE_VALUE_LENGTH} characters`;
  if (!isLatin1(value)) return 'the document type value contains characters outside ISO-8859-1';
  if (scheme === DOCTYPE_SCHEME_BUSDOX || scheme === DOCTYPE_SCHEME_WILDCARD) {
    const parts = documentTypeParts(value);
    if (!parts)
      return `the document type value "${value}" does not have the form <syntax id>##<customization>::<version>`;
    if (WHITESPACE_RE.test(parts.customizationId)) return 'the customization id contains whitespace';
    if (scheme === DOCTYPE_SCHEME_BUSDOX && parts.customizationId.includes('*')) {
      return `"*" is only allowed in the customization id with scheme ${DOCTYPE_SCHEME_WILDCARD}`;
    }
    if (scheme === DOCTYPE_SCHEME_WILDCARD && parts.customizationId.slice(0, -1).includes('*')) {
      return 'a wildcard "*" may only end the customization id';
    }
  }
  return undefined;
}

export function documentTypeId(scheme: string, value: string): DocumentTypeId {
  const problem = documentTypeIdProblem(scheme, value);
  if (problem) throw invalid(`Invalid document type identifier ${scheme}::${value}: ${problem}`, { scheme, value });
  return Object.freeze({ scheme, value });
}

export function parseDocumentTypeId(uri: string): DocumentTypeId {
  const { scheme, value } = splitUri(uri, 'document type');
  return documentTypeId(scheme, value);
}

export function documentTypeIdEquals(a: DocumentTypeId, b: DocumentTypeId): boolean {
  return a.scheme === b.scheme && a.value === b.value;
}

/**
 * The registered document type that serves `search` under `peppol-doctype-wildcard` best-match rules (PFUOI 4.3): an
 * exact match first, then `<customization>*`, then ever shorter `@`-separated prefixes of the customization, each
 * followed by `*`. Only candidates with the wildcard scheme take part. Undefined when none matches.
 */
export function selectWildcardDocumentType(
  candidates: readonly DocumentTypeId[],
  search: DocumentTypeId,
): DocumentTypeId | undefined {
  const parts = documentTypeParts(search.value);
  if (!parts) return undefined;
  let custom = parts.customizationId.endsWith('*') ? parts.customizationId.slice(0, -1) : parts.customizationId;
  if (custom.includes('*')) return undefined;
  const withCustom = (c: string): string => documentTypeValueOf({ ...parts, customizationId: c });
  const find = (value: string): DocumentTypeId | undefined =>
    candidates.find((d) => d.scheme === DOCTYPE_SCHEME_WILDCARD && d.value === value);

  const exact = find(withCustom(custom));
  if (exact) return exact;
  for (let guard = 0; guard < 64; guard++) {
    const hit = find(withCustom(`${custom}*`));
    if (hit) return hit;
    const at = custom.lastIndexOf('@');
    if (at < 0) return undefined;
    custom = custom.slice(0, at);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------------
// Processes

export function processIdProblem(scheme: string, value: string): string | undefined {
  const sp = schemeProblem(scheme);
  if (sp) return sp;
  if (value.length === 0) return 'the process value is empty';
  if (value.length > MAX_PROCESS_VALUE_LENGTH)
    return `the process value is longer than ${MAX_PROCESS_VALUE_LENGTH} characters`;
  if (!isLatin1(value)) return 'the process value contains characters outside ISO-8859-1';
  if (WHITESPACE_RE.test(value)) return 'the process value contains whitespace';
  return undefined;
}

export function processId(scheme: string, value: string): ProcessId {
  const problem = processIdProblem(scheme, value);
  if (problem) throw invalid(`Invalid process identifier ${scheme}::${value}: ${problem}`, { scheme, value });
  return Object.freeze({ scheme, value });
}

export function parseProcessId(uri: string): ProcessId {
  const { scheme, value } = splitUri(uri, 'process');
  return processId(scheme, value);
}

export function processIdEquals(a: ProcessId, b: ProcessId): boolean {
  return a.scheme === b.scheme && a.value === b.value;
}

// ---------------------------------------------------------------------------------------------------------------------
// URI form

function splitUri(uri: string, what: string): { scheme: string; value: string } {
  const i = uri.indexOf('::');
  if (i <= 0) throw invalid(`Invalid ${what} identifier "${uri}": expected <scheme>::<value>`, { uri });
  return { scheme: uri.slice(0, i), value: uri.slice(i + 2) };
}

/** `scheme::value`, as used in AS4 headers and logs (never percent-encoded). */
export function formatId(id: { scheme: string; value: string }): string {
  return `${id.scheme}::${id.value}`;
}

/** `scheme::value` percent-encoded as one SMP URL path segment (`:` → `%3A`, `#` → `%23`). */
export function encodeIdForUrl(id: { scheme: string; value: string }): string {
  return encodeURIComponent(formatId(id));
}

// ---------------------------------------------------------------------------------------------------------------------
// ICD code list (Peppol participant identifier schemes)

export type IcdState = 'active' | 'deprecated' | 'removed';
export interface IcdInfo {
  icd: string;
  schemeId: string;
  country: string;
  state: IcdState;
}

/** Snapshot of the Peppol participant identifier scheme code list 9.3 (100 entries). */
export const ICD_CODE_LIST_VERSION = '9.3';

// [icd, schemeId, country, state] — A active, D deprecated, R removed
const ICD_TABLE: ReadonlyArray<readonly [string, string, string, 'A' | 'D' | 'R']> = [
  ['0002', 'FR:SIRENE', 'FR', 'A'],
  ['0007', 'SE:ORGNR', 'SE', 'A'],
  ['0009', 'FR:SIRET', 'FR', 'A'],
  ['0037', 'FI:OVT', 'FI', 'R'],
  ['0060', 'DUNS', 'international', 'A'],
  ['0088', 'GLN', 'international', 'A'],
  ['0096', 'DK:P', 'DK', 'A'],
  ['0097', 'IT:FTI', 'IT', 'A'],
  ['0106', 'NL:KVK', 'NL', 'A'],
  ['0130', 'EU:NAL', 'international', 'A'],
  ['0135', 'IT:SIA', 'IT', 'A'],
  ['0142', 'IT:SECETI', 'IT', 'A'],
  ['0151', 'AU:ABN', 'AU', 'A'],
  ['0183', 'CH:UIDB', 'CH', 'A'],
  ['0184', 'DK:DIGST', 'DK', 'A'],
  ['0188', 'JP:SST', 'JP', 'A'],
  ['0190', 'NL:OINO', 'NL', 'A'],
  ['0191', 'EE:CC', 'EE', 'A'],
  ['0192', 'NO:ORG', 'NO', 'A'],
  ['0193', 'UBLBE', 'BE', 'A'],
  ['0195', 'SG:UEN', 'SG', 'A'],
  ['0196', 'IS:KTNR', 'IS', 'A'],
  ['0198', 'DK:ERST', 'DK', 'A'],
  ['0199', 'LEI', 'international', 'A'],
  ['0200', 'LT:LEC', 'LT', 'A'],
  ['0201', 'IT:CUUO', 'IT', 'A'],
  ['0204', 'DE:LWID', 'DE', 'A'],
  ['0205', 'IT:COD', 'IT', 'A'],
  ['0208', 'BE:EN', 'BE', 'A'],
  ['0209', 'GS1', 'international', 'A'],
  ['0210', 'IT:CFI', 'IT', 'A'],
  ['0211', 'IT:IVA', 'IT', 'A'],
  ['0212', 'FI:ORG', 'FI', 'R'],
  ['0213', 'FI:VAT', 'FI', 'R'],
  ['0215', 'FI:NSI', 'FI', 'R'],
  ['0216', 'FI:OVT2', 'FI', 'A'],
  ['0218', 'LV:URN', 'LV', 'A'],
  ['0221', 'JP:IIN', 'JP', 'A'],
  ['0225', 'FR:CTC', 'FR', 'A'],
  ['0230', 'MY:EIF', 'MY', 'A'],
  ['0235', 'AE:TIN', 'AE', 'A'],
  ['0240', 'LU:MAT', 'LU', 'A'],
  ['0242', 'SPIS', 'international', 'A'],
  ['9901', 'DK:CPR', 'DK', 'R'],
  ['9902', 'DK:CVR', 'DK', 'R'],
  ['9904', 'DK:SE', 'DK', 'R'],
  ['9905', 'DK:VANS', 'DK', 'R'],
  ['9906', 'IT:VAT', 'IT', 'R'],
  ['9907', 'IT:CF', 'IT', 'R'],
  ['9908', 'NO:ORGNR', 'NO', 'R'],
  ['9909', 'NO:VAT', 'NO', 'D'],
  ['9910', 'HU:VAT', 'HU', 'A'],
  ['9912', 'EU:VAT', 'international', 'D'],
  ['9913', 'EU:REID', 'international', 'A'],
  ['9914', 'AT:VAT', 'AT', 'A'],
  ['9915', 'AT:GOV', 'AT', 'A'],
  ['9916', 'AT:CID', 'AT', 'D'],
  ['9917', 'IS:KT', 'IS', 'D'],
  ['9918', 'IBAN', 'international', 'A'],
  ['9919', 'AT:KUR', 'AT', 'A'],
  ['9920', 'ES:VAT', 'ES', 'A'],
  ['9921', 'IT:IPA', 'IT', 'R'],
  ['9922', 'AD:VAT', 'AD', 'A'],
  ['9923', 'AL:VAT', 'AL', 'A'],
  ['9924', 'BA:VAT', 'BA', 'A'],
  ['9925', 'BE:VAT', 'BE', 'A'],
  ['9926', 'BG:VAT', 'BG', 'A'],
  ['9927', 'CH:VAT', 'CH', 'A'],
  ['9928', 'CY:VAT', 'CY', 'A'],
  ['9929', 'CZ:VAT', 'CZ', 'A'],
  ['9930', 'DE:VAT', 'DE', 'A'],
  ['9931', 'EE:VAT', 'EE', 'A'],
  ['9932', 'GB:VAT', 'GB', 'A'],
  ['9933', 'GR:VAT', 'GR', 'A'],
  ['9934', 'HR:VAT', 'HR', 'A'],
  ['9935', 'IE:VAT', 'IE', 'A'],
  ['9936', 'LI:VAT', 'LI', 'A'],
  ['9937', 'LT:VAT', 'LT', 'A'],
  ['9938', 'LU:VAT', 'LU', 'A'],
  ['9939', 'LV:VAT', 'LV', 'A'],
  ['9940', 'MC:VAT', 'MC', 'A'],
  ['9941', 'ME:VAT', 'ME', 'A'],
  ['9942', 'MK:VAT', 'MK', 'A'],
  ['9943', 'MT:VAT', 'MT', 'A'],
  ['9944', 'NL:VAT', 'NL', 'A'],
  ['9945', 'PL:VAT', 'PL', 'A'],
  ['9946', 'PT:VAT', 'PT', 'A'],
  ['9947', 'RO:VAT', 'RO', 'A'],
  ['9948', 'RS:VAT', 'RS', 'A'],
  ['9949', 'SI:VAT', 'SI', 'A'],
  ['9950', 'SK:VAT', 'SK', 'A'],
  ['9951', 'SM:VAT', 'SM', 'A'],
  ['9952', 'TR:VAT', 'TR', 'A'],
  ['9953', 'VA:VAT', 'VA', 'A'],
  ['9954', 'NL:OIN', 'NL', 'D'],
  ['9955', 'SE:VAT', 'SE', 'R'],
  ['9956', 'BE:CBE', 'BE', 'R'],
  ['9957', 'FR:VAT', 'FR', 'A'],
  ['9958', 'DE:LID', 'DE', 'R'],
  ['9959', 'US:EIN', 'US', 'A'],
];

const STATE: Record<'A' | 'D' | 'R', IcdState> = { A: 'active', D: 'deprecated', R: 'removed' };
const ICDS: ReadonlyMap<string, IcdInfo> = new Map(
  ICD_TABLE.map(([icd, schemeId, country, s]) => [icd, Object.freeze({ icd, schemeId, country, state: STATE[s] })]),
);

export function icdInfo(icd: string): IcdInfo | undefined {
  return ICDS.get(icd);
}

/**
 * Checks the ICD of a participant against the code list. Parsing accepts any 4-digit ICD (received messages may carry
 * schemes that were valid when sent); this check is for identifiers we register or send to: unknown and removed ICDs
 * are refused, deprecated ones only when `allowDeprecated` is false.
 */
export function assertIcdUsable(p: ParticipantId, options: { allowDeprecated?: boolean } = {}): IcdInfo {
  const icd = icdOf(p);
  const info = ICDS.get(icd);
  if (!info)
    throw invalid(`ICD ${icd} of ${formatId(p)} is not in the Peppol code list ${ICD_CODE_LIST_VERSION}`, { icd });
  if (info.state === 'removed')
    throw invalid(`ICD ${icd} (${info.schemeId}) of ${formatId(p)} has been removed from the Peppol code list`, {
      icd,
    });
  if (info.state === 'deprecated' && options.allowDeprecated === false) {
    throw invalid(`ICD ${icd} (${info.schemeId}) of ${formatId(p)} is deprecated`, { icd });
  }
  return info;
}

// ---------------------------------------------------------------------------------------------------------------------
// Service provider ids (SPIS, ICD 0242)

const SPIS_RE = /^0242:([0-9]{6})(-[0-9A-Z_]{3,12}(\.[0-9A-Z\-._~]{3,24})?)?$/i;

/** True for `0242:<6 digits>[-<use case>[.<suffix>]]` (OpenPeppol Service Provider Identification Scheme). */
export function isSpisId(p: ParticipantId): boolean {
  return p.scheme === PARTICIPANT_SCHEME && SPIS_RE.test(p.value);
}

/** The default SPID of a service provider from its Seat ID (`POP000306` → `0242:000306`), used as MLS receiver. */
export function spidOfSeatId(seatId: string): ParticipantId {
  const m = /^P[A-Z]{2}([0-9]{6})$/.exec(seatId);
  if (!m) throw invalid(`"${seatId}" is not a Peppol Seat ID (P + 2 letters + 6 digits)`);
  return peppolParticipant(`0242:${m[1]}`);
}
