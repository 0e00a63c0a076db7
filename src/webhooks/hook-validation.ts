import { z } from 'zod';
import { isGatewayError } from '../core/gateway-error';
import { validateTopicPattern } from '../core/topics';
import type { HookFields } from '../storage/hooks/hook.repository';
import { MailtoError, parseMailtoUrl } from '../email/mailto';
import { compileFilter } from './filter';
import { parseHttpsinUrl } from './httpsin';
import { MAX_OUTPUT_RULES, normalizeWhen, validateOutputRule } from '../core/output-rules';
import { validateSecureKey } from './sign-payload';
import { checkTargetUrl, type AllowList } from './ssrf-guard';

/**
 * Checks a hook registration or update (spec 2.4, decisions.md "Hook action") and turns it into stored fields. All
 * problems are collected, each with the field it concerns, for one 400 that says everything at once.
 */

export const HOOK_ACTIONS = ['https', 'httpsin', 'mailto', 'peppol', 'drop'] as const;
export type HookActionName = (typeof HOOK_ACTIONS)[number];

/**
 * Actions whose deliveries are signed HTTP requests and so need a secureKey. An httpsin hook's events are read from
 * the gateway's inbox over TLS with the hook's credentials: nothing is signed, a secureKey is kept if given.
 */
export const SIGNED_ACTIONS: ReadonlySet<string> = new Set(['https']);

export const MAX_TOPICS = 50;
export const MAX_URL_LENGTH = 2048;
export const MAX_NAME_LENGTH = 200;

/** The request body; unknown members are ignored (spec 9: clients may send fields of newer versions). */
export const HookBody = z.object({
  action: z.string().optional(),
  name: z.string().max(MAX_NAME_LENGTH).optional(),
  url: z.string().max(MAX_URL_LENGTH).nullable().optional(),
  topic: z.string().nullable().optional(),
  topics: z.array(z.string()).max(MAX_TOPICS).nullable().optional(),
  secureKey: z.string().nullable().optional(),
  filter: z.string().nullable().optional(),
  output: z
    .array(z.object({ when: z.union([z.string(), z.number()]), topic: z.string() }))
    .max(MAX_OUTPUT_RULES)
    .nullable()
    .optional(),
  mlsType: z.enum(['ALWAYS_SEND', 'FAILURE_ONLY']).nullable().optional(),
  isActive: z.boolean().optional(),
  /** Per-hook attempt timeout in seconds (ours; at most the configured maximum). */
  timeoutSeconds: z.number().int().min(1).nullable().optional(),
  /** v1-beta create only: register at party level. */
  partyId: z.string().nullable().optional(),
});
export type HookBody = z.infer<typeof HookBody>;

export interface HookValidationOptions {
  /** v1-beta accepts `output`; v1 refuses it rather than dropping it silently. */
  allowOutput: boolean;
  /** Create: secureKey required for signed actions. Update: absent = keep the stored one. */
  mode: 'create' | 'update';
  /** The stored hook has a secureKey (update of a hook whose key is kept). */
  hasStoredSecureKey?: boolean;
  allowHttp: boolean;
  allowList: AllowList;
  /** Largest attempt timeout in ms (WEBHOOK_TIMEOUT_MS). */
  maxTimeoutMs: number;
}

export interface FieldError {
  path: string;
  message: string;
}

export type HookValidation =
  { ok: true; fields: HookFields; secureKey: string | undefined } | { ok: false; errors: FieldError[] };

function inferAction(url: string | null | undefined): HookActionName | null {
  if (!url) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'https' || scheme === 'http') return 'https';
  if (scheme === 'httpsin') return 'httpsin';
  if (scheme === 'mailto') return 'mailto';
  return null;
}

export function validateHookBody(raw: unknown, options: HookValidationOptions): HookValidation {
  const parsed = HookBody.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || 'body', message: i.message })),
    };
  }
  const b = parsed.data;
  const errors: FieldError[] = [];
  const err = (path: string, message: string) => errors.push({ path, message });

  // action
  let action: string | null = null;
  if (b.action !== undefined) {
    if ((HOOK_ACTIONS as readonly string[]).includes(b.action)) action = b.action;
    else err('action', `action must be one of ${HOOK_ACTIONS.join(', ')}`);
  } else {
    action = inferAction(b.url);
    if (!action) err('action', 'action is required unless the url scheme (https, httpsin, mailto) implies it');
  }

  // url per action
  const url = b.url ?? null;
  if (action === 'https') {
    if (!url) err('url', 'an https hook needs a url');
    else {
      const problem = checkTargetUrl(url, options.allowList, { allowHttp: options.allowHttp });
      if (problem) err('url', problem);
    }
  } else if (action === 'httpsin') {
    if (!url) err('url', 'an httpsin hook needs a url of the form httpsin://user:password@inbound?token=$token$');
    else {
      const p = parseHttpsinUrl(url);
      if (typeof p === 'string') err('url', p);
    }
  } else if (action === 'mailto') {
    if (!url) err('url', 'a mailto hook needs a url: mailto:<address or [receiverEmailAddress]>?<parameters>');
    else {
      try {
        parseMailtoUrl(url);
      } catch (e) {
        if (!(e instanceof MailtoError)) throw e;
        err('url', `a mailto hook url must be a mailto: URL the e-mail channel can use: ${e.message}`);
      }
    }
  }

  // A URL as the API shows it (password masked) sent back would store the mask as the password.
  if (url && /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:\*\*\*@/i.test(url)) {
    err('url', 'the password in the URL is masked (***) in answers; send the real one');
  }

  // topics
  const topic = b.topic === undefined || b.topic === null || b.topic === '' ? null : b.topic;
  const topics = [...new Set((b.topics ?? []).filter((t) => t !== ''))];
  if (topic === null && topics.length === 0)
    err('topic', 'give topic or topics (an exact name or a wildcard such as Send*)');
  if (topic !== null) {
    const problem = validateTopicPattern(topic);
    if (problem) err('topic', problem);
  }
  topics.forEach((t, i) => {
    const problem = validateTopicPattern(t);
    if (problem) err(`topics.${i}`, problem);
  });

  // secureKey
  const secureKey = b.secureKey === null || b.secureKey === undefined ? undefined : b.secureKey;
  if (secureKey !== undefined) {
    const problem = validateSecureKey(secureKey);
    if (problem) err('secureKey', problem);
  } else if (action && SIGNED_ACTIONS.has(action) && (options.mode === 'create' || !options.hasStoredSecureKey)) {
    err('secureKey', `an ${action} hook needs a secureKey: every delivery is signed with it`);
  }

  // filter
  let filter: string | null = null;
  if (typeof b.filter === 'string' && b.filter.trim() !== '') {
    try {
      compileFilter(b.filter);
      filter = b.filter;
    } catch (e) {
      err('filter', isGatewayError(e) ? e.message : 'the filter could not be read');
    }
  }

  // output
  const output: { when: string; topic: string }[] = [];
  if (b.output !== undefined && b.output !== null) {
    if (!options.allowOutput) err('output', 'output rules are accepted on /api/v1-beta/hook only');
    else {
      b.output.forEach((rule, i) => {
        const problem = validateOutputRule(rule);
        if (problem) err(`output.${i}`, problem);
        else output.push({ when: normalizeWhen(rule.when) as string, topic: rule.topic });
      });
    }
  }

  // mlsType
  const mlsType = b.mlsType ?? null;
  if (mlsType !== null && action !== 'peppol') err('mlsType', 'mlsType applies to peppol hooks only');

  // timeout
  let timeoutMs: number | null = null;
  if (typeof b.timeoutSeconds === 'number') {
    timeoutMs = b.timeoutSeconds * 1000;
    if (timeoutMs > options.maxTimeoutMs)
      err('timeoutSeconds', `timeoutSeconds must be at most ${Math.floor(options.maxTimeoutMs / 1000)}`);
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    secureKey,
    fields: {
      action: action as string,
      name: b.name ?? '',
      url,
      topic,
      topics,
      filter,
      output,
      mlsType,
      isActive: b.isActive ?? true,
      timeoutMs,
    },
  };
}
