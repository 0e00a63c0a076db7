import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { loadConfig } from '../../../src/config/load-config';
import { createValidator, type Validator } from '../../../src/validation';

/**
 * Shared pieces of the validation tests. They run with the real rule packs that `npm test` fetches first
 * (scripts/rules/fetch.js); when a pack is missing the tests fail with the fetch hint, they never skip.
 */

export const RULES_DIR = loadConfig(process.env).validation.rulesDir;

let shared: Validator | undefined;

/** One validator per test file: packs are loaded once and stay in memory, as in the server. */
export function validator(): Validator {
  shared ??= createValidator({ rulesDir: RULES_DIR });
  return shared;
}

interface SamplesManifest {
  artifacts: Record<string, { coordinates: string }>;
  samples: Record<string, { artifact: string; prefix: string }>;
}

/**
 * Official test documents of the manifest's `samples` (read from their jar, which `npm test` fetches with
 * `rules:fetch --samples`), by path below the sample set's folder. Fails, naming the command, when the jar is missing.
 */
export function officialSamples(name: string): Array<{ path: string; xml: Buffer }> {
  /* eslint-disable @typescript-eslint/no-require-imports -- the fetch script's own CommonJS helpers */
  const manifest = require('../../../transforms/rules-manifest.json') as SamplesManifest;
  const { jarName } = require('../../../scripts/rules/fetch.js') as { jarName: (c: string) => string };
  const { openZip } = require('../../../scripts/rules/lib/zip.js') as {
    openZip: (file: string) => { names(): string[]; read(name: string): Buffer };
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const set = manifest.samples[name];
  const artifact = set && manifest.artifacts[set.artifact];
  if (!set || !artifact) throw new Error(`no sample set ${name} in transforms/rules-manifest.json`);
  const jar = path.join(RULES_DIR, '_jars', jarName(artifact.coordinates));
  let zip: ReturnType<typeof openZip>;
  try {
    zip = openZip(jar);
  } catch (e) {
    throw new Error(`${jar} unreadable (${(e as Error).message}): run \`npm run rules:fetch -- --samples\``);
  }
  return zip
    .names()
    .filter((n) => n.startsWith(set.prefix) && n.endsWith('.xml'))
    .sort()
    .map((n) => ({ path: n.slice(set.prefix.length), xml: zip.read(n) }));
}

/** Fails (does not skip) when packs are missing, naming them and the command that fetches them. */
export function requirePacks(ids: readonly string[]): void {
  const status = validator()
    .status()
    .filter((s) => ids.includes(s.id));
  const missing = status.filter((s) => !s.ready);
  const unknown = ids.filter((id) => !status.some((s) => s.id === id));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(
      `rule packs not ready in ${RULES_DIR}: ` +
        [
          ...missing.map((m) => `${m.id} (${m.problem}: ${m.message})`),
          ...unknown.map((u) => `${u} (not in manifest)`),
        ].join('; ') +
        '. ' +
        'Run `npm run rules:fetch` (npm test does this before jest).',
    );
  }
}

export interface SvrlFinding {
  id: string;
  flag: string;
  location: string;
}

const SVRL_NS = 'http://purl.oclc.org/dsdl/svrl';

/** The failed asserts and successful reports of an SVRL document. */
export function svrlFindings(svrl: string): SvrlFinding[] {
  const doc = new DOMParser().parseFromString(svrl, 'text/xml');
  const out: SvrlFinding[] = [];
  for (const local of ['failed-assert', 'successful-report']) {
    const list = doc.getElementsByTagNameNS(SVRL_NS, local);
    for (let k = 0; k < list.length; k++) {
      const el = list.item(k);
      if (!el) continue;
      const text = (el.getElementsByTagNameNS(SVRL_NS, 'text').item(0)?.textContent ?? '').replace(/\s+/g, ' ').trim();
      // The validator's naming of an assert without id: the bracketed rule in its text, else "unnamed-rule".
      const id = el.getAttribute('id') || /^\[([A-Za-z0-9._-]+)\]/.exec(text)?.[1] || 'unnamed-rule';
      out.push({ id, flag: el.getAttribute('flag') ?? '', location: el.getAttribute('location') ?? '' });
    }
  }
  return out;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const reference = require('../../../scripts/rules/lib/reference') as {
  saxonHeClasspath(env?: NodeJS.ProcessEnv): string;
};

/** Classpath of Saxon-HE (Java), the reference engine fetched by rules:fetch. */
export function saxonHeClasspath(): string {
  return reference.saxonHeClasspath(process.env);
}
