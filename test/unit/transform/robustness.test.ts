import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { EN16931_TARGETS, transformDocument } from '../../../src/transform';
import { CORPUS_DIR, corpusFile } from '../../support/corpus';

/**
 * Every document of the corpus (valid or not, any format, XML or PDF) to every target: the answer is a converted
 * document or a GatewayError with a 4xx status, never another exception. Bad input gets a clear error.
 */

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : /\.(xml|pdf)$/i.test(f) ? [p] : [];
  });
}

const FILES = ['en16931/ubl-examples', 'en16931/cii-examples', 'nlcius', 'facturx', 'ebinterface', 'peppol/mls']
  .flatMap((d) => walk(path.join(CORPUS_DIR, d)))
  .map((f) => path.relative(CORPUS_DIR, f))
  .sort();

describe('transform never fails with anything but a clear 4xx', () => {
  it('covers the corpus', () => {
    expect(FILES.length).toBeGreaterThan(300);
  });

  it.each(FILES.map((f) => [f]))('%s', (file) => {
    const bytes = corpusFile(file);
    const outcomes = new Set<string>();
    for (const targetFormat of EN16931_TARGETS) {
      try {
        const r = transformDocument(bytes, { targetFormat });
        expect(r.xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
        outcomes.add('converted');
      } catch (e) {
        if (!(e instanceof GatewayError)) throw e;
        expect([400, 413, 422]).toContain(e.status);
        expect(e.message.length).toBeGreaterThan(20);
        outcomes.add(String(e.status));
      }
    }
    expect(outcomes.size).toBeGreaterThan(0);
  });
});
