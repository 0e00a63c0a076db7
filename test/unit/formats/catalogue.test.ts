import { FORMAT_CATALOGUE, ROOT, VERSION, catalogueEntry, type PackCoordinate } from '../../../src/formats/catalogue';
import { peppolDocumentTypeId } from '../../../src/formats/document-type-id';
import { FORMATS, type FormatDefinition, type IdentifierTest, type Matcher } from '../../../src/formats/format-ids';
import { EN16931, baseFormatId } from '../../../src/formats/vocabulary';
import { lookupTransformation } from '../../../src/transform';
import { TARGET_FLAVOURS } from '../../../src/transform/targets';
import { loadManifest, selectRulePacks } from '../../../src/validation';
import { FORMATS as INDEX_FORMATS, type DetectedFormat } from '../../../src/formats';

/**
 * The format catalogue is data every other part reads; this keeps each entry complete and consistent, so adding a
 * CIUS is one entry plus its tests and nothing else can drift.
 */

const manifest = loadManifest();
const versionsOf = (id: string): string[] => manifest.packs.filter((p) => p.id === id).map((p) => p.version);
const split = (c: PackCoordinate): [string, string] => {
  const at = c.lastIndexOf('@');
  return [c.slice(0, at), c.slice(at + 1)];
};

function detected(def: FormatDefinition): DetectedFormat {
  const root = def.roots[0]!;
  return {
    id: def.id,
    name: def.name,
    syntax: def.syntax,
    documentType: 'Invoice',
    urn: def.urn,
    rootName: root.localName,
    rootNamespace: root.namespace,
    customizationId: def.urn,
    ...(def.version ? { version: def.version } : {}),
  };
}

describe('format catalogue: identity', () => {
  it('has unique entry ids, unique format ids, and every format under its own entry', () => {
    const entryIds = FORMAT_CATALOGUE.map((e) => e.id);
    expect(new Set(entryIds).size).toBe(entryIds.length);
    const formatIds = FORMAT_CATALOGUE.flatMap((e) => e.formats.map((f) => f.id));
    expect(new Set(formatIds).size).toBe(formatIds.length);
    for (const e of FORMAT_CATALOGUE) {
      expect(e.formats.length).toBeGreaterThan(0);
      for (const f of e.formats) {
        expect(baseFormatId(f.id)).toBe(e.id);
        expect(f.syntax).toBe(e.syntax);
        expect(f.urn).not.toBe('');
        expect(f.roots.length).toBeGreaterThan(0);
        expect(f.match.length).toBeGreaterThan(0);
        expect(catalogueEntry(f.id)).toBe(e);
      }
    }
  });

  it('is the registry detection reads, in its order', () => {
    expect(FORMATS.map((f) => f.id)).toEqual(FORMAT_CATALOGUE.flatMap((e) => e.formats.map((f) => f.id)));
    expect(INDEX_FORMATS).toBe(FORMATS);
  });

  it('gives UBL and CII entries a Peppol document type identifier, and no other syntax', () => {
    for (const e of FORMAT_CATALOGUE) {
      const def = e.formats[0]!;
      const id = peppolDocumentTypeId(detected(def));
      if (e.syntax === 'UBL' || e.syntax === 'CII') {
        expect(e.peppolSyntaxVersion).toBe(e.syntax === 'UBL' ? '2.1' : 'D16B');
        expect(id).toBe(`${def.roots[0]!.namespace}::${def.roots[0]!.localName}##${def.urn}::${e.peppolSyntaxVersion}`);
      } else {
        expect(e.peppolSyntaxVersion).toBeUndefined();
        expect(id).toBeUndefined();
      }
    }
  });
});

describe('format catalogue: rule packs', () => {
  it('names every pack by a coordinate pinned in transforms/rules-manifest.json, current versions first', () => {
    let checked = 0;
    for (const e of FORMAT_CATALOGUE) {
      if ('notAvailable' in e.rules) {
        expect(e.rules.notAvailable.length).toBeGreaterThan(10);
        continue;
      }
      expect(e.rules.packs.length).toBeGreaterThan(0);
      for (const use of e.rules.packs) {
        const [id, version] = split(use.pack);
        // The current version is the first the manifest lists: the one a plain `id` selects.
        expect({ pack: use.pack, current: versionsOf(id)[0] }).toEqual({ pack: use.pack, current: version });
        const def = manifest.packs.find((p) => p.id === id && p.version === version)!;
        if (def.kind === 'xsd') {
          expect(use.entry).toBeDefined();
          const wanted =
            use.entry === ROOT
              ? e.formats.flatMap((f) => f.roots.map((r) => r.localName))
              : use.entry === VERSION
                ? e.formats.map((f) => f.version ?? '(no version)')
                : [use.entry!];
          for (const w of wanted)
            expect({ pack: use.pack, entry: w, known: w in def.entries }).toMatchObject({ known: true });
        } else expect(use.entry).toBeUndefined();
        checked++;
      }
      for (const prev of e.rules.previous ?? []) {
        const [id, version] = split(prev);
        const versions = versionsOf(id);
        expect({ prev, pinned: versions.includes(version), current: versions[0] === version }).toEqual({
          prev,
          pinned: true,
          current: false,
        });
        expect(e.rules.packs.map((p) => split(p.pack)[0])).toContain(id);
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('keeps every previous version the manifest pins reachable through an entry', () => {
    const previous = new Set(FORMAT_CATALOGUE.flatMap((e) => ('packs' in e.rules ? (e.rules.previous ?? []) : [])));
    for (const p of manifest.packs) {
      if (versionsOf(p.id)[0] === p.version) continue;
      expect(previous).toContain(`${p.id}@${p.version}`);
    }
  });

  it('is what rule selection answers', () => {
    for (const e of FORMAT_CATALOGUE) {
      for (const f of e.formats) {
        const format = detected(f);
        if ('notAvailable' in e.rules) {
          expect(() => selectRulePacks(format)).toThrow(e.rules.notAvailable);
          continue;
        }
        expect(selectRulePacks(format).packs.map((p) => p.id)).toEqual(e.rules.packs.map((p) => split(p.pack)[0]));
      }
    }
  });
});

describe('format catalogue: readers, targets and writers', () => {
  it('gives every target its writer, its own id and syntax, and requirements', () => {
    const targets = FORMAT_CATALOGUE.filter((e) => e.target);
    expect(targets.length).toBeGreaterThan(10);
    for (const e of targets) {
      expect(e.target!.id).toBe(e.id);
      expect(e.target!.syntax).toBe(e.syntax);
      expect(e.writer).toBeInstanceOf(Function);
      expect(e.target!.requirements.length).toBeGreaterThan(0);
      expect(new Set(e.target!.requirements.map((r) => r.rule)).size).toBe(e.target!.requirements.length);
      expect(e.formats.some((f) => f.refused)).toBe(false);
    }
    expect(TARGET_FLAVOURS.map((t) => t.id)).toEqual(targets.map((e) => e.id));
    expect(FORMAT_CATALOGUE.filter((e) => e.writer && !e.target)).toEqual([]);
  });

  it(
    'reaches every target from some source in the conversion table, and every converted pair has reader and ' +
      'writer',
    () => {
      const reached = new Set<string>();
      for (const from of FORMAT_CATALOGUE) {
        for (const to of FORMAT_CATALOGUE) {
          if (!('converter' in lookupTransformation(from.id, to.id))) continue;
          expect({ from: from.id, reader: typeof from.reader }).toEqual({ from: from.id, reader: 'function' });
          expect({ to: to.id, writer: typeof to.writer }).toEqual({ to: to.id, writer: 'function' });
          reached.add(to.id);
        }
      }
      for (const e of FORMAT_CATALOGUE.filter((x) => x.target))
        expect({ target: e.id, reached: reached.has(e.id) }).toEqual({ target: e.id, reached: true });
    },
  );
});

describe('format catalogue: detection matchers do not overlap', () => {
  // Mirrors detection's identifier test (src/formats/detect.ts).
  const holds = (test: IdentifierTest, value: string | undefined): boolean => {
    if (value === undefined) return false;
    if ('equals' in test) return value === test.equals;
    if ('startsWith' in test) return value.startsWith(test.startsWith);
    if ('contains' in test) return value.includes(test.contains);
    return test.pattern.test(value);
  };
  /** An identifier the matcher takes: its own value, or for a pattern the format's URN or an unknown CIUS. */
  const probeOf = (def: FormatDefinition, m: Matcher): string | undefined => {
    const t = m.customizationId;
    if (!t) return undefined;
    if ('equals' in t) return t.equals;
    if ('startsWith' in t) return t.startsWith;
    if ('contains' in t) return `${t.contains}ver1.2`;
    return [def.urn, `${EN16931}#compliant#urn:example.org:cius:1.0`].find((v) => t.pattern.test(v));
  };

  it('gives every document a matcher describes exactly one best format', () => {
    let probes = 0;
    for (const def of FORMATS) {
      for (const m of def.match) {
        const customizationId = probeOf(def, m);
        if (m.customizationId)
          expect({ def: def.id, probe: customizationId !== undefined }).toEqual({ def: def.id, probe: true });
        for (const root of def.roots) {
          const declared = m.declaresNamespace !== undefined ? [m.declaresNamespace] : [];
          let best = -1;
          const winners = new Set<string>();
          for (const other of FORMATS) {
            if (!other.roots.some((r) => r.localName === root.localName && r.namespace === root.namespace)) continue;
            for (const om of other.match) {
              if (om.container === 'pdf' && m.container !== 'pdf') continue;
              if (om.declaresNamespace !== undefined && !declared.includes(om.declaresNamespace)) continue;
              if (om.customizationId && !holds(om.customizationId, customizationId)) continue;
              if (om.score > best) {
                best = om.score;
                winners.clear();
              }
              if (om.score === best) winners.add(other.id);
            }
          }
          expect({ def: def.id, root: root.localName, customizationId, winners: [...winners] }).toEqual({
            def: def.id,
            root: root.localName,
            customizationId,
            winners: [expect.any(String)],
          });
          probes++;
        }
      }
    }
    expect(probes).toBeGreaterThanOrEqual(FORMATS.length);
  });
});
