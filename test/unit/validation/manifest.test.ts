import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load-config';
import { FORMATS, type DetectedFormat } from '../../../src/formats';
import { defaultManifestFile, loadManifest, parseManifest, selectRulePacks } from '../../../src/validation';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const jsManifest = require('../../../scripts/rules/lib/manifest') as {
  packFingerprint(m: unknown, p: unknown): string;
  readManifest(file: string): { packs: Array<{ id: string }> };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const jsPaths = require('../../../scripts/rules/lib/paths') as {
  rulesDir(env: Record<string, string | undefined>): string;
  MANIFEST_FILE: string;
};

const manifest = loadManifest();

function formatOf(id: string): DetectedFormat {
  const def = FORMATS.find((f) => f.id === id);
  if (!def) throw new Error(`no format ${id}`);
  const root = def.roots[0]!;
  return {
    id: def.id,
    name: def.name,
    syntax: def.syntax,
    documentType: 'Invoice',
    urn: def.urn,
    rootName: root.localName,
    rootNamespace: root.namespace,
    ...(def.version ? { version: def.version } : {}),
  };
}

describe('rules manifest', () => {
  it('is the file the fetch script reads, fully pinned', () => {
    expect(defaultManifestFile()).toBe(jsPaths.MANIFEST_FILE);
    expect(() => jsManifest.readManifest(jsPaths.MANIFEST_FILE)).not.toThrow();
    for (const a of Object.values(manifest.artifacts)) expect(a.sha256).toMatch(/^[0-9a-f]{64}$/);
    for (const p of manifest.packs) for (const s of p.sources) expect(Object.keys(s.sha256).length).toBeGreaterThan(0);
  });

  it('fingerprints every pack exactly as the fetch script does', () => {
    const raw = JSON.parse(readFileSync(jsPaths.MANIFEST_FILE, 'utf8')) as {
      packs: Array<{ id: string; version: string }>;
    };
    for (const p of raw.packs)
      expect(manifest.fingerprints[`${p.id}@${p.version}`]).toBe(jsManifest.packFingerprint(raw, p));
  });

  it('changes a fingerprint when a pinned checksum changes', () => {
    const raw = JSON.parse(readFileSync(jsPaths.MANIFEST_FILE, 'utf8')) as {
      packs: Array<{ id: string; sources: Array<{ sha256: Record<string, string> }> }>;
    };
    const before = parseManifest(raw).fingerprints['en16931-ubl@1.3.16'];
    const pack = raw.packs.find((p) => p.id === 'en16931-ubl')!;
    const file = Object.keys(pack.sources[0]!.sha256)[0]!;
    pack.sources[0]!.sha256[file] = '0'.repeat(64);
    expect(parseManifest(raw).fingerprints['en16931-ubl@1.3.16']).not.toBe(before);
  });

  it('refuses a manifest with an unpinned file', () => {
    const raw = JSON.parse(readFileSync(jsPaths.MANIFEST_FILE, 'utf8')) as {
      artifacts: Record<string, { sha256: string }>;
    };
    raw.artifacts['ph-ubl21']!.sha256 = '';
    expect(() => parseManifest(raw)).toThrow(/not fully pinned/);
  });

  it('puts the cache where the config says, by the same rule as the fetch script', () => {
    const envs: Array<Record<string, string>> = [
      {},
      { INVOICE_GATEWAY_CACHE: '/tmp/igc' },
      { RULES_CACHE_DIR: '/srv/rules' },
      { RULES_CACHE_DIR: 'rel/rules', INVOICE_GATEWAY_CACHE: '/x' },
    ];
    for (const env of envs) expect(loadConfig(env).validation.rulesDir).toBe(jsPaths.rulesDir(env));
    expect(loadConfig({ RULES_CACHE_DIR: '/srv/rules' }).validation.rulesDir).toBe(path.resolve('/srv/rules'));
  });
});

describe('pack selection', () => {
  const ids = new Set(manifest.packs.map((p) => p.id));

  it('maps every validatable format to packs the manifest has, schema first', () => {
    const mapped: string[] = [];
    for (const f of FORMATS.filter((x) => !x.refused)) {
      let packs;
      try {
        packs = selectRulePacks(formatOf(f.id)).packs;
      } catch (e) {
        expect((e as { code?: string }).code).toBe('NOT_IMPLEMENTED');
        continue;
      }
      mapped.push(f.id);
      expect(packs.length).toBeGreaterThan(0);
      for (const p of packs) expect(ids.has(p.id)).toBe(true);
      const def = manifest.packs.find((p) => p.id === packs[0]!.id)!;
      expect(def.kind).toBe('xsd');
      if (def.kind === 'xsd') expect(Object.keys(def.entries)).toContain(packs[0]!.entry);
    }
    // The core formats of the brief are all mapped.
    for (const id of [
      'en16931-ubl-invoice',
      'en16931-cii',
      'peppol-bis3-ubl-invoice',
      'nlcius-ubl-invoice',
      'nlcius-ubl-creditnote',
      'xrechnung-ubl-invoice',
      'xrechnung-cii',
      'facturx-extended',
      'peppol-mls',
      'fatturapa-1.2',
      'ebinterface-6.1',
      'svefaktura-1.0',
    ]) {
      expect(mapped).toContain(id);
    }
  });

  it('layers the national rules on the schema and EN 16931 as the specifications do', () => {
    expect(selectRulePacks(formatOf('nlcius-ubl-invoice')).packs).toEqual([
      { id: 'ubl-2.1', entry: 'Invoice' },
      { id: 'si-ubl-2.0' },
    ]);
    expect(selectRulePacks(formatOf('xrechnung-ubl-invoice')).packs.map((p) => p.id)).toEqual([
      'ubl-2.1',
      'en16931-ubl',
      'xrechnung-ubl',
    ]);
    expect(selectRulePacks(formatOf('peppol-bis3-ubl-invoice')).packs.map((p) => p.id)).toEqual([
      'ubl-2.1',
      'peppol-cen-en16931-ubl',
      'peppol-bis3-ubl',
    ]);
    expect(selectRulePacks(formatOf('facturx-basic')).packs).toEqual([
      { id: 'facturx-xsd', entry: 'basic' },
      { id: 'facturx-basic' },
    ]);
  });

  it('says clearly when a format has no pinned rules', () => {
    expect(() => selectRulePacks(formatOf('peppol-bis3-cii'))).toThrow(
      /No validation rules are available for Peppol BIS Billing 3.0 CII.*release 3.0.15/,
    );
    expect(() => selectRulePacks(formatOf('dico-insbou004'))).toThrow(/licence-gated/);
  });
});
