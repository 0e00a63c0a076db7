/**
 * Event topics, wildcard topic patterns and hook selection (spec 6.2, 6.6, 6.8; decisions.md "Behaviour the spec
 * leaves open"). Pure and dependency-free: workflows import src/core.
 */

/**
 * Topics the gateway knows of (spec 6.2) plus `Ping`. Hooks accept unknown topics too: the list grows (spec 9), and a
 * hook registered for a future topic must keep working when that topic appears.
 */
export const KNOWN_TOPICS = [
  'InvoiceReceived',
  'InvoiceReceivedError',
  'InvoiceSent',
  'InvoiceSentRetry',
  'InvoiceSentError',
  'InvoiceResponseReceived',
  'InvoiceResponseReceivedError',
  'InvoiceResponseSent',
  'InvoiceResponseSentRetry',
  'InvoiceResponseSentError',
  'MessageLevelStatusReceived',
  'MessageLevelStatusSent',
  'OrderReceived',
  'OrderReceivedError',
  'OrderResponseReceived',
  'OrderResponseReceivedError',
  'OrderSent',
  'OrderSentRetry',
  'OrderSentError',
  'OrderResponseSent',
  'OrderResponseSentRetry',
  'OrderResponseSentError',
  'TaxReportSent',
  'TaxReportRetry',
  'TaxReportError',
  'HookSentRetry',
  'HookSentError',
  'Ping',
] as const;

export type KnownTopic = (typeof KNOWN_TOPICS)[number];

const KNOWN_TOPIC_SET: ReadonlySet<string> = new Set(KNOWN_TOPICS);

export function isKnownTopic(topic: string): topic is KnownTopic {
  return KNOWN_TOPIC_SET.has(topic);
}

/** Topics that report a failing hook; their `details.hookId` names that hook. */
export const HOOK_FAILURE_TOPICS: ReadonlySet<string> = new Set(['HookSentRetry', 'HookSentError']);

/** Longest topic or pattern accepted; topics are short PascalCase names, this only bounds matching work. */
export const MAX_TOPIC_LENGTH = 128;

const PATTERN_CHARS = /^[A-Za-z0-9*]+$/;

/**
 * Checks a hook's `topic` / `topics[]` entry. Returns null when usable, else a message for the API's 400.
 * Exact names (known or not) and wildcards are fine; anything outside `[A-Za-z0-9*]` or with `**` is refused because
 * it cannot match a topic name and most likely is a typo (`Invoice.*`, `Send**`).
 */
export function validateTopicPattern(pattern: string): string | null {
  if (typeof pattern !== 'string' || pattern.length === 0) return 'topic must be a non-empty string';
  if (pattern.length > MAX_TOPIC_LENGTH) return `topic is longer than ${MAX_TOPIC_LENGTH} characters`;
  if (!PATTERN_CHARS.test(pattern)) {
    const bad = [...pattern].find((c) => !/[A-Za-z0-9*]/.test(c)) ?? '';
    return `topic "${pattern}" contains "${bad}": only letters, digits and the wildcard * are allowed`;
  }
  if (pattern.includes('**')) return `topic "${pattern}" contains "**": use a single *`;
  return null;
}

export function isWildcardPattern(pattern: string): boolean {
  return pattern.includes('*');
}

/**
 * Glob match, case-sensitive: `*` matches any run of characters, including none. Two-pointer matching with one
 * backtrack point, so the work is O(pattern × topic) at worst and linear in practice; no regex is built from hook data.
 */
export function matchesTopic(pattern: string, topic: string): boolean {
  if (!isWildcardPattern(pattern)) return pattern === topic;
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < topic.length) {
    if (p < pattern.length && pattern[p] === '*') {
      starP = p++;
      starT = t;
    } else if (p < pattern.length && pattern[p] === topic[t]) {
      p++;
      t++;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Delivery channel of a hook (decisions.md "Hook action"). Unknown actions are each their own channel. */
export type HookAction = 'https' | 'httpsin' | 'mailto' | 'peppol' | 'drop';

/** The fields of a stored hook that routing reads. */
export interface HookForRouting {
  readonly id: string;
  readonly action: HookAction | (string & {});
  readonly topic?: string | null;
  readonly topics?: readonly string[] | null;
  /** Party the hook belongs to; null or absent = environment (tenant) level. */
  readonly partyId?: string | null;
  readonly isActive: boolean;
  /** Filter text (spec 6.8), evaluated by the caller-supplied predicate. */
  readonly filter?: string | null;
}

/** The fields of an event that routing reads. A full GatewayEvent fits. */
export interface RoutableEvent {
  readonly topic: string;
  readonly details?: Readonly<Record<string, string>>;
}

export type RoutingLabel = 'routed' | 'dropped' | 'dead-letter';

export interface HookSelection<H extends HookForRouting> {
  /** At most one hook per action, best first by the priority rules. `drop` hooks are included so the caller can
   * record which hook dropped the event; they need no delivery. */
  readonly selected: H[];
  readonly label: RoutingLabel;
}

export interface SelectHooksOptions<H extends HookForRouting, E extends RoutableEvent> {
  /**
   * Decides a hook's `filter` for this event (src/webhooks/filter). A hook whose filter is false is not a candidate,
   * so a lower-priority hook of the same channel can take the event. Required as soon as a candidate has a filter.
   */
  passesFilter?: (hook: H, event: E) => boolean;
  /**
   * Identifiers of the event's party. When given, party-level hooks of other parties are ignored; when absent the
   * caller has already narrowed the hooks to the event's tenant and party.
   */
  partyIds?: readonly string[];
}

/** A HookSentRetry/HookSentError about the delivery of another HookSentRetry/HookSentError. */
export function isSecondOrderHookFailure(event: RoutableEvent): boolean {
  return HOOK_FAILURE_TOPICS.has(event.topic) && HOOK_FAILURE_TOPICS.has(event.details?.originalTopic ?? '');
}

function hookPatterns(hook: HookForRouting): string[] {
  const out: string[] = [];
  if (typeof hook.topic === 'string' && hook.topic.length > 0) out.push(hook.topic);
  for (const t of hook.topics ?? []) if (typeof t === 'string' && t.length > 0) out.push(t);
  return out;
}

/** 'exact' when a pattern names the topic, 'wildcard' when only wildcards match, null when nothing matches. */
export function hookTopicMatch(hook: HookForRouting, topic: string): 'exact' | 'wildcard' | null {
  let result: 'wildcard' | null = null;
  for (const pattern of hookPatterns(hook)) {
    if (!isWildcardPattern(pattern)) {
      if (pattern === topic) return 'exact';
    } else if (result === null && matchesTopic(pattern, topic)) {
      result = 'wildcard';
    }
  }
  return result;
}

const isPartyLevel = (h: HookForRouting): boolean => typeof h.partyId === 'string' && h.partyId.length > 0;

/**
 * Picks the hooks an event goes to (spec 6.6 plus decisions.md):
 * - candidates: active hooks whose topic or topics[] match and whose filter passes;
 * - an event about a failing hook is never a candidate for that same hook (it would fail again and loop);
 * - a failure event about a failure event is not routed at all, so two failing hooks subscribed to each other's
 *   HookSent* events cannot feed each other forever; it stays visible in the events API (label `dropped`);
 * - per action (channel) the best candidate wins: party level before environment level, then an exact topic before a
 *   wildcard, then the smaller hook id (code-unit order, locale-independent). Wildcards are not ranked among
 *   themselves: the spec knows only "specific beats wildcard".
 * Label: `dead-letter` when nothing matched, `dropped` when only `drop` hooks matched, else `routed`.
 */
export function selectHooks<H extends HookForRouting, E extends RoutableEvent>(
  event: E,
  hooks: readonly H[],
  options: SelectHooksOptions<H, E> = {},
): HookSelection<H> {
  if (isSecondOrderHookFailure(event)) return { selected: [], label: 'dropped' };

  const failingHookId = HOOK_FAILURE_TOPICS.has(event.topic) ? event.details?.hookId : undefined;
  const parties = options.partyIds ? new Set(options.partyIds) : undefined;

  interface Ranked {
    hook: H;
    party: boolean;
    exact: boolean;
  }
  const best = new Map<string, Ranked>();
  for (const hook of hooks) {
    if (!hook.isActive) continue;
    if (failingHookId !== undefined && hook.id === failingHookId) continue;
    const party = isPartyLevel(hook);
    if (party && parties && !parties.has(hook.partyId as string)) continue;
    const match = hookTopicMatch(hook, event.topic);
    if (match === null) continue;
    if (typeof hook.filter === 'string' && hook.filter.trim().length > 0) {
      if (!options.passesFilter)
        throw new Error(`selectHooks: hook ${hook.id} has a filter but no passesFilter was given`);
      if (!options.passesFilter(hook, event)) continue;
    }
    const candidate: Ranked = { hook, party, exact: match === 'exact' };
    const current = best.get(hook.action);
    if (!current || outranks(candidate, current)) best.set(hook.action, candidate);
  }

  const selected = [...best.values()].sort(compareRanked).map((r) => r.hook);
  if (selected.length === 0) return { selected, label: 'dead-letter' };
  const label: RoutingLabel = selected.every((h) => h.action === 'drop') ? 'dropped' : 'routed';
  return { selected, label };

  function outranks(a: Ranked, b: Ranked): boolean {
    return compareRanked(a, b) < 0;
  }
}

function compareRanked(
  a: { hook: HookForRouting; party: boolean; exact: boolean },
  b: { hook: HookForRouting; party: boolean; exact: boolean },
): number {
  if (a.party !== b.party) return a.party ? -1 : 1;
  if (a.exact !== b.exact) return a.exact ? -1 : 1;
  if (a.hook.id === b.hook.id) return 0;
  return a.hook.id < b.hook.id ? -1 : 1;
}
