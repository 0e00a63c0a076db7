import type { Request, Response, Router } from 'express';
import { DocumentState } from '../../src/core/document-states';
import { GatewayError } from '../../src/core/gateway-error';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRecord, DocumentRepository } from '../../src/storage/document.repository';
import { partyOf, requireParty } from '../access';
import { queryString } from '../request';

export interface DocumentListRouteDeps {
  directory: DirectoryRepository;
  documents: Pick<DocumentRepository, 'listForParty'>;
}

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;
/** Records one request reads at most while filters skip them (a rare kind among many documents). */
export const MAX_SCANNED = 10 * MAX_PAGE;
const KIND = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;

/** A page's position: the last document it returned (its write time and id), opaque to the caller. */
export interface Position {
  createdAt: Date;
  documentId: string;
}

export function encodeCursor(p: Position): string {
  return Buffer.from(`${p.createdAt.getTime()}|${p.documentId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  const bad = () => new GatewayError('BAD_REQUEST', 'cursor is not a cursor this endpoint returned');
  if (!CURSOR.test(cursor)) throw bad();
  const m = /^(\d{1,15})\|([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw bad();
  return { createdAt: new Date(Number(m[1])), documentId: m[2] as string };
}

function dateQuery(req: Request, name: string): Date | undefined {
  const v = queryString(req, name);
  if (v === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(v) ? new Date(v) : new Date(NaN);
  if (Number.isNaN(at.getTime())) throw new GatewayError('BAD_REQUEST', `${name} must be an ISO 8601 date-time`);
  return at;
}

function limitQuery(req: Request): number {
  const v = queryString(req, 'limit');
  if (v === undefined) return DEFAULT_PAGE;
  const n = /^\d{1,4}$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE))
    throw new GatewayError('BAD_REQUEST', `limit must be an integer from 1 to ${MAX_PAGE}`);
  return n;
}

function directionQuery(req: Request): 'outbound' | 'inbound' | undefined {
  const v = queryString(req, 'direction');
  if (v === undefined) return undefined;
  if (v === 'sent') return 'outbound';
  if (v === 'received') return 'inbound';
  throw new GatewayError('BAD_REQUEST', 'direction must be sent or received');
}

/** The official-rule verdict a record's validation entry holds, in the shape the API shows it. */
export function verdictOfRecord(doc: DocumentRecord): Record<string, unknown> | undefined {
  const entry = doc.history.find((h) => h.key === 'validate');
  if (!entry) return undefined;
  if (entry.state === DocumentState.NotValidated)
    return { verdict: 'not-validated', ...(entry.detail ? { reason: entry.detail } : {}) };
  const v = doc.validation;
  const verdict = entry.state === DocumentState.Validated ? 'valid' : 'invalid';
  if (!v) return { verdict, ...(verdict === 'invalid' && entry.detail ? { reason: entry.detail } : {}) };
  const errors = v.assertions.filter((a) => a.flag === 'error');
  return {
    verdict,
    errorCount: v.errorCount,
    warningCount: v.warningCount,
    ...(verdict === 'invalid'
      ? {
          reasonCodes: [...new Set(v.assertions.map((a) => a.reasonCode))].sort(),
          ruleIds: [...new Set(errors.map((a) => a.ruleId))],
        }
      : {}),
  };
}

function listItem(doc: DocumentRecord) {
  const validation = verdictOfRecord(doc);
  return {
    id: doc.documentId,
    direction: doc.direction === 'inbound' ? 'received' : 'sent',
    kind: doc.format?.documentType ?? null,
    state: doc.state,
    createdBy: doc.createdBy,
    createdOn: doc.createdAt.toISOString(),
    contentType: doc.contentType,
    size: doc.size,
    sha256: doc.sha256,
    ...(doc.format
      ? { format: { id: doc.format.id, name: doc.format.name, documentType: doc.format.documentType } }
      : {}),
    ...(validation ? { validation } : {}),
  };
}

/**
 * One page: documents the filters leave out (kind, unanswered uploads) are read and skipped, in batches, until the
 * page and one more are found, so `next` is given only when another page exists. At most `maxScanned` records are
 * read: past that the page is what was found (perhaps nothing) and `next` the position reached.
 */
export async function readPage(
  read: (after: Position | undefined, batch: number) => Promise<DocumentRecord[]>,
  options: { after: Position | undefined; limit: number; kind?: string; maxScanned?: number },
): Promise<{ documents: DocumentRecord[]; next: Position | undefined }> {
  const { limit, kind } = options;
  const maxScanned = options.maxScanned ?? MAX_SCANNED;
  const page: DocumentRecord[] = [];
  const batch = Math.min(MAX_PAGE, limit + 1);
  let after = options.after;
  let scanned = 0;
  for (;;) {
    const found = await read(after, batch);
    scanned += found.length;
    for (const doc of found) {
      if (!doc.accepted) continue;
      if (kind !== undefined && doc.format?.documentType.toLowerCase() !== kind.toLowerCase()) continue;
      page.push(doc);
      if (page.length > limit) break;
    }
    const last = found[found.length - 1];
    if (page.length > limit || found.length < batch || !last) break;
    after = { createdAt: last.createdAt, documentId: last.documentId };
    if (scanned >= maxScanned) return { documents: page, next: after };
  }
  const documents = page.slice(0, limit);
  const lastShown = documents[documents.length - 1];
  const more = page.length > limit && lastShown;
  return {
    documents,
    next: more ? { createdAt: lastShown.createdAt, documentId: lastShown.documentId } : undefined,
  };
}

/**
 * GET /api/v1/{partyId}/documents (spec 4.10): the party's documents, sent and received, in the order they were
 * written (newest last), a page at a time. The cursor is the last returned document's position, so a page never
 * repeats or skips a document written before it was read, however many are written meanwhile. Sales invoices whose
 * upload was never answered 200 are not listed; `kind` filters on the detected document type.
 */
export function registerDocumentListRoutes(router: Router, deps: DocumentListRouteDeps): void {
  const party = requireParty(deps.directory);

  router.get('/api/v1/:partyId/documents', party, async (req: Request, res: Response) => {
    const { tenantId, partyId } = partyOf(res);
    const direction = directionQuery(req);
    const since = dateQuery(req, 'since');
    const until = dateQuery(req, 'until');
    const limit = limitQuery(req);
    const kind = queryString(req, 'kind');
    if (kind !== undefined && !KIND.test(kind)) throw new GatewayError('BAD_REQUEST', 'kind must be a document type');
    const cursor = queryString(req, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor(cursor);

    const { documents, next } = await readPage(
      (position, batch) =>
        deps.documents.listForParty({
          tenantId,
          partyId,
          ...(direction ? { direction } : {}),
          ...(since ? { since } : {}),
          ...(until ? { until } : {}),
          ...(position ? { after: position } : {}),
          limit: batch,
        }),
      { after, limit, ...(kind !== undefined ? { kind } : {}) },
    );
    res.json({ documents: documents.map(listItem), ...(next ? { nextCursor: encodeCursor(next) } : {}) });
  });
}
