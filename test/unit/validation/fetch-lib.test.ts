import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { loadManifest } from '../../../src/validation';
import { RULES_DIR } from './support';

/* eslint-disable @typescript-eslint/no-require-imports */
const { openZip } = require('../../../scripts/rules/lib/zip') as {
  openZip(file: string): { names(): string[]; has(n: string): boolean; read(n: string): Buffer };
};
const fetch = require('../../../scripts/rules/fetch') as {
  parseArgs(argv: string[]): { packs: string[]; pin: boolean; force: boolean; samples: boolean };
  driverSchema(imports: Array<{ namespace: string; location: string }>): string;
  matchingParen(text: string, open: number): number;
  TRANSFORMS: Record<string, (text: string) => [string, number]>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** A zip with one stored and one deflated entry, written by hand (local headers, central directory, end record). */
function makeZip(entries: Array<{ name: string; data: Buffer; deflate: boolean }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = e.deflate ? deflateRawSync(e.data) : e.data;
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.deflate ? 8 : 0, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

describe('jar reader', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'zip-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads stored and deflated entries', () => {
    const text = Buffer.from('<xsl:stylesheet/>'.repeat(200));
    const file = path.join(dir, 'a.jar');
    writeFileSync(
      file,
      makeZip([
        { name: 'META-INF/x.txt', data: Buffer.from('stored'), deflate: false },
        { name: 'external/a.xslt', data: text, deflate: true },
      ]),
    );
    const zip = openZip(file);
    expect(zip.names()).toEqual(['META-INF/x.txt', 'external/a.xslt']);
    expect(zip.read('META-INF/x.txt').toString()).toBe('stored');
    expect(zip.read('external/a.xslt').equals(text)).toBe(true);
    expect(() => zip.read('nope')).toThrow(/no entry nope/);
  });

  it('refuses what is not a zip', () => {
    const file = path.join(dir, 'b.jar');
    writeFileSync(file, Buffer.from('not a zip at all, just text that is long enough'));
    expect(() => openZip(file)).toThrow(/not a zip file/);
  });

  it('reads the fetched phive jar so that every pinned file matches its checksum', () => {
    const manifest = loadManifest();
    const jar = path.join(RULES_DIR, '_jars', 'phive-rules-en16931-4.3.7.jar');
    if (!existsSync(jar)) throw new Error(`${jar} missing: run npm run rules:fetch`);
    const zip = openZip(jar);
    const pack = manifest.packs.find((p) => p.id === 'en16931-ubl')!;
    for (const [name, sha] of Object.entries(pack.sources[0]!.sha256)) {
      expect(createHash('sha256').update(zip.read(name)).digest('hex')).toBe(sha);
    }
  });
});

describe('fetch script helpers', () => {
  it('parses its options', () => {
    expect(fetch.parseArgs(['--pack', 'a,b', '--pack=c', '--force'])).toEqual({
      packs: ['a', 'b', 'c'],
      pin: false,
      force: true,
      samples: false,
    });
    expect(fetch.parseArgs(['--samples']).samples).toBe(true);
    expect(() => fetch.parseArgs(['--what'])).toThrow(/unknown argument/);
  });

  it('writes driver schemas that import each namespace with a location, escaped', () => {
    const xsd = fetch.driverSchema([{ namespace: 'urn:a&b', location: 'files/x.xsd' }]);
    expect(xsd).toContain('<xsd:import namespace="urn:a&amp;b" schemaLocation="files/x.xsd"/>');
  });

  it('matches parentheses, ignoring those in string literals', () => {
    const t = "sum(a[b = ')'](c)) * 2";
    expect(t.slice(0, fetch.matchingParen(t, 3))).toBe("sum(a[b = ')'](c))");
  });

  it('decimal-sum-under-round converts sum() under round() to xs:decimal in tests only', () => {
    const input =
      `<xsl:when test="xs:decimal(round(sum(x[@k=')']/y) * xs:decimal(100)) div xs:decimal(100)) = 1 and ` +
      `round(sum(z)) = 2"/>` +
      `<svrl:failed-assert test="round(sum(x))"/>`;
    const [out, n] = fetch.TRANSFORMS['decimal-sum-under-round']!(input);
    expect(n).toBe(2);
    expect(out).toBe(
      `<xsl:when test="xs:decimal(round(xs:decimal(sum(x[@k=')']/y)) * xs:decimal(100)) div xs:decimal(100)) = 1 ` +
        `and round(xs:decimal(sum(z))) = 2"/>` +
        `<svrl:failed-assert test="round(sum(x))"/>`,
    );
  });
});
