/**
 * Delivery channels of a sales document (decisions.md "Channels"). Channels are hooks: an upload produces a sending
 * topic (`SendInvoice`, `SendCreditNote`), and the hook that the selection rules of spec 6.6 pick for it is the
 * channel: `peppol` delivers over Peppol AS4, `mailto` sends the e-mail, `drop` deliberately sends nothing. A channel's
 * result (200 delivered, 400 permanent, 404 recipient or document type not found, 500 retries exhausted) goes through
 * its `output` rules (spec 6.7): a matching rule names the next sending topic (`Send*Fallback` →
 * `SendInvoiceFallback`), which the next channel hook takes. With no channel hook at all, Peppol is the implicit
 * channel, so a tenant that configures nothing still sends over Peppol. Pure: the workflow and the API both use it.
 */
import { matchesTopic, selectHooks, type HookForRouting, type RoutableEvent } from './topics';
import { selectOutputTopic, type OutputRule } from './output-rules';

/** Hook actions that are channels of a sending topic (the sendInvoice workflow acts on them, not the event path). */
export const CHANNEL_ACTIONS: ReadonlySet<string> = new Set(['peppol', 'mailto', 'drop']);

/**
 * Topic patterns that never make an `https` hook a channel: they catch every sending topic, and hooks on them are
 * integrators' notification hooks (decisions.md "Channels").
 */
const CATCH_ALL_PATTERNS: ReadonlySet<string> = new Set(['*', 'Send*']);

/** `?channel=` value that asks for Peppol first and the e-mail fallback after (spec 4.3). */
export const PEPPOL_FALLBACK = 'peppol-fallback';

/** Name of the implicit Peppol channel (no hook) in a run's list of channels tried. */
export const IMPLICIT_PEPPOL = 'peppol';

/** Most channels one document goes through: output rules chaining topics cannot loop. */
export const MAX_CHANNEL_HOPS = 5;

/** The rules of Peppol as the implicit or `peppol-fallback` channel: any failure hands the document to the fallback. */
export const FALLBACK_RULES: readonly OutputRule[] = Object.freeze([
  { when: '400', topic: 'Send*Fallback' },
  { when: '404', topic: 'Send*Fallback' },
  { when: '500', topic: 'Send*Fallback' },
]);

/** The result codes of a channel (what output rules match). */
export const ChannelStatus = { Delivered: 200, Refused: 400, NotFound: 404, Exhausted: 500 } as const;
export type ChannelStatusCode = (typeof ChannelStatus)[keyof typeof ChannelStatus];

/** A hook as channel selection reads it. */
export interface ChannelHook extends HookForRouting {
  readonly output?: readonly OutputRule[] | null;
  readonly mlsType?: string | null;
}

export type Channel =
  /** `hookId` null: the implicit channel. */
  | { kind: 'peppol'; hookId: string | null; output: OutputRule[]; mlsType: string | null }
  | { kind: 'mailto'; hookId: string; output: OutputRule[] }
  /** The document POSTed, signed, to an external system. */
  | { kind: 'https'; hookId: string; output: OutputRule[] }
  | { kind: 'drop'; hookId: string };

/** What `*` stands for in sending topics: the document kind (`Invoice`, `CreditNote`). */
export function documentKindOf(documentType: string): 'Invoice' | 'CreditNote' {
  return documentType === 'CreditNote' ? 'CreditNote' : 'Invoice';
}

/** The first sending topic of a document. */
export function sendTopicOf(documentType: string): string {
  return `Send${documentKindOf(documentType)}`;
}

/** Topics sending documents through channels: `Send…`. */
export function isSendTopic(topic: string): boolean {
  return /^Send[A-Z]/.test(topic);
}

function isFallbackTopic(topic: string): boolean {
  return topic.endsWith('Fallback');
}

function patterns(hook: HookForRouting): string[] {
  return [...(hook.topic ? [hook.topic] : []), ...(hook.topics ?? [])];
}

/**
 * A mail hook that listens on both the sending topic and a fallback topic (`Send*` and `Send*Fallback`) is the
 * fallback of Peppol, not a first channel: spec 4.3 names that configuration the `peppol-fallback` channel. One on a
 * fallback topic only is a channel for output rules that name it, not the implicit fallback.
 */
export function isFallbackListener(hook: HookForRouting, kind: string): boolean {
  if (hook.action !== 'mailto') return false;
  const all = patterns(hook);
  return all.some(isFallbackTopic) && all.some((p) => !isFallbackTopic(p) && matchesTopic(p, `Send${kind}`));
}

/**
 * Whether a hook can be the channel of `topic`. The channel actions always can. An `https` hook can when it is forced
 * (`?channel=`), or for a topic an output rule produced (not the first): there, through a pattern naming more than
 * every sending topic (`Send*Fallback`, `SendInvoiceFallback`; not `*` or `Send*`). On the first topic, and through
 * catch-all patterns, https hooks are notified of the sending event like any other hook: a notification hook never
 * takes an invoice away from Peppol.
 */
function canBeChannel(hook: ChannelHook, topic: string, first: boolean, forced: boolean): boolean {
  if (CHANNEL_ACTIONS.has(hook.action)) return true;
  if (hook.action !== 'https') return false;
  if (forced) return true;
  return !first && patterns(hook).some((p) => !CATCH_ALL_PATTERNS.has(p) && matchesTopic(p, topic));
}

function channelOf(hook: ChannelHook): Channel {
  if (hook.action === 'drop') return { kind: 'drop', hookId: hook.id };
  if (hook.action === 'mailto') return { kind: 'mailto', hookId: hook.id, output: [...(hook.output ?? [])] };
  if (hook.action === 'https') return { kind: 'https', hookId: hook.id, output: [...(hook.output ?? [])] };
  return { kind: 'peppol', hookId: hook.id, output: [...(hook.output ?? [])], mlsType: hook.mlsType ?? null };
}

export interface ChooseChannelOptions<H extends ChannelHook> {
  /** `?channel=` of the upload: a hook id or `peppol-fallback`; only for the first sending topic. */
  forced?: string | undefined;
  /** Hook ids (and IMPLICIT_PEPPOL) this document already went through: none is taken twice. */
  tried?: readonly string[];
  /** The hooks' filters (spec 6.8), as the event path evaluates them. */
  passesFilter?: (hook: H, event: RoutableEvent) => boolean;
  /** The sending event's details, for filters. */
  details?: Readonly<Record<string, string>>;
  /** Whether this is the document's first sending topic (default: a topic not ending in `Fallback`). */
  first?: boolean;
}

export type ChannelChoice<H extends ChannelHook> =
  { ok: true; channel: Channel; hook: H | null } | { ok: false; reason: string };

/** The mail hook that listens on the fallback topic of this document kind (spec 4.3): Peppol then falls back to it. */
function fallbackHook<H extends ChannelHook>(
  kind: string,
  hooks: readonly H[],
  options: ChooseChannelOptions<H>,
): H | undefined {
  const topic = `Send${kind}Fallback`;
  const event = { topic, details: options.details ?? {} };
  const found = selectHooks(
    event,
    hooks.filter((h) => isFallbackListener(h, kind)),
    options.passesFilter ? { passesFilter: options.passesFilter } : {},
  );
  return found.selected[0];
}

function implicitPeppol<H extends ChannelHook>(kind: string, hooks: readonly H[], o: ChooseChannelOptions<H>): Channel {
  const fallback = fallbackHook(kind, hooks, o);
  return { kind: 'peppol', hookId: null, output: fallback ? [...FALLBACK_RULES] : [], mlsType: null };
}

/**
 * The channel of one sending topic. Candidates are the active hooks not tried yet that can be its channel
 * (`canBeChannel`). A forced channel (first
 * topic only) is that hook whatever its topics, or for `peppol-fallback` Peppol (the party's Peppol hook if it has
 * one) with the fallback rules. Otherwise the best hook by spec 6.6 among those whose topics match, a mail hook that
 * listens on the fallback topic counting only for fallback topics; with none, the implicit Peppol channel for a first
 * topic, nothing for a fallback topic.
 */
export function chooseChannel<H extends ChannelHook>(
  topic: string,
  kind: string,
  hooks: readonly H[],
  options: ChooseChannelOptions<H> = {},
): ChannelChoice<H> {
  const tried = new Set(options.tried ?? []);
  const first = options.first ?? !isFallbackTopic(topic);
  const forced = options.forced !== undefined && options.forced !== PEPPOL_FALLBACK;
  const candidates = hooks.filter(
    (h) => h.isActive && !tried.has(h.id) && canBeChannel(h, topic, first, forced && h.id === options.forced),
  );
  if (options.forced !== undefined) {
    if (options.forced === PEPPOL_FALLBACK) {
      if (!fallbackHook(kind, candidates, options)) {
        return { ok: false, reason: `channel ${PEPPOL_FALLBACK} needs a mail hook listening on Send${kind}Fallback` };
      }
      // Peppol (the party's Peppol hook, if any, for its mlsType) with the fallback rules.
      const peppol = candidates.find((h) => h.action === 'peppol');
      const mlsType = peppol?.mlsType ?? null;
      const channel: Channel = { kind: 'peppol', hookId: peppol?.id ?? null, output: [...FALLBACK_RULES], mlsType };
      return { ok: true, channel, hook: peppol ?? null };
    }
    const hook = candidates.find((h) => h.id === options.forced);
    if (!hook) return { ok: false, reason: `the channel hook ${options.forced} does not exist or is switched off` };
    return { ok: true, channel: channelOf(hook), hook };
  }
  const event = { topic, details: options.details ?? {} };
  const selection = selectHooks(
    event,
    candidates.filter((h) => !(first && isFallbackListener(h, kind))),
    options.passesFilter ? { passesFilter: options.passesFilter } : {},
  );
  const best = selection.selected[0];
  if (best) return { ok: true, channel: channelOf(best), hook: best };
  if (first && !tried.has(IMPLICIT_PEPPOL)) {
    return { ok: true, channel: implicitPeppol(kind, candidates, options), hook: null };
  }
  return { ok: false, reason: `no channel hook takes ${topic}` };
}

/** The next sending topic a channel's result leads to through its output rules; undefined: the standard topics. */
export function nextSendTopic(channel: Channel, status: number, kind: string): string | undefined {
  if (channel.kind === 'drop' || status === ChannelStatus.Delivered) return undefined;
  return selectOutputTopic(channel.output, { httpStatus: status }, kind);
}

/** The id a channel has in a run's `tried` list. */
export function channelKey(channel: Channel): string {
  return channel.hookId ?? IMPLICIT_PEPPOL;
}
