/**
 * The automatic message-level status of the receive run: for an invoice or credit note that came in over AS4 and was
 * validated, whether to answer the sending access point with an MLS and which (src/peppol/mls `mlsDecision`). Asked
 * for by the party (MLS on through the "reviews" capability of its Peppol configuration, else the environment's; off
 * by default) and / or by the sender (SBDH MLS_TYPE); the party's Peppol hook `mlsType`, else the environment's, says
 * whether an accepted document is answered too. AP for a valid document, RE with one line per failing rule for an
 * invalid one. The sending itself is the sendMessageLevelStatus run's.
 */
import { GatewayError } from '../core/gateway-error';
import { readBytes, type DocumentStore } from '../documents/loader';
import { MLS_FAILURE_CODES, mlsDecision, peppolHookMlsTypes, type MlsLineInput, type MlsVerdict } from '../peppol/mls';
import { readSbdHeader } from '../peppol/sbdh';
import type { As4InboundRepository } from '../storage/as4/as4-inbound.repository';
import type { HookRecord } from '../storage/hooks/hook.repository';
import type { ValidationAssertionInfo } from '../storage/models';
import type { PeppolDirectoryRepository } from '../storage/peppol/peppol-directory.repository';
import type { MlsLineSpec } from '../../workflows/contracts/send-mls';
import type {
  AutomaticMlsDecision,
  AutomaticMlsInput,
  ReceivedValidation,
} from '../../workflows/contracts/receive-document';

export interface AutomaticMlsDeps extends DocumentStore {
  as4Inbound: Pick<As4InboundRepository, 'findByMessageId'>;
  /** Whether MLS is on ("reviews"): the party's Peppol configuration, else its environment's. */
  peppolDirectory: Pick<PeppolDirectoryRepository, 'getParticipant' | 'getTenantConfig'>;
  hooks: { listForRouting(tenantId: string, partyKey: string | null): Promise<HookRecord[]> };
}

/** Business documents answered automatically (the other kinds get no MLS from the receive run). */
const ANSWERED_TYPES: ReadonlySet<string> = new Set(['Invoice', 'CreditNote']);

/** Lines of one RE at most (the record keeps fewer assertions than this anyway). */
export const MAX_MLS_LINES = 100;
const MAX_LINE_TEXT = 500;

const REASON_CODES: ReadonlySet<string> = new Set(['SV', 'BV', 'BW', 'FD']);

function lineOf(a: ValidationAssertionInfo): MlsLineInput | null {
  if (!REASON_CODES.has(a.reasonCode)) return null;
  // The MLS writes the rule as `[rule] text`: a text that starts so already is not prefixed twice.
  const prefix = `[${a.ruleId}]`;
  const own = a.text.trim();
  const text =
    (a.ruleId && own.startsWith(prefix) ? own.slice(prefix.length).trim() : own) || `rule ${a.ruleId} failed`;
  return {
    reasonCode: a.reasonCode as MlsLineInput['reasonCode'],
    description: text.slice(0, MAX_LINE_TEXT),
    ...(a.ruleId ? { ruleId: a.ruleId } : {}),
    ...(a.location ? { location: a.location } : {}),
  };
}

/**
 * The RE lines of an invalid document: its recorded assertions (errors first, warnings as BW beside them), or, when
 * the record keeps none (the validator refused the bytes outright), one line from the verdict itself.
 */
export function rejectionLines(
  verdict: Extract<ReceivedValidation, { kind: 'invalid' }>,
  assertions: readonly ValidationAssertionInfo[],
): MlsLineInput[] {
  const lines = assertions
    .map(lineOf)
    .filter((l): l is MlsLineInput => l !== null)
    .slice(0, MAX_MLS_LINES);
  if (lines.some((l) => MLS_FAILURE_CODES.has(l.reasonCode))) return lines;
  const code: MlsLineInput['reasonCode'] = verdict.reasonCodes.includes('SV') ? 'SV' : 'BV';
  const ruleId = verdict.ruleIds[0];
  return [
    { reasonCode: code, description: verdict.summary.slice(0, MAX_LINE_TEXT), ...(ruleId ? { ruleId } : {}) },
    ...lines,
  ].slice(0, MAX_MLS_LINES);
}

function specOf(l: MlsLineInput): MlsLineSpec {
  return {
    reasonCode: l.reasonCode,
    description: l.description,
    ...(l.ruleId ? { ruleId: l.ruleId } : {}),
    ...(l.location ? { location: l.location } : {}),
  };
}

/** Whether and which MLS the receive run sends for a received document; reads only (every write is the MLS run's). */
export async function decideAutomaticMls(
  deps: AutomaticMlsDeps,
  input: AutomaticMlsInput,
): Promise<AutomaticMlsDecision> {
  if (!ANSWERED_TYPES.has(input.documentType))
    return { send: false, reason: `not-answered: ${input.documentType} documents get no automatic MLS` };
  const { validation } = input;
  if (validation.kind === 'not-validated')
    return { send: false, reason: `not-validated: ${validation.reason}`.slice(0, 500) };

  const message = await deps.as4Inbound.findByMessageId(input.messageId);
  if (!message || message.tenantId !== input.tenantId)
    throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
  const { header } = readSbdHeader(await readBytes(deps, message.blobId));
  const partyId = message.partyId;
  const [participant, tenantConfig, hooks] = await Promise.all([
    deps.peppolDirectory.getParticipant(partyId),
    deps.peppolDirectory.getTenantConfig(input.tenantId),
    deps.hooks.listForRouting(input.tenantId, partyId),
  ]);
  const mlsEnabled = participant ? participant.reviews : (tenantConfig?.reviews ?? false);
  const types = peppolHookMlsTypes(hooks, partyId);

  let verdict: MlsVerdict;
  if (validation.kind === 'valid') verdict = { outcome: 'accepted' };
  else {
    const stored = await deps.documents.find(input.tenantId, input.documentId);
    if (!stored) throw new GatewayError('DOCUMENT_NOT_FOUND', `received document ${input.documentId} not found`);
    verdict = { outcome: 'rejected', lines: rejectionLines(validation, stored.validation?.assertions ?? []) };
  }
  const decision = mlsDecision({
    receivedIsMls: false,
    sbdhMlsType: header.mlsTypeExplicit ? header.mlsType : undefined,
    mlsEnabled,
    partyMlsType: types.party,
    environmentMlsType: types.environment,
    verdict,
  });
  if (!decision.send) return { send: false, reason: decision.reason };
  return {
    send: true,
    responseCode: decision.responseCode,
    ...(decision.description !== undefined ? { description: decision.description } : {}),
    lines: decision.lines.map(specOf),
    requestedBy: decision.requestedBy,
  };
}
