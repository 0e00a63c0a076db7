import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/**
 * The rule-pack manifest (transforms/rules-manifest.json): which official artefacts the gateway validates with, pinned
 * by Maven coordinates and sha256. `npm run rules:fetch` (scripts/rules/fetch.js) builds the cache from it; this module
 * reads it at run time to check that what is in the cache is exactly what the manifest pins.
 */

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

const Source = z.object({
  artifact: z.string(),
  include: z.array(z.string()).min(1),
  sha256: z.record(z.string(), sha256Hex),
});

const Patch = z.object({
  id: z.string(),
  file: z.string(),
  reason: z.string(),
  transform: z.string().optional(),
  count: z.number().int().optional(),
  replacements: z.array(z.object({ find: z.string(), replace: z.string(), count: z.number().int() })).optional(),
});

const PackBase = {
  id: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/),
  version: z.string().min(1),
  title: z.string(),
  sources: z.array(Source).min(1),
};

const XsdPack = z.object({
  ...PackBase,
  kind: z.literal('xsd'),
  imports: z.array(z.object({ namespace: z.string(), path: z.string() })).optional(),
  entries: z.record(z.string(), z.object({ namespace: z.string(), path: z.string() })),
});

const SchematronPack = z.object({
  ...PackBase,
  kind: z.literal('schematron'),
  xslt: z.array(z.string()).min(1),
  patches: z.array(Patch).optional(),
});

const Manifest = z.object({
  manifestVersion: z.literal(1),
  mavenDependencyPlugin: z.string(),
  artifacts: z.record(z.string(), z.object({ coordinates: z.string(), sha256: sha256Hex })),
  tools: z.record(z.string(), z.object({ title: z.string(), classpath: z.array(z.string()).min(1) })).optional(),
  packs: z.array(z.discriminatedUnion('kind', [XsdPack, SchematronPack])),
});

export type RulesManifest = z.infer<typeof Manifest> & {
  /** `id@version` → fingerprint, computed from the manifest text as written (before any parsing normalises it). */
  fingerprints: Readonly<Record<string, string>>;
};
export type PackDefinition = z.infer<typeof Manifest>['packs'][number];
export type XsdPackDefinition = z.infer<typeof XsdPack>;
export type SchematronPackDefinition = z.infer<typeof SchematronPack>;

const MANIFEST_RELATIVE = path.join('transforms', 'rules-manifest.json');

/** The manifest beside the sources: found upwards from this file, so it works from src/ and from dist/src/. */
export function defaultManifestFile(): string {
  let dir = __dirname;
  for (let k = 0; k < 6; k++) {
    const candidate = path.join(dir, MANIFEST_RELATIVE);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error(`${MANIFEST_RELATIVE} not found above ${__dirname}`);
}

export function parseManifest(json: unknown): RulesManifest {
  const parsed = Manifest.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(
      `rules manifest is invalid or not fully pinned (run npm run rules:fetch -- --pin): ${issues.join('; ')}`,
    );
  }
  const fingerprints: Record<string, string> = {};
  const raw = json as {
    artifacts: Record<string, { coordinates: string; sha256: string }>;
    packs: Array<{ id: string; version: string; sources: Array<{ artifact: string }> }>;
  };
  for (const p of parsed.data.packs) {
    for (const s of p.sources)
      if (!parsed.data.artifacts[s.artifact])
        throw new Error(`rules manifest: pack ${p.id} uses unknown artifact ${s.artifact}`);
    // One id may appear in several versions (a transition window); the first listed is the current one.
    const key = packKey(p);
    if (fingerprints[key] !== undefined) throw new Error(`rules manifest: pack ${p.id} ${p.version} listed twice`);
    const rawPack = raw.packs.find((r) => r.id === p.id && r.version === p.version);
    if (rawPack) fingerprints[key] = packFingerprint(raw, rawPack);
  }
  return { ...parsed.data, fingerprints };
}

export function packKey(p: { id: string; version: string }): string {
  return `${p.id}@${p.version}`;
}

export function loadManifest(file: string = defaultManifestFile()): RulesManifest {
  return parseManifest(JSON.parse(readFileSync(file, 'utf8')) as unknown);
}

/**
 * JSON with sorted object keys at every level: the text the fingerprint hashes (same as scripts/rules/lib/manifest.js).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Fingerprint of a pack: its manifest entry (as written in the file) plus the coordinates and checksums of its jars.
 * The fetch script stores it in the pack's stamp; a different value means the cache holds another build.
 */
export function packFingerprint(
  rawManifest: { artifacts: Record<string, { coordinates: string; sha256: string }> },
  rawPack: { sources: Array<{ artifact: string }> },
): string {
  const artifacts: Record<string, { coordinates: string; sha256: string }> = {};
  for (const s of rawPack.sources) {
    const a = rawManifest.artifacts[s.artifact];
    if (a) artifacts[s.artifact] = { coordinates: a.coordinates, sha256: a.sha256 };
  }
  return createHash('sha256')
    .update(canonicalJson({ pack: rawPack, artifacts }))
    .digest('hex');
}
