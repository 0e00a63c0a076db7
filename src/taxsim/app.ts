/**
 * The reference tax authority's HTTP edge (Express 5):
 *
 *   POST /as4                 Peppol AS4 (signed receipt or ebMS error; the MLS follows as its own AS4 message)
 *   POST /api/tdd             a TDD as the body, the MLS as the answer (synchronous)
 *   GET  /api/reports         what was received (JSON, newest first; ?invoiceUuid= filters)
 *   GET  /api/reports/{id}    one report with its TDD and MLS XML and the C2/C3 comparison
 *   POST /api/faults          fail on purpose (loopback only): http-500, reject, slow, none; GET shows the current one
 *   POST /api/reset           forget everything (loopback only)
 *   GET  /                    the list as a page
 *   GET  /smp/…               its SMP, when an SMP key is given
 */
import { STATUS_CODES } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { EbmsError } from '../peppol/as4/ebms-error';
import type { As4Receiver } from '../peppol/as4/receiver';
import type { ParticipantId } from '../peppol/identifiers';
import { AuthorityUnavailableError, type Authority } from './authority';
import { parseFault, type Faults } from './faults';
import { LedgerFullError, type Ledger, type ReportRecord } from './ledger';
import { renderPage } from './page';
import { registerSmpRoutes, type TaxsimSmpOptions } from './smp';
import { TddUnreadableError } from './tdd-facts';

/** An error answer as RFC 9457 problem+json, like the gateway's API: the status's title and what went wrong. */
function problem(res: Response, status: number, detail: string, extra: Record<string, unknown> = {}): void {
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...extra }));
}

export interface TaxsimAppDeps {
  authority: Authority;
  ledger: Ledger;
  faults: Faults;
  participants: Readonly<Record<string, ParticipantId>>;
  /** Undefined when no AP key is configured: /as4 answers 503. */
  as4?: { receiver: As4Receiver; url: string; reset: () => void };
  smp?: TaxsimSmpOptions;
  maxTddBytes: number;
  maxAs4Bytes: number;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/** Whether a peer address is this machine's loopback (127.0.0.0/8, ::1, and 127.x as IPv4-mapped IPv6). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function isLoopback(req: Request): boolean {
  return isLoopbackAddress(req.socket.remoteAddress);
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : JSON.stringify(e));

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A report as the JSON list shows it (without the XML). */
function summary(ledger: Ledger, r: ReportRecord) {
  const f = r.facts;
  const match = ledger.matchOf(r);
  return {
    id: r.id,
    receivedAt: r.receivedAt.toISOString(),
    channel: r.channel,
    receiver: r.receiver,
    ...(r.as4MessageId ? { as4MessageId: r.as4MessageId } : {}),
    ...(r.sbdhInstanceId ? { sbdhInstanceId: r.sbdhInstanceId } : {}),
    ...(r.fromSeatId ? { fromSeatId: r.fromSeatId } : {}),
    role: f?.role ?? null,
    reportType: f?.typeCode ?? null,
    tddUuid: f?.tddUuid ?? null,
    transmissionUuid: f?.transmissionUuid ?? null,
    invoiceUuid: f?.invoiceUuid ?? null,
    invoiceNumber: f?.invoiceNumber ?? null,
    invoiceIssueDate: f?.invoiceIssueDate ?? null,
    sellerVat: f?.sellerVat ?? null,
    buyerVat: f?.buyerVat ?? null,
    totalWithVat: f?.totalWithVat ?? null,
    currency: f?.currency ?? null,
    reportingParty: f?.reportingParty ?? null,
    representative: f?.representative ?? null,
    ...(r.unreadable ? { unreadable: r.unreadable } : {}),
    verdict: r.verdict,
    reasons: r.reasons,
    validation: r.validation,
    duplicateOf: r.duplicateOf ?? null,
    mls: r.mls ? { responseCode: r.mls.responseCode, to: r.mls.to, delivery: r.mls.delivery } : null,
    match: match ? { status: match.status, c2: match.c2 ?? null, c3: match.c3 ?? null } : null,
  };
}

export function createTaxsimApp(deps: TaxsimAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  const { ledger, faults } = deps;
  const participantIds = Object.fromEntries(Object.entries(deps.participants).map(([cc, p]) => [cc, p.value]));

  /** Faults that come before any processing: a delay, then maybe a 500. True when the request was answered. */
  const injected = async (res: Response): Promise<boolean> => {
    const delay = faults.takeDelay();
    if (delay > 0) await sleep(delay);
    if (faults.takeHttp500()) {
      res.status(500).type('text/plain').send('taxsim: fault injected (http-500)');
      return true;
    }
    return false;
  };

  const raw = (limit: number) => express.raw({ type: () => true, limit, inflate: false });

  app.post('/as4', raw(deps.maxAs4Bytes), async (req: Request, res: Response) => {
    if (await injected(res)) return;
    const as4 = deps.as4;
    if (!as4) {
      res.status(503).type('text/plain').send('AS4 receiving is not configured on taxsim (no Peppol AP key)');
      return;
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await as4.receiver.receive(req.headers['content-type'] ?? '', body);
    if (answer.internalError !== undefined)
      deps.log('error', 'AS4 message could not be stored', { err: errorText(answer.internalError) });
    deps.log('info', answer.outcome === 'refused' ? 'AS4 message refused' : 'AS4 message received', {
      as4MessageId: answer.messageId,
      outcome: answer.outcome,
      ebmsCode: answer.ebmsCode,
      reason: answer.description,
    });
    res.status(answer.status).type(answer.contentType).send(answer.body);
  });

  app.post('/api/tdd', raw(deps.maxTddBytes), async (req: Request, res: Response) => {
    if (await injected(res)) return;
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (body.length === 0) {
      problem(res, 400, 'the body must be a Tax Data Document (XML)');
      return;
    }
    try {
      const { report, duplicate } = await deps.authority.judge({ channel: 'http', xml: body });
      const mls = ledger.get(report.id)?.mls;
      res
        .status(200)
        .set('X-Taxsim-Report-Id', report.id)
        .set('X-Taxsim-Verdict', report.verdict)
        .set('X-Taxsim-Duplicate', duplicate ? 'true' : 'false')
        .type('application/xml')
        .send(mls?.xml ?? '');
    } catch (e) {
      if (e instanceof TddUnreadableError) problem(res, 400, e.message);
      else if (e instanceof LedgerFullError || e instanceof AuthorityUnavailableError) problem(res, 503, e.message);
      else throw e;
    }
  });

  app.get('/api/reports', (req: Request, res: Response) => {
    const uuid = typeof req.query['invoiceUuid'] === 'string' ? req.query['invoiceUuid'].toLowerCase() : undefined;
    const items = ledger.list().filter((r) => !uuid || r.facts?.invoiceUuid.toLowerCase() === uuid);
    res.json({ items: items.map((r) => summary(ledger, r)), count: items.length, inMemory: true });
  });

  app.get('/api/reports/:id', (req: Request, res: Response) => {
    const r = ledger.get(String(req.params['id']));
    if (!r) return void problem(res, 404, 'no such report');
    const match = ledger.matchOf(r);
    res.json({ ...summary(ledger, r), xml: r.xml, mlsXml: r.mls?.xml ?? null, matchDetails: match ?? null });
  });

  const loopbackOnly = (req: Request, res: Response, next: NextFunction) => {
    if (isLoopback(req)) return next();
    problem(res, 403, 'faults and reset are accepted from loopback only');
  };

  app.get('/api/faults', (_req: Request, res: Response) => {
    res.json(faults.current);
  });

  app.post('/api/faults', loopbackOnly, express.json({ limit: 4096 }), (req: Request, res: Response) => {
    const parsed = parseFault(req.body);
    if (!parsed.ok) return void problem(res, 400, 'invalid fault', { problems: parsed.problems });
    faults.set(parsed.fault);
    deps.log('info', 'fault set', { fault: parsed.fault });
    res.json(faults.current);
  });

  app.post('/api/reset', loopbackOnly, (_req: Request, res: Response) => {
    ledger.reset();
    deps.as4?.reset();
    faults.set({ mode: 'none' });
    res.status(204).end();
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    res.json({ ok: true, reports: ledger.size, as4: !!deps.as4, participants: participantIds });
  });

  app.get('/', (_req: Request, res: Response) => {
    const f = faults.current;
    res
      .status(200)
      .set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
      .type('text/html')
      .send(renderPage(ledger, { participants: participantIds, as4Url: deps.as4?.url, fault: JSON.stringify(f) }));
  });

  if (deps.smp) {
    const router = express.Router();
    registerSmpRoutes(router, deps.smp);
    app.use(router);
  }

  // Oversize bodies (express.raw's 413), refused encodings and anything else: problem+json, signed ebMS for /as4.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.too.large') {
      res.set('Connection', 'close');
      if (req.path === '/as4' && deps.as4) {
        const a = deps.as4.receiver.refuse(
          new EbmsError('EBMS:0004', `the AS4 message exceeds ${deps.maxAs4Bytes} bytes`),
          undefined,
          413,
        );
        return void res.status(a.status).type(a.contentType).send(a.body);
      }
      return void problem(res, 413, `the body exceeds ${deps.maxTddBytes} bytes`);
    }
    if (e.type === 'encoding.unsupported')
      return void problem(res, 415, 'send the body uncompressed (no Content-Encoding)');
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500)
      return void problem(res, e.status, e.message ?? 'bad request');
    deps.log('error', 'taxsim request failed', { err: e.message ?? String(err) });
    problem(res, 500, 'internal error');
  });
  return app;
}
