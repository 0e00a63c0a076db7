import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { runBounded, type BoundedOutcome } from '../../support/bounded-process';

/**
 * Format detection of stored uploads (src/documents/detection.ts: inspectUpload for sales invoices,
 * detectionOutcome for received documents) runs on the worker's activity thread, not on the
 * document pool's threads: what bounds it is the readers' own limits. Each hostile upload that once took hundreds of
 * megabytes, or the process, must be answered as a document problem in a child process with a 128 MB heap (30 MB of
 * it module code), raising its peak RSS by less than the figure given.
 */

const DETECTION = path.resolve(__dirname, '../../../src/documents/detection.ts');
const MB = 1024 * 1024;

function pdfWithAttachment(stored: Buffer, filter: string): Buffer {
  return Buffer.concat([
    Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Names << /EmbeddedFiles'),
    Buffer.from(' << /Names [(factur-x.xml) 2 0 R] >> >> >>'),
    Buffer.from('\nendobj\n2 0 obj\n<< /Type /Filespec /F (factur-x.xml) /EF << /F 3 0 R >> >>\nendobj\n'),
    Buffer.from(`3 0 obj\n<< /Type /EmbeddedFile /Filter ${filter} /Length ${stored.length} >>\nstream\n`),
    stored,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  ]);
}

const attrs = Array.from({ length: 250 }, (_, k) => `a${k}="1"`).join(' ');
const ATTRIBUTE_BOMB = Buffer.from(`<r>${`<e ${attrs}/>`.repeat(4_000)}</r>`);

const ZS_BEHIND_FLATE = (): Buffer => pdfWithAttachment(deflateSync(Buffer.alloc(24 * MB, 'z')), '[/Fl /A85]');
const EMPTY_DICTIONARIES = (): Buffer =>
  Buffer.from(`%PDF-1.7\n1 0 obj << /EF [${'<<>> '.repeat(1_000_000)}] >> endobj\n`);

const cases: Array<[name: string, code: string, input: () => Buffer, peakRssGrowthMb: number]> = [
  ['24 MiB of ASCII85 z behind Flate (25 KB)', 'PAYLOAD_TOO_LARGE', ZS_BEHIND_FLATE, 48],
  ['a million attributes as XML (7.6 MB)', 'UNSAFE_XML', () => ATTRIBUTE_BOMB, 64],
  ['a million attributes stored unfiltered in a PDF', 'UNSAFE_XML', () => pdfWithAttachment(ATTRIBUTE_BOMB, '[]'), 96],
  ['a million empty dictionaries where attachments are looked for', 'UNPROCESSABLE', EMPTY_DICTIONARIES, 96],
];

const entries: Array<[entry: string, pick: (value: unknown) => unknown]> = [
  ['detectionOutcome', (value) => value],
  ['inspectUpload', (value) => (value as { detection: unknown }).detection],
];
const runs = entries.flatMap(([entry, pick]) => cases.map(([name, ...rest]) => [entry, name, ...rest, pick] as const));

describe('format detection of hostile uploads, as the worker runs it', () => {
  it.each(runs)(
    '%s: %s → %s within a 128 MB heap',
    async (entry, _name, code, input, peakRssGrowthMb, pick) => {
      const outcome: BoundedOutcome = await runBounded(DETECTION, entry, input(), { maxHeapMb: 128 });
      expect(outcome).toMatchObject({ kind: 'returned' });
      if (outcome.kind !== 'returned') return;
      expect(pick(outcome.value)).toEqual(expect.objectContaining({ ok: false, code }));
      expect(outcome.peakRssGrowthBytes).toBeLessThan(peakRssGrowthMb * MB);
      expect(outcome.ms).toBeLessThan(10_000);
    },
    60_000,
  );
});
