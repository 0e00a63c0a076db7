import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { deflateSync } from 'node:zlib';
import { GatewayError, type GatewayErrorCode } from '../../../src/core/gateway-error';
import { detectFormat, factsFromXml } from '../../../src/formats/detect';
import { extractFromPdf, readHybridPdf } from '../../../src/formats/facturx/pdf-attachment';
import { PdfCanvas, writeHybridPdf } from '../../../src/formats/facturx/pdf-writer';
import { checkFacturxPdf } from '../../../src/validation/facturx-pdf';
import { parseXml, parseXmlForReading } from '../../../src/formats/xml/secure-parser';
import { CORPUS_DIR, requireCorpus, SAMPLE_CII_INVOICE, SAMPLE_UBL_INVOICE } from '../../support/corpus';

/**
 * Seeded mutation fuzzing of the two readers of untrusted bytes: the Factur-X PDF reader and the XML scanner / secure
 * parser. Real documents are mutated (bit flips, bytes that matter to the syntax, cuts, copies, splices of tokens,
 * repeated runs); every case must end in a result or in one of the module's own typed errors, within a time bound,
 * and the heap must not grow across the run.
 *
 * Deterministic: FUZZ_SEED (default below) and FUZZ_CASES (default: a few seconds' worth) choose the cases, and a
 * failure names the seed and case to replay. A longer run: `FUZZ_CASES=20000 FUZZ_SEED=7 npx jest fuzz-parsers`.
 */

const SEED = Number(process.env['FUZZ_SEED'] ?? 0x5eed_2026);
const CASES = Number(process.env['FUZZ_CASES'] ?? 300);
/** A case that takes longer than this is a hang for the purposes of this test (the inputs are a few hundred KB). */
const CASE_TIME_LIMIT_MS = 3_000;
const HEAP_GROWTH_LIMIT = 64 * 1024 * 1024;

/** xorshift32: a few lines of seeded randomness, reproducible on every platform. */
function random(seed: number): { int(n: number): number; pick<T>(xs: readonly T[]): T } {
  let x = seed >>> 0 || 1;
  const next = (): number => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  return { int: (n) => next() % n, pick: (xs) => xs[next() % xs.length] as (typeof xs)[number] };
}

type Rng = ReturnType<typeof random>;

const XML_TOKENS = [
  '<',
  '>',
  '&',
  ';',
  '"',
  "'",
  '/',
  '=',
  ']]>',
  '<![CDATA[',
  '<!--',
  '-->',
  '<?',
  '?>',
  '<!DOCTYPE a [<!ENTITY e "x">]>',
  '&amp;',
  '&#0;',
  '&#x10FFFF;',
  '&#xD800;',
  '&e;',
  '<a>',
  '</a>',
  '<a/>',
  ' xmlns:p="urn:p"',
  ' p:x="1"',
  ' xmlns=""',
  '\u0000',
  '\uFFFE',
  '\uD800',
  '\r\n',
  '\uFEFF',
  '<?xml version="1.0"?>',
  ' a="1" a="2"',
].map((t) => Buffer.from(t, 'utf8'));

const PDF_TOKENS = [
  ' obj ',
  'endobj',
  'stream\n',
  '\nendstream',
  '<<',
  '>>',
  '[',
  ']',
  '(',
  ')',
  '<',
  '>',
  ' 0 R',
  ' 1 0 R',
  '/EF',
  '/F',
  '/UF',
  '/Names',
  '/EmbeddedFiles',
  '/AF',
  '/Type /ObjStm',
  '/N 99999999',
  '/First 0',
  '/Length 99999999',
  '/Length -1',
  '/Filter /FlateDecode',
  '/Filter [/FlateDecode /ASCII85Decode]',
  '/Filter /ASCIIHexDecode',
  '/Filter /LZWDecode',
  '/DecodeParms << /Predictor 12 >>',
  '(factur-x.xml)',
  'z',
  '~>',
  '%',
  '\\',
  '1 0 obj << /EF 1 0 R >> endobj',
].map((t) => Buffer.from(t, 'latin1'));

const INTERESTING_BYTES = [0x00, 0xff, 0x7f, 0x80, 0x3c, 0x3e, 0x26, 0x5d, 0x22, 0x2f, 0x20, 0x0a, 0x30, 0x39, 0x7a];

/** One mutation of `input`, and what it did (for the failure message). */
function mutate(input: Buffer, rng: Rng, tokens: readonly Buffer[]): { out: Buffer; what: string } {
  const at = rng.int(input.length + 1);
  const span = 1 + rng.int(Math.min(4096, input.length + 1));
  switch (rng.int(8)) {
    case 0: {
      const out = Buffer.from(input);
      if (at < out.length) out[at] = (out[at] as number) ^ (1 << rng.int(8));
      return { out, what: `flip a bit at ${at}` };
    }
    case 1: {
      const out = Buffer.from(input);
      const byte = rng.pick(INTERESTING_BYTES);
      if (at < out.length) out[at] = byte;
      return { out, what: `set byte ${at} to 0x${byte.toString(16)}` };
    }
    case 2:
      const out = Buffer.concat([input.subarray(0, at), input.subarray(at + span)]);
      return { out, what: `delete ${span} at ${at}` };
    case 3:
      return { out: input.subarray(0, at), what: `cut at ${at}` };
    case 4: {
      const from = rng.int(input.length);
      const copy = input.subarray(from, from + span);
      const out = Buffer.concat([input.subarray(0, at), copy, input.subarray(at)]);
      return { out, what: `copy ${span} bytes from ${from} to ${at}` };
    }
    case 5: {
      const token = rng.pick(tokens);
      const out = Buffer.concat([input.subarray(0, at), token, input.subarray(at)]);
      return { out, what: `insert ${JSON.stringify(token.toString('latin1'))} at ${at}` };
    }
    case 6: {
      // A run repeated: the shape of the amplification attacks (many nodes, attributes, objects), up to 512 KB.
      const from = rng.int(input.length);
      const run = input.subarray(from, from + 1 + rng.int(64));
      const times = 1 + rng.int(Math.max(1, Math.floor((512 * 1024) / Math.max(1, run.length))));
      const out = Buffer.concat([input.subarray(0, at), Buffer.alloc(run.length * times, run), input.subarray(at)]);
      return { out, what: `repeat ${run.length} bytes from ${from} ${times} times at ${at}` };
    }
    default: {
      const token = rng.pick(tokens);
      const out = Buffer.concat([input.subarray(0, at), token, input.subarray(at + Math.min(span, token.length))]);
      return { out, what: `overwrite ${JSON.stringify(token.toString('latin1'))} at ${at}` };
    }
  }
}

/** One to three mutations in a row. */
function mutant(input: Buffer, rng: Rng, tokens: readonly Buffer[]): { out: Buffer; what: string } {
  let out = input;
  const steps: string[] = [];
  const n = 1 + rng.int(3);
  for (let k = 0; k < n; k++) {
    const m = mutate(out, rng, tokens);
    out = m.out;
    steps.push(m.what);
  }
  return { out, what: steps.join(', ') };
}

/** A manual collector: jest's process runs without --expose-gc. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

interface Campaign {
  samples: ReadonlyArray<{ name: string; bytes: Buffer }>;
  tokens: readonly Buffer[];
  /** The calls a mutant goes through; each must return or throw one of `allowed`. */
  calls: ReadonlyArray<[name: string, (b: Buffer) => unknown]>;
  allowed: readonly GatewayErrorCode[];
  seed: number;
  cases: number;
}

/** Runs a campaign; returns the failures found (empty when every case behaved) and the figures. */
interface CampaignResult {
  failures: string[];
  slowestMs: number;
  heapGrowth: number;
  codes: Record<string, number>;
}

function run(c: Campaign): CampaignResult {
  const rng = random(c.seed);
  const gc = collector();
  const failures: string[] = [];
  const codes: Record<string, number> = {};
  let slowestMs = 0;
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let k = 0; k < c.cases && failures.length < 5; k++) {
    const sample = rng.pick(c.samples);
    const { out, what } = mutant(sample.bytes, rng, c.tokens);
    for (const [name, call] of c.calls) {
      const started = Date.now();
      let code = 'ok';
      try {
        call(out);
      } catch (e) {
        code = e instanceof GatewayError ? e.code : `${(e as Error)?.name}: ${(e as Error)?.message}`;
        if (!(e instanceof GatewayError) || !c.allowed.includes(e.code)) {
          failures.push(`seed ${c.seed} case ${k} (${sample.name}; ${what}): ${name} threw ${code}`);
        }
      }
      codes[code] = (codes[code] ?? 0) + 1;
      const ms = Date.now() - started;
      slowestMs = Math.max(slowestMs, ms);
      if (ms > CASE_TIME_LIMIT_MS) failures.push(`seed ${c.seed} case ${k} (${sample.name}; ${what}): ${name} ${ms}ms`);
    }
  }
  gc();
  return { failures, slowestMs, heapGrowth: process.memoryUsage().heapUsed - heapBefore, codes };
}

const corpus = (relative: string): Buffer => readFileSync(path.join(CORPUS_DIR, relative));

requireCorpus(SAMPLE_UBL_INVOICE);
describe('seeded fuzzing', () => {
  it('the XML scanner and secure parser: typed errors only, no hang, no heap growth', () => {
    const samples = [
      { name: 'UBL example 1', bytes: corpus(SAMPLE_UBL_INVOICE) },
      { name: 'UBL example 4', bytes: corpus('en16931/ubl-examples/ubl-tc434-example4.xml') },
      { name: 'CII example 1', bytes: corpus(SAMPLE_CII_INVOICE) },
    ];
    const result = run({
      samples,
      tokens: XML_TOKENS,
      calls: [
        ['parseXml', (b) => parseXml(b)],
        ['parseXmlForReading', (b) => parseXmlForReading(b)],
        ['factsFromXml', (b) => factsFromXml(b)],
      ],
      allowed: ['INVALID_XML', 'UNSAFE_XML', 'PAYLOAD_TOO_LARGE'],
      seed: SEED,
      cases: CASES,
    });
    expect(result.failures).toEqual([]);
    expect(result.slowestMs).toBeLessThan(CASE_TIME_LIMIT_MS);
    expect(result.heapGrowth).toBeLessThan(HEAP_GROWTH_LIMIT);
    // The mutations reach past the first gate: some documents stay well-formed, some are refused for safety.
    expect(result.codes['ok']).toBeGreaterThan(0);
    expect(result.codes['INVALID_XML']).toBeGreaterThan(0);
  }, 120_000);

  it('the Factur-X PDF reader: typed errors only, no hang, no heap growth', () => {
    const canvas = new PdfCanvas();
    canvas.addPage().text(50, 780, 'Rechnung F-1');
    const written = writeHybridPdf(
      canvas,
      {
        filename: 'factur-x.xml',
        bytes: corpus(SAMPLE_CII_INVOICE),
        relationship: 'Alternative',
        description: 'invoice',
        conformanceLevel: 'EN 16931',
        version: '1.0',
      },
      { title: 'F-1', author: 'a', subject: 's', creator: 'c', producer: 'p', date: new Date(0) },
    );
    // The embedded XML stored with each supported filter, so mutations reach the decoders as well as the structure.
    const xml = corpus(SAMPLE_CII_INVOICE);
    const withFilter = (stored: Buffer, filter: string): Buffer =>
      Buffer.concat([
        Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Names << /EmbeddedFiles'),
        Buffer.from(' << /Names [(factur-x.xml) 2 0 R] >> >> >>'),
        Buffer.from('\nendobj\n2 0 obj\n<< /Type /Filespec /F (factur-x.xml) /EF << /F 3 0 R >> >>\nendobj\n'),
        Buffer.from(`3 0 obj\n<< /Type /EmbeddedFile /Filter ${filter} /Length ${stored.length} >>\nstream\n`),
        stored,
        Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
      ]);
    const a85 = (b: Buffer): Buffer => {
      // ASCII85 by hand for the sample (no encoder in the platform): 4 bytes → 5 digits, 'z' for zeros.
      const parts: string[] = ['<~'];
      for (let k = 0; k < b.length; k += 4) {
        const group = Buffer.alloc(4);
        b.copy(group, 0, k, k + 4);
        let v = group.readUInt32BE(0);
        const n = Math.min(4, b.length - k);
        if (v === 0 && n === 4) {
          parts.push('z');
          continue;
        }
        const digits: string[] = [];
        for (let d = 0; d < 5; d++) {
          digits.unshift(String.fromCharCode(33 + (v % 85)));
          v = Math.floor(v / 85);
        }
        parts.push(digits.join('').slice(0, n + 1));
      }
      return Buffer.from(`${parts.join('')}~>`);
    };
    const samples = [
      { name: 'written by pdf-writer', bytes: written },
      { name: 'ASCII85 behind Flate', bytes: withFilter(deflateSync(a85(xml)), '[/FlateDecode /ASCII85Decode]') },
      { name: 'ASCIIHex', bytes: withFilter(Buffer.from(xml.toString('hex')), '/ASCIIHexDecode') },
    ];
    const mustang = path.join(CORPUS_DIR, 'facturx/mustang/EN16931_Einfach.pdf');
    if (existsSync(mustang)) samples.push({ name: 'EN16931_Einfach.pdf', bytes: readFileSync(mustang) });
    for (const s of samples) expect(extractFromPdf(s.bytes).xml.length).toBeGreaterThan(1000);
    const result = run({
      samples,
      tokens: PDF_TOKENS,
      calls: [
        ['extractFromPdf', (b) => extractFromPdf(b)],
        ['detectFormat', (b) => detectFormat(b)],
        [
          'PDF layer checks',
          (b) => {
            const { attachment, layer } = readHybridPdf(b);
            return checkFacturxPdf(layer, { attachmentFilename: attachment.filename, formatId: 'facturx-en16931' });
          },
        ],
      ],
      allowed: ['UNPROCESSABLE', 'PAYLOAD_TOO_LARGE', 'UNKNOWN_FORMAT', 'INVALID_XML', 'UNSAFE_XML'],
      seed: SEED + 1,
      cases: Math.ceil(CASES / 2),
    });
    expect(result.failures).toEqual([]);
    expect(result.slowestMs).toBeLessThan(CASE_TIME_LIMIT_MS);
    expect(result.heapGrowth).toBeLessThan(HEAP_GROWTH_LIMIT);
    expect(result.codes['ok']).toBeGreaterThan(0);
    expect(result.codes['UNPROCESSABLE']).toBeGreaterThan(0);
  }, 120_000);
});
