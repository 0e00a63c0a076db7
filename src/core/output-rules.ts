import { MAX_TOPIC_LENGTH, validateTopicPattern } from './topics';

/**
 * Conditional output topics (spec 6.7, v1-beta). A rule is `{ when, topic }`; the first rule whose `when` matches the
 * result of a delivery attempt decides the published topic, `*` in it standing for the original topic. Decided here
 * (the spec is silent): a match ends the delivery: the rule's topic is published instead of HookSentRetry /
 * HookSentError and no retry follows, since the point of a rule is to hand the event to another channel now.
 *
 * `when` forms: an HTTP status (`"400"`), a status class (`"4xx"`, `"5xx"`), `"timeout"` (no answer in time) and
 * `"error"` (no HTTP answer at all: timeout, refused, reset, TLS, DNS, blocked address).
 */

export interface OutputRule {
  when: string;
  topic: string;
}

/** The result of one attempt as the rules see it. */
export type AttemptOutcomeForRules = { httpStatus: number } | { httpStatus?: undefined; timedOut: boolean };

export const MAX_OUTPUT_RULES = 20;

const GATEWAY_TOPICS: ReadonlySet<string> = new Set(['HookSentRetry', 'HookSentError', 'Ping']);

const STATUS = /^[1-5]\d\d$/;
const STATUS_CLASS = /^[1-5]xx$/;

/** Normalises a `when` (numbers allowed, case-insensitive class) or returns null when it is not one of the forms. */
export function normalizeWhen(when: unknown): string | null {
  const text =
    typeof when === 'number' && Number.isInteger(when)
      ? String(when)
      : typeof when === 'string'
        ? when.trim().toLowerCase()
        : null;
  if (text === null) return null;
  if (STATUS.test(text) || STATUS_CLASS.test(text) || text === 'timeout' || text === 'error') return text;
  return null;
}

/** Checks one rule; null when usable, else a message. */
export function validateOutputRule(rule: { when: unknown; topic: unknown }): string | null {
  if (normalizeWhen(rule.when) === null) {
    return 'when must be an HTTP status such as 400, a class such as 5xx, "timeout" or "error"';
  }
  if (typeof rule.topic !== 'string') return 'topic must be a string';
  const problem = validateTopicPattern(rule.topic);
  if (problem) return problem;
  // The gateway's own topics carry details only it can fill in.
  if (GATEWAY_TOPICS.has(rule.topic)) return `topic ${rule.topic} is published by the gateway itself`;
  return null;
}

export function whenMatches(when: string, result: AttemptOutcomeForRules): boolean {
  const w = normalizeWhen(when);
  if (w === null) return false;
  if (result.httpStatus !== undefined) {
    if (STATUS.test(w)) return Number(w) === result.httpStatus;
    if (STATUS_CLASS.test(w)) return Math.floor(result.httpStatus / 100) === Number(w[0]);
    return false;
  }
  if (w === 'error') return true;
  if (w === 'timeout') return result.timedOut;
  return false;
}

/** `Send*Fallback` for `Invoice` → `SendInvoiceFallback`. */
export function expandOutputTopic(pattern: string, originalTopic: string): string {
  return pattern.split('*').join(originalTopic);
}

/**
 * The topic the first matching rule publishes, or undefined. A topic that would grow past the topic length limit is
 * not published (a rule feeding its own output back cannot grow topics without bound).
 */
export function selectOutputTopic(
  rules: readonly OutputRule[],
  result: AttemptOutcomeForRules,
  originalTopic: string,
): string | undefined {
  for (const rule of rules) {
    if (!whenMatches(rule.when, result)) continue;
    const topic = expandOutputTopic(rule.topic, originalTopic);
    return topic.length <= MAX_TOPIC_LENGTH ? topic : undefined;
  }
  return undefined;
}
