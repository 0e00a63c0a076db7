import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import {
  AttemptAttribute,
  ChannelAttribute,
  DocumentIdAttribute,
  DocumentKindAttribute,
  DocumentStateAttribute,
  NextAttemptOnAttribute,
  OutcomeAttribute,
  PartyIdAttribute,
  TenantIdAttribute,
} from './contracts/search-attributes';

/**
 * Whether this run carries the gateway's search attributes: its starter set TenantId, which it does only where the
 * namespace has them registered (a run setting an unregistered attribute fails its workflow task forever). Runs
 * started without them (the time-skipping test server, WorkflowStarter settings.searchAttributes false) upsert none.
 */
export function indexed(): boolean {
  return workflowInfo().typedSearchAttributes.get(TenantIdAttribute) !== undefined;
}

/** What changed about the run's document; `nextAttemptOn: null` removes it. */
export interface RunProgress {
  documentId?: string;
  partyId?: string;
  kind?: string;
  state?: string;
  outcome?: string;
  channel?: string;
  attempt?: number;
  nextAttemptOn?: Date | null;
}

/** Keeps the run's search attributes current (docs/operations.md); nothing on a run without them. */
export function searchProgress(p: RunProgress): void {
  if (!indexed()) return;
  const pairs: SearchAttributeUpdatePair[] = [];
  if (p.documentId !== undefined) pairs.push({ key: DocumentIdAttribute, value: p.documentId });
  if (p.partyId) pairs.push({ key: PartyIdAttribute, value: p.partyId });
  if (p.kind !== undefined) pairs.push({ key: DocumentKindAttribute, value: p.kind });
  if (p.state !== undefined) pairs.push({ key: DocumentStateAttribute, value: p.state });
  if (p.outcome !== undefined) pairs.push({ key: OutcomeAttribute, value: p.outcome });
  if (p.channel !== undefined) pairs.push({ key: ChannelAttribute, value: p.channel });
  if (p.attempt !== undefined) pairs.push({ key: AttemptAttribute, value: p.attempt });
  if (p.nextAttemptOn !== undefined) pairs.push({ key: NextAttemptOnAttribute, value: p.nextAttemptOn });
  if (pairs.length > 0) upsertSearchAttributes(pairs);
}
