/**
 * The reference tax authority's books, in memory (it is a simulator: a restart forgets everything). Pure logic, no
 * I/O: which report of an invoice may follow which (the lifecycle per Invoice UUID and reporter role), which report
 * repeats an exchange already answered, and how the supplier's (C2) and the buyer's (C3) reports of one invoice
 * compare.
 *
 * Lifecycle, per (TDT-017 Invoice UUID, TDT-012 reporter role), counting accepted reports only:
 * - S (submit) first; a second S is refused (report a correction with R);
 * - R (resubmit) only after an accepted S, and not after a D;
 * - D (disregard) only after an accepted S; nothing is accepted after a D.
 * A refused report leaves the lifecycle as it was. One exchange counts once: a report whose exchange key (TDT-018
 * Invoice Transmission UUID when present, else TDT-003 TDD UUID; over AS4 also the AS4 MessageId) was seen is answered
 * as the first time, and not recorded again.
 */
import { compareTdd, type TddTermDifference } from '../reporting/tdd';
import type { TddFacts } from './tdd-facts';

export type Verdict = 'accepted' | 'rejected';

/** One reason line of a refusal, as the MLS carries it. */
export interface ReasonLine {
  reasonCode: 'BV' | 'SV' | 'FD';
  ruleId?: string;
  description: string;
  location?: string;
}

export interface LifecycleRefusal {
  ruleId: string;
  description: string;
}

export type Channel = 'as4' | 'http';

export interface ReportRecord {
  /** Our id of the report (1, 2, …). */
  id: string;
  receivedAt: Date;
  channel: Channel;
  /** The served participant the report was addressed to (the AS4 receiver, or TDT-014 over HTTP). */
  receiver: string;
  /** Over AS4: the message it came in and its SBDH InstanceIdentifier (what the MLS references). */
  as4MessageId?: string;
  sbdhInstanceId?: string;
  /** The sending access point's Seat ID (AS4). */
  fromSeatId?: string;
  /** Facts read from the TDD; absent when it could not be read. */
  facts?: TddFacts;
  /** Why it could not be read. */
  unreadable?: string;
  xml: string;
  verdict: Verdict;
  reasons: ReasonLine[];
  /** Which rule packs validated it, `id@version:outcome`. */
  validation: string[];
  /** The MLS answered: its XML and response code; where it went (AS4) and what became of it. */
  mls?: { xml: string; responseCode: 'AP' | 'RE' | 'AB'; to: string; delivery: string };
  /** The key this exchange is known by (for duplicates). */
  exchangeKey?: string;
  /** Another record this one repeats (duplicate exchange). */
  duplicateOf?: string;
}

export interface MatchView {
  invoiceUuid: string;
  status: 'matched' | 'differs' | 'awaiting C2' | 'awaiting C3';
  c2?: string;
  c3?: string;
  differences: TddTermDifference[];
}

/** The key of a lifecycle: Invoice UUID (case-insensitive) and role. */
const lifecycleKey = (invoiceUuid: string, role: string): string => `${invoiceUuid.toLowerCase()}|${role}`;

/** The exchange key of a TDD: TDT-018 when present, else TDT-003. */
export function exchangeKeyOf(facts: Pick<TddFacts, 'transmissionUuid' | 'tddUuid' | 'role'>): string {
  return facts.transmissionUuid
    ? `tdt-018:${facts.role}:${facts.transmissionUuid.toLowerCase()}`
    : `tdt-003:${facts.tddUuid.toLowerCase()}`;
}

export interface LedgerLimits {
  /** Reports kept; beyond it new reports are refused (503) until a reset. */
  maxReports: number;
  /** Bytes of TDD and MLS XML kept in all. */
  maxBytes: number;
}

export class LedgerFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerFullError';
  }
}

export class Ledger {
  private readonly reports: ReportRecord[] = [];
  private readonly byId = new Map<string, ReportRecord>();
  private readonly byExchange = new Map<string, ReportRecord>();
  private readonly byMessageId = new Map<string, ReportRecord>();
  /** Accepted reports per lifecycle, in order. */
  private readonly lifecycles = new Map<string, ReportRecord[]>();
  private bytes = 0;
  private next = 1;

  constructor(private readonly limits: LedgerLimits) {}

  /**
   * Whether the lifecycle allows an accepted report of this type now; undefined when it does, else the refusal. The
   * rule ids are the simulator's own (TAXSIM-LC-…), since the specification states the rules in prose (TDT-007).
   */
  lifecycleRefusal(facts: Pick<TddFacts, 'invoiceUuid' | 'role' | 'typeCode'>): LifecycleRefusal | undefined {
    const history = this.lifecycles.get(lifecycleKey(facts.invoiceUuid, facts.role)) ?? [];
    const submitted = history.find((r) => r.facts?.typeCode === 'S');
    const disregarded = history.find((r) => r.facts?.typeCode === 'D');
    const what = `invoice ${facts.invoiceUuid} (${facts.role})`;
    if (disregarded)
      return {
        ruleId: 'TAXSIM-LC-03',
        description: `${what} was disregarded (report ${disregarded.id}); no report of it is accepted after a disregard`,
      };
    switch (facts.typeCode) {
      case 'S':
        return submitted
          ? {
              ruleId: 'TAXSIM-LC-01',
              description: `${what} was already submitted (report ${submitted.id}); send a correction as a resubmit (R)`,
            }
          : undefined;
      case 'R':
      case 'D':
        return submitted
          ? undefined
          : {
              ruleId: 'TAXSIM-LC-02',
              description:
                `a ${facts.typeCode === 'R' ? 'resubmit (R)' : 'disregard (D)'} of ${what} needs an accepted submit ` +
                '(S) first',
            };
      default:
        return { ruleId: 'TAXSIM-LC-04', description: `unknown tax data type code "${facts.typeCode}"` };
    }
  }

  /** The earlier report of the same exchange (same exchange key, or same AS4 MessageId), if any. */
  findExchange(key: { exchangeKey?: string; as4MessageId?: string }): ReportRecord | undefined {
    return (
      (key.as4MessageId ? this.byMessageId.get(key.as4MessageId) : undefined) ??
      (key.exchangeKey ? this.byExchange.get(key.exchangeKey) : undefined)
    );
  }

  /** Throws LedgerFullError when another report of `size` bytes would exceed the limits. */
  checkRoom(size: number): void {
    if (this.reports.length >= this.limits.maxReports)
      throw new LedgerFullError(`taxsim keeps at most ${this.limits.maxReports} reports; POST /api/reset to empty it`);
    if (this.bytes + size > this.limits.maxBytes)
      throw new LedgerFullError(`taxsim keeps at most ${this.limits.maxBytes} bytes of reports; POST /api/reset`);
  }

  /** Records a report (an id is assigned); accepted reports join their lifecycle. */
  record(input: Omit<ReportRecord, 'id'>): ReportRecord {
    const size = input.xml.length + (input.mls?.xml.length ?? 0);
    this.checkRoom(size);
    const report: ReportRecord = { ...input, id: String(this.next++) };
    this.reports.push(report);
    this.byId.set(report.id, report);
    this.bytes += size;
    if (!report.duplicateOf) {
      if (report.exchangeKey && !this.byExchange.has(report.exchangeKey))
        this.byExchange.set(report.exchangeKey, report);
      if (report.as4MessageId && !this.byMessageId.has(report.as4MessageId))
        this.byMessageId.set(report.as4MessageId, report);
      if (report.verdict === 'accepted' && report.facts) {
        const key = lifecycleKey(report.facts.invoiceUuid, report.facts.role);
        const list = this.lifecycles.get(key) ?? [];
        list.push(report);
        this.lifecycles.set(key, list);
      }
    }
    return report;
  }

  /** Sets the MLS of a report (recorded before its answer was built or sent). */
  setMls(id: string, mls: NonNullable<ReportRecord['mls']>): void {
    const r = this.byId.get(id);
    if (!r) return;
    this.bytes += mls.xml.length - (r.mls?.xml.length ?? 0);
    r.mls = mls;
  }

  setDelivery(id: string, delivery: string): void {
    const r = this.byId.get(id);
    if (r?.mls) r.mls = { ...r.mls, delivery };
  }

  get(id: string): ReportRecord | undefined {
    return this.byId.get(id);
  }

  /** Newest first. */
  list(): ReportRecord[] {
    return [...this.reports].reverse();
  }

  get size(): number {
    return this.reports.length;
  }

  reset(): void {
    this.reports.length = 0;
    this.byId.clear();
    this.byExchange.clear();
    this.byMessageId.clear();
    this.lifecycles.clear();
    this.bytes = 0;
  }

  /**
   * The supplier's and the buyer's reports of one invoice: the latest accepted report of each role that is not a
   * disregard, compared term by term on the reported document (the envelope differs by role by design).
   */
  match(invoiceUuid: string): MatchView {
    const latest = (role: 'C2' | 'C3'): ReportRecord | undefined => {
      const list = this.lifecycles.get(lifecycleKey(invoiceUuid, role)) ?? [];
      if (list.some((r) => r.facts?.typeCode === 'D')) return undefined;
      return list[list.length - 1];
    };
    const c2 = latest('C2');
    const c3 = latest('C3');
    const ids = { ...(c2 ? { c2: c2.id } : {}), ...(c3 ? { c3: c3.id } : {}) };
    if (!c2 || !c3) return { invoiceUuid, status: c2 ? 'awaiting C3' : 'awaiting C2', ...ids, differences: [] };
    const differences = compareTdd(c2.xml, c3.xml).filter((d) => d.path.startsWith('ReportedTransaction/'));
    return { invoiceUuid, status: differences.length === 0 ? 'matched' : 'differs', ...ids, differences };
  }

  /** One line of the list's "C2/C3 match" column for a report. */
  matchOf(report: ReportRecord): MatchView | undefined {
    if (!report.facts?.invoiceUuid || report.verdict !== 'accepted') return undefined;
    return this.match(report.facts.invoiceUuid);
  }
}
