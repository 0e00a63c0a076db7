/**
 * The reference tax authority's judgement of one received Tax Data Document, whatever channel it came on: read it,
 * check it is addressed to a participant we serve, validate it with the official artefacts (validateTdd), apply the
 * lifecycle, record it, and build the Message Level Status that answers it (AP, or RE with reason lines).
 */
import { isGatewayError } from '../core/gateway-error';
import { formatId, isSpisId, peppolParticipant, type ParticipantId } from '../peppol/identifiers';
import { buildMls, type MlsLineInput } from '../peppol/mls';
import { validateTdd } from '../reporting/tdd';
import type { Validator } from '../validation';
import type { Faults } from './faults';
import { exchangeKeyOf, type Channel, type Ledger, type ReasonLine, type ReportRecord } from './ledger';
import { readTddFacts, TddUnreadableError, type TddFacts } from './tdd-facts';

/** Reason lines kept per refusal (the MLS and the list stay readable). */
const MAX_REASON_LINES = 50;

export interface AuthorityDeps {
  ledger: Ledger;
  faults: Faults;
  validator: Validator;
  /** Country → the participant id we receive its reports under. */
  participants: Readonly<Record<string, ParticipantId>>;
  /** Our service provider id: the MLS sender. */
  spid: ParticipantId;
  maxTddBytes: number;
  now: () => Date;
}

export interface IncomingReport {
  channel: Channel;
  xml: Buffer;
  /** AS4: the SBDH receiver (one of ours, checked by the AS4 layer). */
  receiver?: ParticipantId;
  as4MessageId?: string;
  sbdhInstanceId?: string;
  fromSeatId?: string;
  /** AS4: where the MLS goes (MLS_TO, else the sending access point's SPID). */
  mlsTo?: ParticipantId;
}

/** The rule packs or the validator cannot judge now: nothing is recorded, the sender should try again. */
export class AuthorityUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorityUnavailableError';
  }
}

export interface Judged {
  report: ReportRecord;
  /** The report repeats an exchange answered before (`report.duplicateOf` names the first). */
  duplicate: boolean;
}

const sameParticipant = (a: string, b: ParticipantId): boolean => a.trim().toLowerCase() === b.value.toLowerCase();

function spisOrUndefined(value: string): ParticipantId | undefined {
  try {
    const p = peppolParticipant(value);
    return isSpisId(p) ? p : undefined;
  } catch {
    return undefined;
  }
}

export class Authority {
  constructor(private readonly deps: AuthorityDeps) {}

  /** The served participant a TDT-014 value names, if any. */
  servedParticipant(value: string): ParticipantId | undefined {
    return Object.values(this.deps.participants).find((p) => sameParticipant(value, p));
  }

  /**
   * Judges and records one report and attaches its MLS. Throws TddUnreadableError over HTTP for a body that is no
   * TDD (nothing to answer an MLS to), AuthorityUnavailableError when the artefacts cannot be run.
   */
  async judge(incoming: IncomingReport): Promise<Judged> {
    const { ledger } = this.deps;
    let facts: TddFacts | undefined;
    let unreadable: string | undefined;
    try {
      facts = readTddFacts(incoming.xml, this.deps.maxTddBytes);
    } catch (e) {
      if (!(e instanceof TddUnreadableError) || incoming.channel === 'http') throw e;
      unreadable = e.message;
    }
    const xml = incoming.xml.toString('utf8');
    const exchangeKey = facts ? exchangeKeyOf(facts) : undefined;
    const base = {
      receivedAt: this.deps.now(),
      channel: incoming.channel,
      receiver: incoming.receiver ? formatId(incoming.receiver) : (facts?.receivingParty ?? ''),
      ...(incoming.as4MessageId ? { as4MessageId: incoming.as4MessageId } : {}),
      ...(incoming.sbdhInstanceId ? { sbdhInstanceId: incoming.sbdhInstanceId } : {}),
      ...(incoming.fromSeatId ? { fromSeatId: incoming.fromSeatId } : {}),
      ...(facts ? { facts } : {}),
      ...(unreadable ? { unreadable } : {}),
      ...(exchangeKey ? { exchangeKey } : {}),
      xml,
    };
    ledger.checkRoom(xml.length);

    const earlier = ledger.findExchange({
      ...(exchangeKey ? { exchangeKey } : {}),
      ...(incoming.as4MessageId ? { as4MessageId: incoming.as4MessageId } : {}),
    });
    if (earlier) {
      // Answered as the first time: the same verdict and reasons (over HTTP the same MLS document).
      const report = ledger.record({
        ...base,
        verdict: earlier.verdict,
        reasons: earlier.reasons,
        validation: earlier.validation,
        duplicateOf: earlier.id,
      });
      if (incoming.channel === 'http' && earlier.mls) ledger.setMls(report.id, earlier.mls);
      else this.attachMls(report, incoming, facts);
      return { report, duplicate: true };
    }

    const unreadableReasons: ReasonLine[] = [
      { reasonCode: 'SV', ruleId: 'TAXSIM-XML', description: unreadable ?? 'unreadable' },
    ];
    const { reasons, validation } = facts
      ? await this.check(incoming, facts)
      : { reasons: unreadableReasons, validation: [] };
    const rejectReason = reasons.length === 0 ? this.deps.faults.takeReject({ role: facts?.role }) : undefined;
    if (rejectReason) reasons.push({ reasonCode: 'BV', ruleId: 'TAXSIM-FAULT', description: rejectReason });
    const report = ledger.record({
      ...base,
      verdict: reasons.length === 0 ? 'accepted' : 'rejected',
      reasons: reasons.slice(0, MAX_REASON_LINES),
      validation,
    });
    this.attachMls(report, incoming, facts);
    return { report, duplicate: false };
  }

  /** Addressing, the official artefacts, then the lifecycle; the reasons to refuse (none: accepted). */
  private async check(
    incoming: IncomingReport,
    facts: TddFacts,
  ): Promise<{ reasons: ReasonLine[]; validation: string[] }> {
    const reasons: ReasonLine[] = [];
    const served = this.servedParticipant(facts.receivingParty);
    if (!served)
      reasons.push({
        reasonCode: 'BV',
        ruleId: 'TAXSIM-RECEIVER',
        description: `TDT-014 receiving party "${facts.receivingParty}" is not served by this tax authority`,
      });
    else if (incoming.receiver && !sameParticipant(facts.receivingParty, incoming.receiver))
      reasons.push({
        reasonCode: 'BV',
        ruleId: 'TAXSIM-RECEIVER',
        description:
          `TDT-014 receiving party "${facts.receivingParty}" is not the participant the message was sent to ` +
          `(${formatId(incoming.receiver)})`,
      });

    let validation: string[] = [];
    try {
      const result = await validateTdd(this.deps.validator, incoming.xml.toString('utf8'), facts.version);
      validation = result.ruleSets.map((r) => `${r.id}@${r.version}:${r.outcome}`);
      for (const a of result.assertions.filter((x) => x.flag === 'error'))
        reasons.push({
          reasonCode: a.reasonCode === 'SV' ? 'SV' : 'BV',
          ruleId: a.ruleId,
          description: a.text.replace(/\s+/g, ' ').trim().slice(0, 500),
          ...(a.location ? { location: a.location.slice(0, 500) } : {}),
        });
    } catch (e) {
      if (isGatewayError(e) && e.code === 'NOT_IMPLEMENTED')
        reasons.push({ reasonCode: 'BV', ruleId: 'TAXSIM-VERSION', description: e.message.slice(0, 500) });
      else if (isGatewayError(e) && (e.code === 'DEPENDENCY_UNAVAILABLE' || e.retryable))
        throw new AuthorityUnavailableError(`the official artefacts cannot be run: ${e.message}`, { cause: e });
      else if (isGatewayError(e))
        reasons.push({ reasonCode: 'SV', ruleId: 'TAXSIM-XML', description: e.message.slice(0, 500) });
      else throw e;
    }
    // The lifecycle is judged for a document that is otherwise acceptable: it is the last word.
    if (reasons.length === 0) {
      const refusal = this.deps.ledger.lifecycleRefusal(facts);
      if (refusal) reasons.push({ reasonCode: 'BV', ...refusal });
    }
    return { reasons, validation };
  }

  /**
   * The MLS of a report: AP when accepted, RE with the reasons. It references the SBDH InstanceIdentifier of the
   * message (AS4), else the TDD UUID (TDT-003). It goes to MLS_TO (AS4), else the reporter's representative (TDT-015).
   */
  private attachMls(report: ReportRecord, incoming: IncomingReport, facts: TddFacts | undefined): void {
    const to = incoming.mlsTo ?? spisOrUndefined(facts?.representative ?? '') ?? peppolParticipant('0242:000000'); // unknown
    const lines: MlsLineInput[] = report.reasons.map((r) => ({
      reasonCode: r.reasonCode,
      description: r.description || '(no description)',
      ...(r.ruleId ? { ruleId: r.ruleId } : {}),
      ...(r.location ? { location: r.location } : {}),
    }));
    const rejected = report.verdict === 'rejected';
    const built = buildMls({
      responseCode: rejected ? 'RE' : 'AP',
      referencedInstanceId: incoming.sbdhInstanceId ?? (facts?.tddUuid || `taxsim-report-${report.id}`),
      sender: this.deps.spid,
      receiver: to,
      ...(rejected
        ? {
            description: `Tax data document rejected: ${report.reasons[0]?.ruleId ?? 'refused'}${
              report.reasons.length > 1 ? ` and ${report.reasons.length - 1} more` : ''
            }`,
            lines,
          }
        : {}),
      issuedAt: this.deps.now(),
    });
    this.deps.ledger.setMls(report.id, {
      xml: built.xml,
      responseCode: built.mls.responseCode,
      to: formatId(to),
      delivery: incoming.channel === 'http' ? 'answered synchronously' : 'pending',
    });
  }
}
