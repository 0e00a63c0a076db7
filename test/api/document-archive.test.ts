/**
 * The bulk document archive (GET /api/v1/{partyId}/documents/archive) on a real database: the listing's page as one
 * ZIP (manifest first, each document byte for byte under its safe name), the listing's filters and cursor, tenant and
 * party isolation, a transfer cut (never a complete-looking archive) when a stored document cannot be read, and
 * memory bounded by the client's pace rather than the page's size. Archives are read back with the system's unzip.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import request from 'supertest';
import { DocumentArchiveManifest } from '../../api/contracts/documents';
import { hashSecret } from '../../src/auth/secret-hash';
import { chunkId } from '../../src/storage/blob-store';
import { expectContract } from '../support/contract';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, type TestContext } from '../support/test-app';

const TENANT = 'tenantZip';
const OTHER_TENANT = 'tenantZipOther';
const PARTY = '0106:66666661';
const SECOND_PARTY = '0106:66666662';
const BROKEN_PARTY = '0106:66666663';
const BULK_PARTY = '0106:66666664';
const FOREIGN_PARTY = '0106:77777771';
const ARCHIVE_ROUTE = '/api/v1/:partyId/documents/archive';
const archivePath = (partyId: string) => `/api/v1/${partyId}/documents/archive`;
const MB = 1024 * 1024;

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The response ended as HTTP says a complete one ends (not cut). */
  complete: boolean;
}

interface ListBody {
  documents: Array<{ id: string }>;
  nextCursor?: string;
}

describe('GET documents/archive (bulk download as one ZIP stream)', () => {
  let ctx: TestContext;
  let token: string;
  let foreignToken: string;
  let server: http.Server;
  let base: string;
  const work = mkdtempSync(join(tmpdir(), 'document-archive-'));
  const invoice = corpusFile(SAMPLE_UBL_INVOICE);
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3000), Buffer.from('\n%%EOF\n')]);
  /** The stored bytes of each of PARTY's documents, by id. */
  const bytesOf = new Map<string, Buffer>();
  const ids: { sent: string[]; received: string[] } = { sent: [], received: [] };

  beforeAll(async () => {
    ctx = await createTestContext('archive');
    await ctx.core.directory.createTenant({ id: TENANT, name: 'Z' });
    await ctx.core.directory.createTenant({ id: OTHER_TENANT, name: 'O' });
    for (const [tenantId, partyId] of [
      [TENANT, PARTY],
      [TENANT, SECOND_PARTY],
      [TENANT, BROKEN_PARTY],
      [TENANT, BULK_PARTY],
      [OTHER_TENANT, FOREIGN_PARTY],
    ] as const)
      await ctx.core.directory.createParty({ tenantId, partyId, legalEntityId: `NL:${partyId}`, name: partyId });
    token = await ctx.token(await ctx.createClient([TENANT]));
    foreignToken = await ctx.token(await ctx.createClient([OTHER_TENANT]));

    // Sent, received, sent, received: two uploads through the API, two received documents (one a PDF).
    for (let i = 0; i < 2; i++) {
      const body = Buffer.from(invoice.toString('utf8').replace('</cbc:ID>', `-${i}</cbc:ID>`), 'utf8');
      const sent = await request(ctx.app)
        .post(`/api/v1/${PARTY}/salesInvoice/send`)
        .auth(token, { type: 'bearer' })
        .type('application/xml')
        .send(body);
      expect(sent.status).toBe(200);
      const id = (sent.body as { id: string }).id;
      ids.sent.push(id);
      bytesOf.set(id, body);
      const received = i === 0 ? invoice : pdf;
      const receivedId = await storeReceived(PARTY, received, i === 0 ? 'application/xml' : 'application/pdf');
      ids.received.push(receivedId);
      bytesOf.set(receivedId, received);
    }
    // A foreign tenant's document and another party's: never in PARTY's archive.
    await storeReceived(FOREIGN_PARTY, invoice, 'application/xml', OTHER_TENANT);
    await storeReceived(SECOND_PARTY, invoice, 'application/xml');

    server = ctx.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await ctx.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A received document as the receive path registers it (accepted at once), with its bytes in the blob store. */
  async function storeReceived(partyId: string, bytes: Buffer, contentType: string, tenantId = TENANT) {
    const blob = await ctx.core.db.blobs.put(Readable.from([bytes]), {
      limit: 32 * MB,
      filename: 'received',
      contentType,
    });
    const documentId = randomUUID();
    const stored = await ctx.core.documents.insertInbound({
      tenantId,
      documentId,
      partyId,
      createdBy: 'manualUpload',
      contentType,
      size: blob.size,
      sha256: blob.sha256,
      blobId: blob.blobId,
    });
    expect(stored).not.toBeNull();
    return documentId;
  }

  /**
   * GET over a real socket, so a cut transfer is seen as a client sees it. `onData` may slow the reading down (a
   * slow client); without `keep` the body is not held in memory.
   */
  function fetchRaw(
    path: string,
    options: { bearer?: string; onData?: (chunk: Buffer) => Promise<void> | void; keep?: boolean } = {},
  ): Promise<RawAnswer> {
    const { bearer = token, onData, keep = true } = options;
    return new Promise((resolve, reject) => {
      const req = http.get(`${base}${path}`, { headers: { authorization: `Bearer ${bearer}` } }, (res) => {
        const parts: Buffer[] = [];
        let settled = false;
        const done = () => {
          if (settled) return;
          settled = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(parts),
            complete: res.complete,
          });
        };
        res.on('data', (chunk: Buffer) => {
          if (keep) parts.push(chunk);
          const slow = onData?.(chunk);
          if (slow) {
            res.pause();
            void slow.then(() => res.resume());
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      });
      req.on('error', reject);
    });
  }

  function unzip(args: string[]): Buffer {
    return execFileSync('unzip', args, { maxBuffer: 64 * MB });
  }

  function saved(body: Buffer): string {
    const file = join(work, `${randomUUID()}.zip`);
    writeFileSync(file, body);
    return file;
  }

  function readManifest(zip: string) {
    const parsed = DocumentArchiveManifest.safeParse(JSON.parse(unzip(['-p', zip, 'manifest.json']).toString('utf8')));
    if (!parsed.success) throw new Error(`manifest.json does not match its contract: ${parsed.error.message}`);
    return parsed.data;
  }

  const list = (query: Record<string, string> = {}, partyId = PARTY) =>
    request(ctx.app).get(`/api/v1/${partyId}/documents`).query(query).auth(token, { type: 'bearer' });

  it('streams the page as a ZIP: manifest first, then each stored document byte for byte, safely named', async () => {
    const res = await fetchRaw(archivePath(PARTY));
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="documents.zip"');
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['x-next-cursor']).toBeUndefined();
    const zip = saved(res.body);
    // unzip -t checks every entry's CRC and the central directory.
    expect(spawnSync('unzip', ['-tq', zip]).status).toBe(0);

    const files = [
      `sent/${ids.sent[0]}.xml`,
      `received/${ids.received[0]}.xml`,
      `sent/${ids.sent[1]}.xml`,
      `received/${ids.received[1]}.pdf`,
    ];
    expect(unzip(['-Z1', zip]).toString('utf8').trim().split('\n')).toEqual(['manifest.json', ...files]);

    const manifest = readManifest(zip);
    expect(manifest.nextCursor).toBeUndefined();
    expect(manifest.documents.map((d) => d.file)).toEqual(files);
    // The manifest's items are the listing's, with their file names.
    const listed = await list();
    expect(listed.status).toBe(200);
    expect(manifest.documents.map(({ file: _file, ...item }) => item)).toEqual((listed.body as ListBody).documents);

    for (const item of manifest.documents) {
      const stored = unzip(['-p', zip, item.file]);
      expect(stored.equals(bytesOf.get(item.id)!)).toBe(true);
      expect(createHash('sha256').update(stored).digest('hex')).toBe(item.sha256);
      expect(stored.length).toBe(item.size);
    }
    // XML is deflated, a PDF stored as it is (already compressed).
    const methods = unzip(['-Zv', zip]).toString('utf8');
    expect(methods).toMatch(/compression method:\s+deflated/);
    expect(methods).toMatch(/compression method:\s+none \(stored\)/);
  });

  it("takes the listing's filters and cursor; X-Next-Cursor and the manifest give the next page", async () => {
    const first = await fetchRaw(`${archivePath(PARTY)}?limit=3`);
    expect(first.status).toBe(200);
    const firstManifest = readManifest(saved(first.body));
    const listed = (await list({ limit: '3' })).body as ListBody;
    expect(firstManifest.documents.map((d) => d.id)).toEqual(listed.documents.map((d) => d.id));
    expect(listed.nextCursor).toBeDefined();
    expect(first.headers['x-next-cursor']).toBe(listed.nextCursor);
    expect(firstManifest.nextCursor).toBe(listed.nextCursor);

    const second = await fetchRaw(`${archivePath(PARTY)}?limit=3&cursor=${listed.nextCursor}`);
    expect(second.status).toBe(200);
    expect(second.headers['x-next-cursor']).toBeUndefined();
    const secondZip = saved(second.body);
    expect(readManifest(secondZip).documents.map((d) => d.id)).toEqual([ids.received[1]]);
    expect(unzip(['-Z1', secondZip]).toString('utf8').trim().split('\n')).toEqual([
      'manifest.json',
      `received/${ids.received[1]}.pdf`,
    ]);

    const received = await fetchRaw(`${archivePath(PARTY)}?direction=received`);
    const receivedZip = saved(received.body);
    expect(readManifest(receivedZip).documents.map((d) => d.id)).toEqual(ids.received);
    expect(unzip(['-Z1', receivedZip]).toString('utf8')).not.toContain('sent/');

    const since = (await ctx.core.documents.findStored(TENANT, ids.sent[1]!))!.createdAt.toISOString();
    const later = await fetchRaw(`${archivePath(PARTY)}?since=${encodeURIComponent(since)}`);
    expect(readManifest(saved(later.body)).documents.map((d) => d.id)).toEqual([ids.sent[1], ids.received[1]]);

    // No document of that kind: an archive with the manifest alone.
    const none = await fetchRaw(`${archivePath(PARTY)}?kind=Order`);
    expect(none.status).toBe(200);
    const noneZip = saved(none.body);
    expect(spawnSync('unzip', ['-tq', noneZip]).status).toBe(0);
    expect(unzip(['-Z1', noneZip]).toString('utf8').trim()).toBe('manifest.json');
    expect(readManifest(noneZip).documents).toEqual([]);
  });

  it('refuses query values out of range with the listing’s 400 problems', async () => {
    for (const query of [
      { limit: '0' },
      { limit: '1001' },
      { direction: 'both' },
      { since: 'yesterday' },
      { cursor: 'not a cursor' },
      { kind: '<Invoice>' },
    ]) {
      const res = await request(ctx.app).get(archivePath(PARTY)).query(query).auth(token, { type: 'bearer' });
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expectContract('get', ARCHIVE_ROUTE, res);
    }
  });

  it("holds only the path's party's documents, and refuses parties out of the token's reach", async () => {
    const other = await fetchRaw(archivePath(SECOND_PARTY));
    expect(other.status).toBe(200);
    const otherManifest = readManifest(saved(other.body));
    expect(otherManifest.documents).toHaveLength(1);
    expect(otherManifest.documents.some((d) => bytesOf.has(d.id))).toBe(false);

    // Another tenant's party with this tenant's token, and this tenant's party with another tenant's token.
    const foreign = await request(ctx.app).get(archivePath(FOREIGN_PARTY)).auth(token, { type: 'bearer' });
    expect(foreign.status).toBe(403);
    expectContract('get', ARCHIVE_ROUTE, foreign);
    const outside = await request(ctx.app).get(archivePath(PARTY)).auth(foreignToken, { type: 'bearer' });
    expect(outside.status).toBe(403);
    expectContract('get', ARCHIVE_ROUTE, outside);
    // A user token reaches only its linked parties.
    const client = await ctx.createClient([TENANT]);
    await ctx.core.directory.createUser({
      tenantId: TENANT,
      username: 'archiver',
      passwordHash: await hashSecret('Secret123!'),
      partyIds: [SECOND_PARTY],
    });
    const userToken = await ctx.passwordToken(client, 'archiver', 'Secret123!');
    const unreachable = await request(ctx.app).get(archivePath(PARTY)).auth(userToken, { type: 'bearer' });
    expect(unreachable.status).toBe(403);
    expect((await fetchRaw(archivePath(SECOND_PARTY), { bearer: userToken })).status).toBe(200);
    const anonymous = await request(ctx.app).get(archivePath(PARTY));
    expect(anonymous.status).toBe(401);
    expectContract('get', ARCHIVE_ROUTE, anonymous);
    const malformed = await request(ctx.app).get(archivePath('not-a-party')).auth(token, { type: 'bearer' });
    expect(malformed.status).toBe(400);
  });

  describe('a stored document that cannot be read', () => {
    let missingId: string;
    let corruptId: string;

    beforeAll(async () => {
      await storeReceived(BROKEN_PARTY, invoice, 'application/xml');
      // A record whose bytes are gone (removed under it, or never written).
      missingId = randomUUID();
      await ctx.core.documents.insertInbound({
        tenantId: TENANT,
        documentId: missingId,
        partyId: BROKEN_PARTY,
        createdBy: 'manualUpload',
        contentType: 'application/xml',
        size: invoice.length,
        sha256: createHash('sha256').update(invoice).digest('hex'),
        blobId: 'no-such-blob',
      });
      // Bytes that fail mid-way: three chunks, the second removed, so the first is streamed before the failure.
      const big = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(ctx.core.db.blobs.chunkSize * 2 + 1000)]);
      corruptId = await storeReceived(BROKEN_PARTY, big, 'application/pdf');
      const record = await ctx.core.documents.findStored(TENANT, corruptId);
      const chunks = ctx.core.db.connection.db!.collection<{ _id: string }>(ctx.core.db.blobs.chunksCollection);
      expect((await chunks.deleteOne({ _id: chunkId(record!.blobId, 1) })).deletedCount).toBe(1);
    });

    async function expectCut(path: string) {
      const res = await fetchRaw(path);
      // The 200 went out with the manifest; the transfer is then cut, not ended.
      expect(res.status).toBe(200);
      expect(res.complete).toBe(false);
      // What arrived is no archive: no central directory, so unzip refuses it.
      expect(spawnSync('unzip', ['-tq', saved(res.body)]).status).not.toBe(0);
      return res;
    }

    it('cuts the transfer when a blob is missing: the client never sees a complete archive', async () => {
      const page = (await list({ limit: '2' }, BROKEN_PARTY)).body as ListBody;
      expect(page.documents.map((d) => d.id)[1]).toBe(missingId);
      await expectCut(`${archivePath(BROKEN_PARTY)}?limit=2`);
    });

    it('cuts the transfer when the bytes fail mid-document (a chunk gone after the first was streamed)', async () => {
      const firstTwo = (await list({ limit: '2' }, BROKEN_PARTY)).body as ListBody;
      expect(firstTwo.documents.map((d) => d.id)[1]).toBe(missingId);
      const res = await expectCut(`${archivePath(BROKEN_PARTY)}?cursor=${firstTwo.nextCursor!}`);
      expect(res.body.length).toBeGreaterThan(0);
      // The gateway is unharmed: the next archive is whole.
      const next = await fetchRaw(archivePath(PARTY));
      expect(next.complete).toBe(true);
      expect(spawnSync('unzip', ['-tq', saved(next.body)]).status).toBe(0);
    });
  });

  describe('memory: bounded by the client, not the page', () => {
    const COUNT = 40;
    const SIZE = MB;

    beforeAll(async () => {
      // Incompressible 1 MB documents (the page the archive must carry without holding: 1000 of them at most).
      for (let i = 0; i < COUNT; i++)
        await storeReceived(
          BULK_PARTY,
          Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(SIZE - 9)]),
          'application/pdf',
        );
    });

    it('reads one document at a time, only as fast as a slow client takes the archive', async () => {
      const blobs = ctx.core.db.blobs;
      const open = blobs.open.bind(blobs);
      let openNow = 0;
      let maxOpen = 0;
      let read = 0;
      let received = 0;
      let maxAhead = 0;
      let opened = 0;
      const spy = jest.spyOn(blobs, 'open').mockImplementation((blobId: string) => {
        opened++;
        openNow++;
        maxOpen = Math.max(maxOpen, openNow);
        const counted = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            read += chunk.length;
            maxAhead = Math.max(maxAhead, read - received);
            cb(null, chunk);
          },
        });
        let closed = false;
        const done = () => {
          if (!closed) openNow--;
          closed = true;
        };
        // Its end is when the archive took all of it (the close event comes a tick later).
        counted.once('end', done).once('close', done);
        open(blobId)
          .once('error', (err) => counted.destroy(err))
          .pipe(counted);
        return counted;
      });
      const zip = join(work, 'bulk.zip');
      const out = createWriteStream(zip);
      let sinceWait = 0;
      try {
        const res = await fetchRaw(`${archivePath(BULK_PARTY)}?limit=${COUNT}`, {
          keep: false,
          onData: (chunk) => {
            received += chunk.length;
            out.write(chunk);
            sinceWait += chunk.length;
            // A slow client: a pause after every 256 kB.
            if (sinceWait < 256 * 1024) return;
            sinceWait = 0;
            return new Promise((resolve) => setTimeout(resolve, 5));
          },
        });
        expect(res.status).toBe(200);
        expect(res.complete).toBe(true);
      } finally {
        spy.mockRestore();
        await new Promise((resolve) => out.end(resolve));
      }
      expect(opened).toBe(COUNT);
      expect(maxOpen).toBe(1);
      expect(read).toBe(COUNT * SIZE);
      // Bytes read from the store but not yet taken by the client: about one stored chunk (1 MB), never the page
      // (40 MB here; a page may be 1000 documents of up to 24 MB).
      expect(maxAhead).toBeLessThan(8 * MB);
      expect(spawnSync('unzip', ['-tq', zip]).status).toBe(0);
      expect(unzip(['-Z1', zip]).toString('utf8').trim().split('\n')).toHaveLength(COUNT + 1);
    });
  });
});
