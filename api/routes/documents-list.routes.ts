import type { Readable } from 'node:stream';
import { ZipArchive } from 'archiver';
import type { Request, Response, Router } from 'express';
import { DocumentState } from '../../src/core/document-states';
import { GatewayError } from '../../src/core/gateway-error';
import type { Logger } from '../../src/observability/logger';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRecord, DocumentRepository } from '../../src/storage/document.repository';
import { partyOf, requireParty } from '../access';
import { requestIdOf } from '../problem-details';
import { queryString } from '../request';

export interface DocumentListRouteDeps {
  directory: DirectoryRepository;
  documents: Pick<DocumentRepository, 'listForParty'>;
  /** The stored bytes the archive streams. */
  blobs: Pick<BlobStore, 'open'>;
  logger: Logger;
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

/** A page request's filters and position, as both the listing and the archive take them. */
export interface PageQuery {
  direction: 'outbound' | 'inbound' | undefined;
  since: Date | undefined;
  until: Date | undefined;
  kind: string | undefined;
  after: Position | undefined;
  limit: number;
}

/** Reads and checks the page query (direction, kind, since, until, cursor, limit); a value out of range is a 400. */
export function pageQuery(req: Request): PageQuery {
  const direction = directionQuery(req);
  const since = dateQuery(req, 'since');
  const until = dateQuery(req, 'until');
  const limit = limitQuery(req);
  const kind = queryString(req, 'kind');
  if (kind !== undefined && !KIND.test(kind)) throw new GatewayError('BAD_REQUEST', 'kind must be a document type');
  const cursor = queryString(req, 'cursor');
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  return { direction, since, until, kind, after, limit };
}

/** The party's page the query names, with the cursor of the next one when another exists. */
async function partyPage(
  deps: DocumentListRouteDeps,
  scope: { tenantId: string; partyId: string },
  q: PageQuery,
): Promise<{ documents: DocumentRecord[]; nextCursor: string | undefined }> {
  const { direction, since, until, kind } = q;
  const { documents, next } = await readPage(
    (position, batch) =>
      deps.documents.listForParty({
        ...scope,
        ...(direction ? { direction } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(position ? { after: position } : {}),
        limit: batch,
      }),
    { after: q.after, limit: q.limit, ...(kind !== undefined ? { kind } : {}) },
  );
  return { documents, nextCursor: next ? encodeCursor(next) : undefined };
}

/** A document's name in the archive: `<direction>/<documentId>.<ext>`, of characters safe in any file system. */
export function archiveName(doc: DocumentRecord): string {
  const direction = doc.direction === 'inbound' ? 'received' : 'sent';
  const ext = doc.contentType.includes('pdf') ? 'pdf' : 'xml';
  return `${direction}/${doc.documentId.replace(/[^A-Za-z0-9-]/g, '_')}.${ext}`;
}

/**
 * GET /api/v1/{partyId}/documents (spec 4.10): the party's documents, sent and received, in the order they were
 * written (newest last), a page at a time. The cursor is the last returned document's position, so a page never
 * repeats or skips a document written before it was read, however many are written meanwhile. Sales invoices whose
 * upload was never answered 200 are not listed; `kind` filters on the detected document type.
 *
 * GET /api/v1/{partyId}/documents/archive: the same page as one ZIP stream (`archiveName` per document, and
 * `manifest.json` first: the page's items with their file names and the next cursor, also in `X-Next-Cursor`).
 */
export function registerDocumentListRoutes(router: Router, deps: DocumentListRouteDeps): void {
  const party = requireParty(deps.directory);

  router.get('/api/v1/:partyId/documents', party, async (req: Request, res: Response) => {
    const { documents, nextCursor } = await partyPage(deps, partyOf(res), pageQuery(req));
    res.json({ documents: documents.map(listItem), ...(nextCursor ? { nextCursor } : {}) });
  });

  router.get('/api/v1/:partyId/documents/archive', party, async (req: Request, res: Response) => {
    const scope = partyOf(res);
    const { documents, nextCursor } = await partyPage(deps, scope, pageQuery(req));
    const log = deps.logger.child({ requestId: requestIdOf(req), tenantId: scope.tenantId, partyId: scope.partyId });
    await streamArchive(deps, res, documents, nextCursor, log);
  });
}

/**
 * Streams the page as a ZIP: the manifest, then each document's stored bytes, one blob open at a time and read only
 * as fast as the client takes the archive (the archive's backpressure), so memory holds about one stored chunk
 * whatever the page's size. The 200 goes out with the manifest; a blob that cannot be read afterwards (missing,
 * corrupt, the database gone) aborts the transfer: the connection is cut before the archive's central directory,
 * so the client sees an unterminated response and no ZIP reader takes it for a complete archive.
 */
async function streamArchive(
  deps: DocumentListRouteDeps,
  res: Response,
  documents: DocumentRecord[],
  nextCursor: string | undefined,
  log: Logger,
): Promise<void> {
  const items = documents.map((doc) => ({ doc, file: archiveName(doc) }));
  const manifest = {
    documents: items.map(({ doc, file }) => ({ ...listItem(doc), file })),
    ...(nextCursor ? { nextCursor } : {}),
  };
  const archive = new ZipArchive({ zlib: { level: 6 } });
  res.status(200);
  res.set('Content-Type', 'application/zip');
  res.set('Content-Disposition', 'attachment; filename="documents.zip"');
  res.set('X-Content-Type-Options', 'nosniff');
  if (nextCursor) res.set('X-Next-Cursor', nextCursor);
  archive.pipe(res);

  let source: Readable | undefined;
  let failure: unknown;
  const clientGone = new Error('the client closed the connection');
  const gone = new Promise<never>((_resolve, reject) => {
    res.once('close', () => reject(clientGone));
    archive.on('error', reject);
  });
  gone.catch(() => undefined);
  const finished = new Promise((resolve) => res.once('finish', resolve));

  // One entry at a time: the next blob is opened once the archive took the last byte of the previous one.
  const appendEntry = (input: string | Readable, entry: { name: string; date: Date; store?: boolean }) => {
    const appended = new Promise<void>((resolve, reject) => {
      if (typeof input !== 'string') input.on('error', reject);
      archive.once('entry', () => resolve());
    });
    archive.append(input, entry);
    return Promise.race([appended, gone]);
  };
  try {
    await appendEntry(JSON.stringify(manifest, null, 2), { name: 'manifest.json', date: new Date() });
    for (const { doc, file } of items) {
      source = deps.blobs.open(doc.blobId);
      // PDFs are compressed already: stored as they are; XML is deflated.
      await appendEntry(source, { name: file, date: doc.createdAt, store: file.endsWith('.pdf') });
    }
    source = undefined;
    await Promise.race([archive.finalize(), gone]);
    await Promise.race([finished, gone]);
  } catch (err) {
    failure = err;
  }
  if (failure === undefined || res.writableFinished) return;
  // Cut the connection before the archive can end the response: an ended response would look complete.
  archive.unpipe(res);
  res.destroy();
  archive.abort();
  source?.destroy();
  if (failure === clientGone) log.info('document archive not completed: the client closed the connection');
  else log.error({ err: failure }, 'document archive aborted: a document could not be read');
}
