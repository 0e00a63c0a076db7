import { randomUUID } from 'node:crypto';
import { readPage, type Position } from '../../../api/routes/documents-list.routes';
import type { DocumentRecord } from '../../../src/storage/document.repository';

/*
 * The bulk listing's paging over a reader of records in write order: pages never repeat or skip a record, records
 * the filters leave out are skipped, `next` is given only when another page exists, and one request reads a bounded
 * number of records however rare the wanted kind.
 */

function record(i: number, over: Partial<DocumentRecord> = {}): DocumentRecord {
  return {
    _id: `t:${i}`,
    tenantId: 't',
    documentId: randomUUID(),
    partyId: '0106:1',
    direction: 'inbound',
    createdBy: 'peppol',
    contentType: 'application/xml',
    size: 1,
    sha256: 'x',
    blobId: 'b',
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    accepted: true,
    state: 'validated',
    final: false,
    history: [],
    format: { id: 'f', name: 'F', syntax: 'UBL', documentType: 'Invoice' },
    validation: null,
    ...over,
  };
}

/** A reader over `all` as the repository answers: after the position, in order, at most `batch`. */
function reader(all: DocumentRecord[]) {
  const reads: number[] = [];
  const read = (after: Position | undefined, batch: number): Promise<DocumentRecord[]> => {
    const from = after ? all.findIndex((d) => d.documentId === after.documentId) + 1 : 0;
    const found = all.slice(from, from + batch);
    reads.push(found.length);
    return Promise.resolve(found);
  };
  return { read, reads };
}

async function everything(all: DocumentRecord[], options: { limit: number; kind?: string; maxScanned?: number }) {
  const { read } = reader(all);
  const seen: DocumentRecord[] = [];
  let after: Position | undefined;
  let pages = 0;
  do {
    const page = await readPage(read, { ...options, after });
    seen.push(...page.documents);
    after = page.next;
    pages++;
  } while (after && pages < 1000);
  return { seen, pages };
}

describe('bulk listing pages', () => {
  const all = Array.from({ length: 25 }, (_, i) => record(i));

  it('pages through every record once, in order, with next only when more exist', async () => {
    const { seen, pages } = await everything(all, { limit: 10 });
    expect(seen.map((d) => d.documentId)).toEqual(all.map((d) => d.documentId));
    expect(pages).toBe(3);
    const exact = await readPage(reader(all.slice(0, 10)).read, { after: undefined, limit: 10 });
    expect(exact.documents).toHaveLength(10);
    expect(exact.next).toBeUndefined();
  });

  it('skips unanswered uploads and other kinds, and still fills the page', async () => {
    const mixed = all.map((d, i) =>
      i % 3 === 0
        ? { ...d, accepted: false }
        : i % 3 === 1
          ? { ...d, format: { ...d.format!, documentType: 'CreditNote' } }
          : d,
    );
    const wanted = mixed.filter((d, i) => i % 3 === 2);
    const first = await readPage(reader(mixed).read, { after: undefined, limit: 4, kind: 'invoice' });
    expect(first.documents.map((d) => d.documentId)).toEqual(wanted.slice(0, 4).map((d) => d.documentId));
    const { seen } = await everything(mixed, { limit: 4, kind: 'INVOICE' });
    expect(seen.map((d) => d.documentId)).toEqual(wanted.map((d) => d.documentId));
  });

  it('reads at most maxScanned records per request, answering the position reached', async () => {
    const rare = all.map((d, i) => (i === 24 ? d : { ...d, format: { ...d.format!, documentType: 'Order' } }));
    const { read, reads } = reader(rare);
    const page = await readPage(read, { after: undefined, limit: 2, kind: 'Invoice', maxScanned: 6 });
    expect(page.documents).toEqual([]);
    expect(reads.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6);
    expect(page.next).toBeDefined();
    const { seen } = await everything(rare, { limit: 2, kind: 'Invoice', maxScanned: 6 });
    expect(seen.map((d) => d.documentId)).toEqual([all[24]!.documentId]);
  });
});
