/**
 * When the receiving access point sends an MLS, with which response code, and to whom. Pure functions of their input.
 *
 * Who asks for an MLS: the party, when MLS is on for it (the "reviews" capability, off by default; spec 6.4), and the
 * sending access point, when its SBDH carries MLS_TYPE. Without either, nothing is sent. A rejection is answered
 * whenever someone asked (a negative MLS is always sent, Peppol Network Policy); an accepted document only under
 * ALWAYS_SEND: the sender's MLS_TYPE (absent means FAILURE_ONLY), or, when MLS is on for the party, the party's
 * mlsType, else the environment's (party level wins, spec 6.6). An MLS is never answered with an MLS.
 */
import { formatId, isSpisId, spidOfSeatId, type DocumentTypeId, type ParticipantId } from '../identifiers';
import { DEFAULT_MLS_TYPE, type MlsType } from '../sbdh';
import type { MlsLineInput } from './build';
import { MLS_CUSTOMIZATION_ID, MLS_FAILURE_CODES, MlsError, type MlsResponseCode } from './types';

/** What became of the received document. */
export type MlsVerdict =
  /** Valid and delivered to the receiver (C4) with confirmation. */
  | { outcome: 'accepted' }
  /** Valid and passed on / made available without a confirmation of delivery. */
  | { outcome: 'acknowledged' }
  /** Refused: invalid (SV / BV, with BW warnings beside them) or not deliverable (FD). */
  | { outcome: 'rejected'; lines: readonly MlsLineInput[]; description?: string };

export interface MlsDecisionInput {
  /** The received document is itself an MLS (see isMlsDocumentType). */
  receivedIsMls: boolean;
  /** The SBDH MLS_TYPE scope; undefined when the scope is absent (which means FAILURE_ONLY). */
  sbdhMlsType: MlsType | undefined;
  /** MLS is on for the receiving party ("reviews"). */
  mlsEnabled: boolean;
  /** The mlsType of the party's Peppol hook, if set. */
  partyMlsType?: MlsType | null;
  /** The mlsType of the environment's Peppol hook, if set. */
  environmentMlsType?: MlsType | null;
  verdict: MlsVerdict;
}

export type MlsDecision =
  | { send: false; reason: 'answers-an-mls' | 'not-requested' | 'failure-only' }
  | {
      send: true;
      responseCode: MlsResponseCode;
      /** Set for RE. */
      description?: string;
      /** The issues for RE; empty for AP / AB. */
      lines: MlsLineInput[];
      /** Who asked for this MLS. */
      requestedBy: Array<'party' | 'sender'>;
    };

const DEFAULT_REJECTION = 'The document was rejected';

function rejectionText(lines: readonly MlsLineInput[]): string {
  const failures = lines.filter((l) => MLS_FAILURE_CODES.has(l.reasonCode));
  const codes = [...new Set(failures.map((l) => l.reasonCode))].sort().join(', ');
  const n = failures.length;
  return `${DEFAULT_REJECTION}: ${n} failure${n === 1 ? '' : 's'} (${codes})`;
}

/** Whether to send an MLS for a received document, and which. Throws MlsError for a rejection without a failure. */
export function mlsDecision(input: MlsDecisionInput): MlsDecision {
  if (input.receivedIsMls) return { send: false, reason: 'answers-an-mls' };
  const requestedBy: Array<'party' | 'sender'> = [];
  if (input.mlsEnabled) requestedBy.push('party');
  if (input.sbdhMlsType !== undefined) requestedBy.push('sender');
  if (requestedBy.length === 0) return { send: false, reason: 'not-requested' };

  const { verdict } = input;
  if (verdict.outcome === 'rejected') {
    if (!verdict.lines.some((l) => MLS_FAILURE_CODES.has(l.reasonCode))) {
      throw new MlsError([
        {
          rule: 'SCH-MLS-24',
          path: '/ApplicationResponse/cac:DocumentResponse/cac:LineResponse',
          message: 'a rejection needs at least one failure (BV, FD or SV)',
        },
      ]);
    }
    const description = verdict.description?.trim() || rejectionText(verdict.lines);
    return { send: true, responseCode: 'RE', description, lines: [...verdict.lines], requestedBy };
  }

  const senderType = input.sbdhMlsType ?? DEFAULT_MLS_TYPE;
  const partyType = input.mlsEnabled ? (input.partyMlsType ?? input.environmentMlsType ?? DEFAULT_MLS_TYPE) : undefined;
  if (senderType !== 'ALWAYS_SEND' && partyType !== 'ALWAYS_SEND') return { send: false, reason: 'failure-only' };
  // The contract allows BW only beside fatal errors (spec 2.6): a positive MLS carries no issues.
  return { send: true, responseCode: verdict.outcome === 'accepted' ? 'AP' : 'AB', lines: [], requestedBy };
}

export interface MlsAddressInput {
  /** The SBDH MLS_TO scope, when present. */
  mlsTo?: ParticipantId;
  /** The CN of the sending access point's certificate: its Seat ID (`POP000306`). */
  sendingApCommonName: string;
}

export type MlsAddress =
  | { ok: true; to: ParticipantId; source: 'MLS_TO' | 'sending-ap'; warnings: string[] }
  | { ok: false; reason: string; warnings: string[] };

const SPID_MAIN_RE = /^0242:([0-9]{6})/;

/**
 * Where an MLS goes: MLS_TO when it is a service provider id with the same main id as the sending access point's
 * (MLS SPOG 5.1), else the sending access point's default SPID, `0242:` + the digits of its Seat ID.
 */
export function mlsAddress(input: MlsAddressInput): MlsAddress {
  const warnings: string[] = [];
  let fallback: ParticipantId | undefined;
  const cn = input.sendingApCommonName.trim();
  try {
    fallback = spidOfSeatId(cn);
  } catch {
    warnings.push(`the sending access point's certificate CN "${cn}" is not a Peppol Seat ID`);
  }
  const mlsTo = input.mlsTo;
  if (mlsTo) {
    const main = SPID_MAIN_RE.exec(mlsTo.value)?.[1];
    const fallbackMain = fallback ? SPID_MAIN_RE.exec(fallback.value)?.[1] : undefined;
    if (!isSpisId(mlsTo)) warnings.push(`MLS_TO ${formatId(mlsTo)} is not a service provider id (0242:nnnnnn)`);
    else if (fallbackMain !== undefined && main !== fallbackMain)
      warnings.push(`MLS_TO ${formatId(mlsTo)} does not belong to the sending access point ${cn}`);
    else return { ok: true, to: mlsTo, source: 'MLS_TO', warnings };
  }
  if (fallback) return { ok: true, to: fallback, source: 'sending-ap', warnings };
  return { ok: false, reason: 'no valid MLS_TO and no Seat ID in the sending certificate', warnings };
}

/** Whether a document type is the MLS (`…ApplicationResponse##urn:peppol:edec:mls:1.0::2.1`). */
export function isMlsDocumentType(documentType: DocumentTypeId): boolean {
  const hash = documentType.value.indexOf('##');
  const rest = hash < 0 ? '' : documentType.value.slice(hash + 2);
  return rest === MLS_CUSTOMIZATION_ID || rest.startsWith(`${MLS_CUSTOMIZATION_ID}::`);
}

/** A hook as the MLS type reads it (src/storage/hooks' records fit). */
export interface MlsTypeHook {
  readonly action: string;
  readonly isActive: boolean;
  /** null or absent: environment level. */
  readonly partyId?: string | null;
  readonly mlsType?: string | null;
}

const MLS_TYPES: ReadonlySet<string> = new Set<MlsType>(['ALWAYS_SEND', 'FAILURE_ONLY']);

function levelMlsType(hooks: readonly MlsTypeHook[]): MlsType | null {
  const types = hooks.map((h) => h.mlsType).filter((t): t is MlsType => typeof t === 'string' && MLS_TYPES.has(t));
  if (types.includes('ALWAYS_SEND')) return 'ALWAYS_SEND';
  return types.length > 0 ? 'FAILURE_ONLY' : null;
}

/**
 * The `mlsType` of the active Peppol hooks of a party and of its environment (spec 2.4, 6.4): per level the value its
 * hooks set (ALWAYS_SEND when one of several says so), null when none sets it. Party level wins over environment
 * level (spec 6.6): `effective` is the one that applies.
 */
export function peppolHookMlsTypes(
  hooks: readonly MlsTypeHook[],
  partyId: string,
): { party: MlsType | null; environment: MlsType | null; effective: MlsType | null } {
  const peppol = hooks.filter((h) => h.isActive && h.action === 'peppol');
  const party = levelMlsType(peppol.filter((h) => typeof h.partyId === 'string' && h.partyId === partyId));
  const environment = levelMlsType(
    peppol.filter((h) => h.partyId === null || h.partyId === undefined || h.partyId === ''),
  );
  return { party, environment, effective: party ?? environment };
}
