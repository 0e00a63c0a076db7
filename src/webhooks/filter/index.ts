import type { HookForRouting } from '../../core/topics';
import type { GatewayEvent } from '../event-payload';
import { CompiledFilter, compileFilter } from './compile-filter';
import { evaluate } from './evaluate';

export { compileFilter, FILTER_LIMITS, STRING_METHODS } from './compile-filter';
export type { CompiledFilter, FilterNode } from './compile-filter';
export { evaluate } from './evaluate';

type FilterEvent = Pick<GatewayEvent, 'topic' | 'partyId' | 'message' | 'createdBy' | 'createdOn' | 'details'> &
  Partial<Pick<GatewayEvent, 'documentId' | 'refToDocumentId'>>;

/**
 * The variables a filter sees: every `details` field (`sender`, `recipient`, `statusCode`, …) plus the top-level
 * fields topic, partyId, documentId, refToDocumentId, message, createdBy and createdOn. Flat, as in the contract's
 * examples (`sender == "…"`); a top-level field wins over a details field of the same name.
 */
export function filterVariables(event: FilterEvent): Record<string, string> {
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(event.details ?? {})) if (typeof v === 'string') vars[k] = v;
  const top: Array<[string, unknown]> = [
    ['topic', event.topic],
    ['partyId', event.partyId],
    ['documentId', event.documentId],
    ['refToDocumentId', event.refToDocumentId],
    ['message', event.message],
    ['createdBy', event.createdBy],
    ['createdOn', event.createdOn],
  ];
  for (const [k, v] of top) if (typeof v === 'string') vars[k] = v;
  return vars;
}

/**
 * A `passesFilter` for selectHooks that compiles each distinct filter text once. A stored filter that no longer
 * compiles (limits tightened since it was accepted) matches nothing: delivering events the customer meant to exclude
 * would be worse than not delivering, and the event still reaches the other channels or ends as dead letter.
 */
export function createFilterPredicate(maxCached = 1000): (hook: HookForRouting, event: FilterEvent) => boolean {
  const cache = new Map<string, CompiledFilter | null>();
  const varsOf = new WeakMap<object, Record<string, string>>();
  return (hook, event) => {
    const text = hook.filter;
    if (typeof text !== 'string' || text.trim().length === 0) return true;
    let compiled = cache.get(text);
    if (compiled === undefined) {
      try {
        compiled = compileFilter(text);
      } catch {
        compiled = null;
      }
      // Oldest first out: Maps iterate in insertion order.
      if (cache.size >= maxCached) cache.delete(cache.keys().next().value as string);
      cache.set(text, compiled);
    }
    if (compiled === null) return false;
    let vars = varsOf.get(event);
    if (!vars) {
      vars = filterVariables(event);
      varsOf.set(event, vars);
    }
    return evaluate(compiled, vars);
  };
}
