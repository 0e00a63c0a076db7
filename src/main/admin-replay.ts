import { SingleBar, Presets } from 'cli-progress';
import { GatewayError } from '../core/gateway-error';
import type { DirectoryRepository } from '../storage/directory.repository';
import type { DocumentRepository } from '../storage/document.repository';
import type { EventRepository } from '../storage/events/event.repository';
import type { HookRepository } from '../storage/hooks/hook.repository';
import type { ReplayJournalRepository } from '../storage/replay/replay-journal.repository';
import type { ReplaySelectionRepository } from '../storage/replay/replay-selection.repository';
import type { SendRunControl } from '../sending/operator';
import type { EventPublisher } from '../webhooks';
import type { ReceiveDocumentInput } from '../../workflows/contracts/receive-document';
import { createPacer, parseRate, type Pacer } from '../replay/pacing';
import {
  checkRunId,
  replayRunId,
  runReplay,
  type ReplayItem,
  type ReplayProgress,
  type ReplayReport,
  type ReplaySource,
} from '../replay/runner';
import {
  checkEventSelection,
  EventReplaySource,
  InboundReplaySource,
  InvoiceReplaySource,
  parseWindow,
  type DeliveryRunLookup,
} from '../replay/sources';

/** `npm run admin -- replay events|invoices|inbound …` (src/replay): argument handling, progress bar, wiring. */

type Options = Record<string, string | boolean | undefined>;

export interface ReplayServices {
  directory: Pick<DirectoryRepository, 'getTenant' | 'listTenants'>;
  journal: Pick<ReplayJournalRepository, 'state' | 'claim' | 'done'>;
  selection: Pick<ReplaySelectionRepository, 'outboundInState' | 'inboundMessages'>;
  events: Pick<EventRepository, 'list'>;
  hooks: Pick<HookRepository, 'findInTenants'>;
  documents: Pick<DocumentRepository, 'find' | 'recordTransition'>;
  /** Redelivery (the publisher of the API's redeliver endpoint); absent without Temporal. */
  publisher?: Pick<EventPublisher, 'redeliver'>;
  deliveryRuns?: DeliveryRunLookup;
  control?: SendRunControl;
  startReceiveDocument?: (input: ReceiveDocumentInput) => Promise<'started' | 'already-started'>;
  /** Ctrl-C: the run stops before its next item. */
  shouldStop?: () => boolean;
  /** A progress bar on a terminal (not with --json, not for a dry run); absent: none. */
  progress?: ProgressFactory;
  /** Pacing other than the wall clock's (tests). */
  pacer?: (ratePerSecond: number) => Pacer;
  /** Observes each item (tests stop a run half-way from here). */
  onProgress?: (p: ReplayProgress<ReplayItem>) => void;
}

export interface ProgressView {
  update(done: number): void;
  stop(): void;
}
export type ProgressFactory = (total: number) => ProgressView;

/** The bar of a terminal (stderr, so stdout stays the report). */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): ProgressFactory | undefined {
  if (!stream.isTTY) return undefined;
  return (total) => {
    const bar = new SingleBar(
      { stream, format: 'replay [{bar}] {value}/{total} {percentage}% | eta {eta}s', hideCursor: true },
      Presets.shades_classic,
    );
    bar.start(total, 0);
    return { update: (done) => bar.update(done), stop: () => bar.stop() };
  };
}

const DEFAULT_RATE = 10;
const STATES_OF: Record<string, readonly string[]> = {
  events: ['HookSentError'],
  invoices: ['InvoiceSentError'],
  inbound: ['stored', 'detected', 'rejected'],
};

function text(o: Options, name: string): string | undefined {
  const v = o[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0) throw new GatewayError('BAD_REQUEST', `--${name} needs a value`);
  return v;
}

async function tenantsOf(directory: ReplayServices['directory'], tenant: string | undefined): Promise<string[]> {
  if (tenant !== undefined) {
    if (!(await directory.getTenant(tenant))) throw new GatewayError('NOT_FOUND', `Tenant ${tenant} not found`);
    return [tenant];
  }
  return (await directory.listTenants()).map((t) => t._id);
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new GatewayError('DEPENDENCY_UNAVAILABLE', `replay ${what} needs the Temporal server`);
  return value;
}

/** Builds the source of `replay <verb>` from the options; bad input is a BAD_REQUEST / NOT_FOUND naming it. */
export async function replaySource(verb: string, o: Options, s: ReplayServices): Promise<ReplaySource<ReplayItem>> {
  const state = text(o, 'state');
  const allowed = STATES_OF[verb];
  if (!allowed) throw new GatewayError('BAD_REQUEST', `replay ${verb}: unknown; use replay events|invoices|inbound`);
  if (state !== undefined && !allowed.includes(state))
    throw new GatewayError('BAD_REQUEST', `replay ${verb} --state must be ${allowed.join(' or ')}, not "${state}"`);
  const window = parseWindow(text(o, 'from'), text(o, 'to'));
  const tenantIds = await tenantsOf(s.directory, text(o, 'tenant'));
  switch (verb) {
    case 'events': {
      const deps = {
        events: s.events,
        hooks: s.hooks,
        publisher: need(s.publisher, verb),
        runs: need(s.deliveryRuns, verb),
      };
      const selection = await checkEventSelection(deps, {
        tenantIds,
        hookId: text(o, 'hook'),
        topic: text(o, 'topic'),
        window,
        state: state === 'HookSentError' ? 'HookSentError' : undefined,
      });
      return new EventReplaySource(deps, selection);
    }
    case 'invoices':
      if (state === undefined) throw new GatewayError('BAD_REQUEST', 'replay invoices needs --state InvoiceSentError');
      for (const name of ['hook', 'topic'])
        if (o[name] !== undefined) throw new GatewayError('BAD_REQUEST', `replay invoices has no --${name}`);
      return new InvoiceReplaySource(
        { selection: s.selection, documents: s.documents, control: need(s.control, verb) },
        tenantIds,
        window,
      );
    default: {
      for (const name of ['hook', 'topic'])
        if (o[name] !== undefined) throw new GatewayError('BAD_REQUEST', `replay inbound has no --${name}`);
      if (state === undefined && !window.from && !window.to)
        throw new GatewayError('BAD_REQUEST', 'replay inbound needs --state or --from/--to');
      return new InboundReplaySource(
        { selection: s.selection, startReceiveDocument: need(s.startReceiveDocument, verb) },
        tenantIds,
        window,
        state,
      );
    }
  }
}

export async function runReplayCommand(verb: string, o: Options, s: ReplayServices): Promise<ReplayReport> {
  const source = await replaySource(verb, o, s);
  const given = text(o, 'run-id');
  let runId: string;
  try {
    runId = given !== undefined ? checkRunId(given) : replayRunId(source.kind, source.selection);
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', `--run-id: ${(e as Error).message}`);
  }
  let rate = DEFAULT_RATE;
  let maxItems: number | undefined;
  try {
    const r = text(o, 'rate');
    if (r !== undefined) rate = parseRate(r);
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', (e as Error).message);
  }
  const max = text(o, 'max');
  if (max !== undefined) {
    if (!/^\d{1,9}$/.test(max) || Number(max) < 1)
      throw new GatewayError('BAD_REQUEST', '--max must be a whole number above 0');
    maxItems = Number(max);
  }
  const dryRun = o['dry-run'] === true;
  let bar: ProgressView | undefined;
  try {
    return await runReplay(source, s.journal, {
      runId,
      dryRun,
      pacer: (s.pacer ?? createPacer)(rate),
      ...(maxItems !== undefined ? { maxItems } : {}),
      ...(s.shouldStop ? { shouldStop: s.shouldStop } : {}),
      onProgress: (p) => {
        if (!dryRun && s.progress) {
          bar ??= s.progress(p.total);
          if (p.phase === 'done') bar.update(p.index);
        }
        s.onProgress?.(p);
      },
    });
  } finally {
    bar?.stop();
  }
}

export function isReplayReport(v: unknown): v is ReplayReport {
  return typeof v === 'object' && v !== null && 'runId' in v && 'items' in v && 'dryRun' in v;
}

/** The plain-text report: one line per item, then the totals. */
export function renderReplayReport(r: ReplayReport): string {
  const lines = r.items.map((i) => {
    const { key, action, detail, ...view } = i;
    const fields = Object.entries(view).map(([k, v]) => `${k}=${v}`);
    return [action.padEnd(15), key, ...fields, detail ? `(${detail})` : ''].filter(Boolean).join('  ');
  });
  const summary =
    `run ${r.runId} (${r.kind}${r.dryRun ? ', dry run' : ''}): ${r.selected} selected, ` +
    `${r.acted} ${r.dryRun ? 'to act on' : 'acted on'}, ${r.skipped} skipped (done before), ${r.failed} failed` +
    (r.stopped ? `, stopped with ${r.remaining} left: run the same command again to continue` : '');
  return [...lines, summary].join('\n');
}
