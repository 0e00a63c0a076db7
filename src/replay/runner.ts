import { createHash } from 'node:crypto';
import type { ReplayJournalRepository } from '../storage/replay/replay-journal.repository';
import type { Pacer } from './pacing';

/**
 * Bulk replay (`npm run admin -- replay …`): one selection, acted on item by item, resumable. A run has an id (given,
 * or derived from the selection, so the same command continues the same run); each item is claimed with a keyed
 * insert before it is acted on and marked done after, so a second run with the id acts only on what the first did not
 * finish, and two runs with one id never act on one item both. The dry run is the same plan the real run follows,
 * printed instead of acted on (decisions.md "Bulk replay").
 */

/** One thing to act on: its key is unique within the selection and stable across runs. */
export interface ReplayItem {
  key: string;
  tenantId: string;
  /** What the listing shows of it (ids, topic, state). */
  view: Record<string, string>;
}

export interface ActOutcome {
  /** `sent`, `resent`, `started`, `already-started`, `running`, `skipped`, `failed`, … */
  outcome: string;
  detail?: string;
}

/** What is replayed: a selection, and how to act on one item of it. */
export interface ReplaySource<I extends ReplayItem = ReplayItem> {
  kind: 'events' | 'invoices' | 'inbound';
  /** The selection's parameters, from which the default run id is derived. */
  selection: Readonly<Record<string, string>>;
  /** The items, in a stable order. The dry run and the real run call this same function. */
  select(): Promise<I[]>;
  /** What the claim keeps so an item left in doubt can be resolved (the state before acting). Read only. */
  before(item: I): Promise<string | null>;
  act(item: I): Promise<ActOutcome>;
  /**
   * An item claimed but never marked done (the run stopped in between): the outcome if acting had happened, or null
   * when it had not (it is acted on now). Read only.
   */
  resolveInDoubt(item: I, before: string | null): Promise<ActOutcome | null>;
}

export type ReplayJournal = Pick<ReplayJournalRepository, 'state' | 'claim' | 'done'>;

export type PlanStatus = 'pending' | 'done' | 'in-doubt-done';

export interface PlannedItem<I extends ReplayItem> {
  item: I;
  /** `pending`: the run acts on it; `done`: a previous run with this id did; `in-doubt-done`: it did, unrecorded. */
  status: PlanStatus;
  /** For `done` / `in-doubt-done`: what was done. */
  previous?: ActOutcome;
  /** For `pending`: the number of the claim to take (1, or the next after a claim left in doubt). */
  claim: number;
}

/** The default run id: the kind and the selection, canonically ordered, hashed. */
export function replayRunId(kind: string, selection: Readonly<Record<string, string>>): string {
  const canonical = JSON.stringify([kind, Object.entries(selection).sort(([a], [b]) => a.localeCompare(b))]);
  return `${kind}-${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}

const RUN_ID = /^[A-Za-z0-9._-]{1,100}$/;

export function checkRunId(runId: string): string {
  if (!RUN_ID.test(runId)) throw new RangeError('a run id is 1 to 100 letters, digits, ".", "_" or "-"');
  return runId;
}

/** The plan of a run: the selection with what the journal (and, for items in doubt, the source) says of each. */
export async function planReplay<I extends ReplayItem>(
  source: ReplaySource<I>,
  journal: ReplayJournal,
  runId: string,
): Promise<PlannedItem<I>[]> {
  const [items, state] = await Promise.all([source.select(), journal.state(runId)]);
  const plan: PlannedItem<I>[] = [];
  for (const item of items) {
    const done = state.done.get(item.key);
    const claim = state.claims.get(item.key);
    const next = (claim?.n ?? 0) + 1;
    if (done) {
      const previous = { outcome: done.outcome ?? '', ...(done.detail ? { detail: done.detail } : {}) };
      plan.push({ item, status: 'done', previous, claim: next });
      continue;
    }
    const resolved = claim ? await source.resolveInDoubt(item, claim.before ?? null) : null;
    plan.push(
      resolved
        ? { item, status: 'in-doubt-done', previous: resolved, claim: next }
        : { item, status: 'pending', claim: next },
    );
  }
  return plan;
}

export interface ReplayProgress<I extends ReplayItem> {
  phase: 'claimed' | 'done';
  item: I;
  /** Items handled so far in this run (skipped ones included), and the plan's length. */
  index: number;
  total: number;
  outcome?: ActOutcome;
}

export interface ReplayOptions<I extends ReplayItem> {
  runId: string;
  dryRun: boolean;
  pacer: Pacer;
  /** Act on at most this many items in this run (the rest stay for the next). */
  maxItems?: number;
  /** Checked before each item: true stops the run there (Ctrl-C); the next run with the id continues. */
  shouldStop?: () => boolean;
  onProgress?: (p: ReplayProgress<I>) => void;
}

export interface ReplayReportItem {
  key: string;
  /** Dry run: `would-act` or `skip`; real run: the outcome (`skip` for items done before). */
  action: string;
  detail: string;
  [field: string]: string;
}

export interface ReplayReport {
  runId: string;
  kind: string;
  dryRun: boolean;
  selected: number;
  /** Items this run acted on (the dry run: would act on). */
  acted: number;
  skipped: number;
  /** Items whose action failed: left for the next run with the id. */
  failed: number;
  /** Items left for a later run (stopped or --max reached). */
  remaining: number;
  stopped: boolean;
  items: ReplayReportItem[];
}

function reportItem(item: ReplayItem, action: string, detail = ''): ReplayReportItem {
  return { ...item.view, key: item.key, action, detail };
}

/**
 * Runs (or, dry, lists) a replay. An item whose action throws is reported `failed` and left in doubt (claimed, not
 * done): the next run with the id checks whether anything was done and acts again if not. Storage failures stop the run.
 */
export async function runReplay<I extends ReplayItem>(
  source: ReplaySource<I>,
  journal: ReplayJournal,
  options: ReplayOptions<I>,
): Promise<ReplayReport> {
  const { runId, dryRun } = options;
  const plan = await planReplay(source, journal, runId);
  const report: ReplayReport = {
    runId,
    kind: source.kind,
    dryRun,
    selected: plan.length,
    acted: 0,
    skipped: 0,
    failed: 0,
    remaining: 0,
    stopped: false,
    items: [],
  };
  const total = plan.length;
  let index = 0;
  for (const planned of plan) {
    const { item } = planned;
    if (planned.status !== 'pending') {
      report.skipped++;
      index++;
      // An item acted on before but left unrecorded is recorded now, so later plans need not resolve it again.
      if (!dryRun && planned.status === 'in-doubt-done' && planned.previous)
        await journal.done(runId, item.key, planned.previous.outcome, planned.previous.detail ?? null);
      const previous = planned.previous
        ? `${planned.previous.outcome}${planned.previous.detail ? `: ${planned.previous.detail}` : ''}`
        : '';
      report.items.push(reportItem(item, 'skip', `done by run ${runId} (${previous})`));
      if (!dryRun)
        options.onProgress?.({
          phase: 'done',
          item,
          index,
          total,
          ...(planned.previous ? { outcome: planned.previous } : {}),
        });
      continue;
    }
    if (dryRun) {
      report.acted++;
      report.items.push(reportItem(item, 'would-act'));
      continue;
    }
    if (options.shouldStop?.() || (options.maxItems !== undefined && report.acted >= options.maxItems)) {
      report.stopped = true;
      report.remaining = plan.slice(index).filter((p) => p.status === 'pending').length;
      break;
    }
    await options.pacer.wait();
    const before = await source.before(item);
    if (!(await journal.claim(runId, item.key, planned.claim, before))) {
      // Another process runs the same id and took this item; it is theirs to finish.
      report.skipped++;
      index++;
      report.items.push(reportItem(item, 'skip', `claimed by another run with id ${runId}`));
      continue;
    }
    options.onProgress?.({ phase: 'claimed', item, index, total });
    let outcome: ActOutcome;
    try {
      outcome = await source.act(item);
      await journal.done(runId, item.key, outcome.outcome, outcome.detail ?? null);
    } catch (e) {
      outcome = { outcome: 'failed', detail: e instanceof Error ? e.message : String(e) };
      report.failed++;
    }
    report.acted++;
    index++;
    report.items.push(reportItem(item, outcome.outcome, outcome.detail ?? ''));
    options.onProgress?.({ phase: 'done', item, index, total, outcome });
  }
  return report;
}
