import type { Request, RequestHandler, Response, Router } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { AUTH_REALM, createSubscriptionKeyCheck } from '../../src/auth/authenticate';
import type { SubscriptionKeyLookup } from '../../src/auth/subscription-keys';
import type { Config } from '../../src/config/load-config';
import { GatewayError } from '../../src/core/gateway-error';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DocumentRepository } from '../../src/storage/document.repository';
import type { HookRecord } from '../../src/storage/hooks/hook.repository';
import { entryEvent, INBOX_DEFAULT_LIMIT, INBOX_MAX_LIMIT, type HttpsinInbox } from '../../src/webhooks';
import { queryString } from '../request';
import { sendStoredDocument } from './documents.routes';

/**
 * The inbox of an httpsin hook (spec 6.9; decisions.md "httpsin hooks: a pull inbox"), served by the gateway to a
 * system that accepts no inbound traffic: it holds only the hook URL's `user:password`, sent as HTTP Basic. No bearer
 * token is asked or accepted here. Unknown hooks, deleted hooks, hooks of another action and wrong credentials are
 * one 401; a token of another hook or tenant, a malformed token and an unknown one are one 404.
 */

export interface InboxRouteDeps {
  config: {
    auth: Pick<Config['auth'], 'subscriptionKeys' | 'rateLimitApiPerMinute' | 'rateLimitTokenSourceFailuresPerMinute'>;
  };
  /** Absent in a process not wired for webhooks: the routes exist and answer 503. */
  inbox?: HttpsinInbox | undefined;
  documents: DocumentRepository;
  blobs: BlobStore;
  /** Partners' subscription keys; without it only the configured `SUBSCRIPTION_KEYS` are valid. */
  subscriptionKeys?: SubscriptionKeyLookup;
  /** Shared rate-limit stores when several processes serve the API (one per named limiter); default: in memory. */
  rateLimitStore?: (limiter: string) => Store;
}

export const INBOX_REALM = `${AUTH_REALM} inbox`;

const HOOK_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** RFC 7617: `Basic <base64 of user:password>`. */
const BASIC = /^Basic +([A-Za-z0-9+/]+=*) *$/i;

/** The Basic credentials of a request, or a message saying what is wrong with them. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | string {
  if (!header) return "Authorization header missing: send the hook URL's user:password as HTTP Basic credentials";
  const m = BASIC.exec(header);
  if (!m?.[1]) return "the Authorization header must hold HTTP Basic credentials (the hook URL's user:password)";
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return 'malformed Basic credentials: user:password expected';
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

function challenge(res: Response): void {
  res.setHeader('WWW-Authenticate', `Basic realm="${INBOX_REALM}", charset="UTF-8"`);
}

const HOOK = 'inboxHook';

function hookOf(res: Response): HookRecord {
  const hook = res.locals[HOOK] as HookRecord | undefined;
  if (!hook) throw new GatewayError('UNAUTHORIZED', 'Request is not authenticated');
  return hook;
}

export function registerInboxRoutes(router: Router, deps: InboxRouteDeps): void {
  const inbox = (): HttpsinInbox => {
    if (!deps.inbox)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'Webhooks are not configured in this API process');
    return deps.inbox;
  };
  const { rateLimitTokenSourceFailuresPerMinute: failuresMax, rateLimitApiPerMinute: requestsMax } = deps.config.auth;
  const sourceOf = (req: Request): string => ipKeyGenerator(req.ip ?? '');
  const limiter = (name: string, max: number, failuresOnly: boolean, key: (req: Request) => string, message: string) =>
    rateLimit({
      windowMs: 60_000,
      limit: max,
      standardHeaders: 'draft-6',
      legacyHeaders: false,
      skipSuccessfulRequests: failuresOnly,
      ...(deps.rateLimitStore ? { store: deps.rateLimitStore(name) } : {}),
      keyGenerator: key,
      handler: (_req, _res, next) => next(new GatewayError('RATE_LIMITED', message)),
    });
  /**
   * Refusals (wrong credentials, unknown tokens) from one address stop guessing, as failed token requests do; the
   * request budget is per address and hook, never per hook alone (anyone may name any hook id).
   */
  const failures = limiter(
    'inbox-source-failures',
    failuresMax,
    true,
    (req) => `addr:${sourceOf(req)}`,
    `Too many refused inbox requests from this address: at most ${failuresMax} per minute; check the credentials`,
  );
  const requests = limiter(
    'inbox-requests',
    requestsMax,
    false,
    (req) => `addr:${sourceOf(req)}|hook:${String(req.params['hookId'] ?? '')}`,
    `Too many inbox requests: at most ${requestsMax} per minute for this inbox from this address; see Retry-After`,
  );

  const authenticate: RequestHandler = async (req, res, next) => {
    try {
      const service = inbox();
      const credentials = basicCredentials(req.headers.authorization);
      if (typeof credentials === 'string') {
        challenge(res);
        next(new GatewayError('UNAUTHORIZED', capitalise(credentials)));
        return;
      }
      const hookId = String(req.params['hookId'] ?? '');
      const hook = HOOK_ID.test(hookId)
        ? await service.authenticate(hookId, credentials.user, credentials.password)
        : null;
      if (!hook) {
        challenge(res);
        next(new GatewayError('UNAUTHORIZED', 'These credentials do not open this inbox'));
        return;
      }
      res.locals[HOOK] = hook;
      next();
    } catch (err) {
      next(err);
    }
  };
  const guards = [createSubscriptionKeyCheck(deps.config, deps.subscriptionKeys), failures, authenticate, requests];
  const token = (req: Request): string => String(req.params['token'] ?? '');

  router.get('/api/v1/inbox/:hookId', ...guards, async (req: Request, res: Response) => {
    const limitText = queryString(req, 'limit');
    const limit = limitText === undefined || limitText === '' ? INBOX_DEFAULT_LIMIT : Number(limitText);
    if (!/^\d{1,4}$/.test(limitText ?? '1') || !Number.isInteger(limit) || limit < 1 || limit > INBOX_MAX_LIMIT)
      throw new GatewayError('BAD_REQUEST', `limit must be an integer from 1 to ${INBOX_MAX_LIMIT}`);
    const cursor = queryString(req, 'cursor') || undefined;
    res.set('Cache-Control', 'no-store');
    res.json(await inbox().list(hookOf(res), { cursor, limit }));
  });

  router.get('/api/v1/inbox/:hookId/:token', ...guards, async (req: Request, res: Response) => {
    const { item } = await inbox().entry(hookOf(res), token(req));
    res.set('Cache-Control', 'no-store');
    res.json(item);
  });

  router.get('/api/v1/inbox/:hookId/:token/document', ...guards, async (req: Request, res: Response) => {
    const hook = hookOf(res);
    const { entry } = await inbox().entry(hook, token(req));
    const event = entryEvent(entry);
    if (!event.documentId)
      throw new GatewayError('DOCUMENT_NOT_FOUND', `The event of this entry (${event.topic}) has no document`);
    // The entry authorises the document of its own event, in the hook's tenant; nothing else is reachable here.
    const doc = await deps.documents.find(hook.tenantId, event.documentId);
    if (!doc) throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${event.documentId} is no longer stored`);
    res.set('Cache-Control', 'no-store');
    await sendStoredDocument(deps, res, doc);
  });

  router.post('/api/v1/inbox/:hookId/:token/ack', ...guards, async (req: Request, res: Response) => {
    // Idempotent: a repeat answers the same, with the first acknowledgement's time.
    const { item } = await inbox().ack(hookOf(res), token(req));
    res.json(item);
  });
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
