/**
 * Where the Peppol network data is (the `network` entry of transforms/rules-manifest.json, made ready in the rules
 * cache by `npm run rules:fetch`: scripts/rules/lib/network-data.js) and the checks that a file of it is the pinned
 * one. Every file is read once per process.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defaultManifestFile } from '../../validation/manifest';
import { GatewayError } from '../../core/gateway-error';

const NetworkEntry = z.object({
  version: z.string().min(1),
  sources: z.array(
    z.object({ artifact: z.string(), sha256: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)) }),
  ),
});
const ManifestPart = z.object({
  artifacts: z.record(z.string(), z.object({ coordinates: z.string() })),
  network: NetworkEntry,
});

export interface NetworkDataLocation {
  /** `<rulesDir>/_network/<version>`. */
  dir: string;
  version: string;
  /** Pinned sha256 of every file taken from a jar, by its path in the jar. */
  files: Readonly<Record<string, string>>;
  /** Maven coordinates of the jar each file comes from. */
  artifactOf: Readonly<Record<string, string>>;
}

function missing(message: string): GatewayError {
  return new GatewayError('DEPENDENCY_UNAVAILABLE', message);
}

/** The network data of the manifest beside the sources, in `rulesDir` (config validation.rulesDir). */
export function networkDataLocation(
  rulesDir: string,
  manifestFile: string = defaultManifestFile(),
): NetworkDataLocation {
  const parsed = ManifestPart.safeParse(JSON.parse(readFileSync(manifestFile, 'utf8')) as unknown);
  if (!parsed.success)
    throw new Error(`${manifestFile}: the network entry is missing or not pinned (npm run rules:fetch -- --pin)`);
  const { network, artifacts } = parsed.data;
  const files: Record<string, string> = {};
  const artifactOf: Record<string, string> = {};
  for (const s of network.sources)
    for (const [f, h] of Object.entries(s.sha256)) {
      files[f] = h;
      artifactOf[f] = artifacts[s.artifact]?.coordinates ?? s.artifact;
    }
  return { dir: path.join(rulesDir, '_network', network.version), version: network.version, files, artifactOf };
}

/**
 * The bytes of one pinned file, checked against its sha256 in the manifest: a file that is absent or differs is
 * refused (a corrupt cache never becomes trust anchors or rules).
 */
export function readPinnedFile(loc: NetworkDataLocation, name: string): Buffer {
  const expected = loc.files[name];
  if (!expected) throw new Error(`${name} is not a file of the network data ${loc.version}`);
  const file = path.join(loc.dir, 'files', name);
  if (!existsSync(file))
    throw missing(`the Peppol network data ${loc.version} is not in ${loc.dir} (run npm run rules:fetch): ${name}`);
  const data = readFileSync(file);
  const actual = createHash('sha256').update(data).digest('hex');
  if (actual !== expected)
    throw missing(
      `${file} has sha256 ${actual}, but ${loc.artifactOf[name] ?? 'the pinned jar'} pins ${expected}; ` +
        'the file is refused (run npm run rules:fetch -- --force)',
    );
  return data;
}

/** codelists.json, made from the pinned code list files by the fetch. */
export function readCodeListsFile(loc: NetworkDataLocation): unknown {
  const file = path.join(loc.dir, 'codelists.json');
  if (!existsSync(file))
    throw missing(`the Peppol code lists ${loc.version} are not in ${loc.dir} (run npm run rules:fetch)`);
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}
