import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GatewayError } from '../core/gateway-error';
import { packKey, type PackDefinition, type RulesManifest } from './manifest';

/**
 * The fetched rule packs in the cache, checked against the manifest and loaded once. A pack that is missing, built
 * from another manifest entry, or whose files do not match their pinned sha256 is refused with a GatewayError that
 * names it; validation never runs with a pack it cannot vouch for.
 */

export type PackProblem = 'RULE_PACK_UNKNOWN' | 'RULE_PACK_MISSING' | 'RULE_PACK_STALE' | 'RULE_PACK_CHECKSUM_MISMATCH';

export interface LoadedXsdPack {
  kind: 'xsd';
  id: string;
  version: string;
  title: string;
  /** Entry (document root) → absolute path of the driver schema for xmllint. */
  drivers: Readonly<Record<string, string>>;
}

export interface CompiledStylesheet {
  /** The SEF (compiled stylesheet) as SaxonJS takes it. */
  sef: unknown;
  /** file: URL of the XSLT it was compiled from, so relative document() calls (Factur-X code lists) resolve. */
  baseUri: string;
  xslt: string;
}

export interface LoadedSchematronPack {
  kind: 'schematron';
  id: string;
  version: string;
  title: string;
  stylesheets: readonly CompiledStylesheet[];
}

export type LoadedPack = LoadedXsdPack | LoadedSchematronPack;

export interface PackStatus {
  id: string;
  version: string;
  title: string;
  kind: 'xsd' | 'schematron';
  ready: boolean;
  problem?: PackProblem;
  message?: string;
}

interface Stamp {
  id: string;
  version: string;
  fingerprint: string;
  files: Record<string, string>;
  drivers?: Record<string, string>;
  stylesheets?: Array<{ xslt: string; compiledFrom: string; sef: string; sha256: string }>;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function refuse(problem: PackProblem, pack: { id: string; version?: string }, message: string): GatewayError {
  // 503 and not retryable: the server lacks a pinned artefact; only `npm run rules:fetch` on the server fixes it.
  return new GatewayError('DEPENDENCY_UNAVAILABLE', message, {
    retryable: false,
    details: { reason: problem, pack: pack.id, ...(pack.version ? { version: pack.version } : {}) },
  });
}

const FETCH_HINT = 'run `npm run rules:fetch` on this server';

export class RulePackStore {
  private readonly loaded = new Map<string, Promise<LoadedPack>>();

  constructor(
    readonly rulesDir: string,
    readonly manifest: RulesManifest,
  ) {}

  /** The pack's manifest entry: the given version, or the current one (listed first). */
  definition(id: string, version?: string): PackDefinition {
    const def = this.manifest.packs.find((p) => p.id === id && (version === undefined || p.version === version));
    if (!def) {
      const what = version === undefined ? `"${id}"` : `"${id}" ${version}`;
      throw refuse(
        'RULE_PACK_UNKNOWN',
        { id, ...(version ? { version } : {}) },
        `Rule pack ${what} is not in the rules manifest (transforms/rules-manifest.json)`,
      );
    }
    return def;
  }

  packDir(def: { id: string; version: string }): string {
    return path.join(this.rulesDir, def.id, def.version);
  }

  /** The pack, verified and loaded; the same promise for every caller, so a pack is read and parsed once. */
  get(id: string, version?: string): Promise<LoadedPack> {
    const key = version === undefined ? id : `${id}@${version}`;
    let p = this.loaded.get(key);
    if (!p) {
      p = Promise.resolve().then(() => this.load(this.definition(id, version)));
      this.loaded.set(key, p);
      // A failed load is not cached: after `rules:fetch` the next request succeeds without a restart.
      p.catch(() => this.loaded.delete(key));
    }
    return p;
  }

  /** Every pack of the manifest with whether it is ready; checks checksums, does not parse the SEF. */
  status(): PackStatus[] {
    return this.manifest.packs.map((def) => {
      const base = { id: def.id, version: def.version, title: def.title, kind: def.kind };
      try {
        this.verify(def);
        return { ...base, ready: true };
      } catch (e) {
        const err = e as GatewayError;
        return {
          ...base,
          ready: false,
          problem: (err.details?.['reason'] as PackProblem | undefined) ?? 'RULE_PACK_MISSING',
          message: err.message,
        };
      }
    });
  }

  private readStamp(def: PackDefinition): Stamp {
    const dir = this.packDir(def);
    const file = path.join(dir, 'pack.json');
    if (!existsSync(file)) {
      throw refuse(
        'RULE_PACK_MISSING',
        def,
        `Rule pack ${def.id} ${def.version} (${def.title}) is not installed in ${dir}; ${FETCH_HINT}`,
      );
    }
    let stamp: Stamp;
    try {
      stamp = JSON.parse(readFileSync(file, 'utf8')) as Stamp;
    } catch {
      throw refuse(
        'RULE_PACK_MISSING',
        def,
        `Rule pack ${def.id} ${def.version}: ${file} is unreadable; ${FETCH_HINT}`,
      );
    }
    if (stamp.fingerprint !== this.manifest.fingerprints[packKey(def)]) {
      throw refuse(
        'RULE_PACK_STALE',
        def,
        `Rule pack ${def.id} ${def.version} in ${dir} was built from a different manifest entry; ${FETCH_HINT}`,
      );
    }
    return stamp;
  }

  /** Checks every pinned file and every compiled stylesheet against its checksum; returns the stamp. */
  private verify(def: PackDefinition): Stamp {
    const stamp = this.readStamp(def);
    const dir = this.packDir(def);
    const check = (file: string, expected: string, what: string): void => {
      if (!existsSync(file))
        throw refuse(
          'RULE_PACK_MISSING',
          def,
          `Rule pack ${def.id} ${def.version}: ${what} is missing (${file}); ${FETCH_HINT}`,
        );
      const actual = sha256(readFileSync(file));
      if (actual !== expected) {
        throw refuse(
          'RULE_PACK_CHECKSUM_MISMATCH',
          def,
          `Rule pack ${def.id} ${def.version}: ${what} has sha256 ${actual}, expected ${expected}; ${FETCH_HINT}`,
        );
      }
    };
    for (const source of def.sources) {
      for (const [rel, expected] of Object.entries(source.sha256))
        check(path.join(dir, 'files', rel), expected, `${source.artifact}!${rel}`);
    }
    if (def.kind === 'schematron') {
      const sheets = stamp.stylesheets ?? [];
      if (sheets.length !== def.xslt.length || sheets.some((s, k) => s.xslt !== def.xslt[k])) {
        throw refuse(
          'RULE_PACK_STALE',
          def,
          `Rule pack ${def.id} ${def.version}: compiled stylesheets do not match the manifest; ${FETCH_HINT}`,
        );
      }
      for (const s of sheets) check(path.join(dir, s.sef), s.sha256, `compiled ${path.basename(s.xslt)}`);
    } else {
      for (const entry of Object.keys(def.entries)) {
        const driver = stamp.drivers?.[entry];
        if (!driver || !existsSync(path.join(dir, driver))) {
          throw refuse(
            'RULE_PACK_MISSING',
            def,
            `Rule pack ${def.id} ${def.version}: driver schema for ${entry} is missing; ${FETCH_HINT}`,
          );
        }
      }
    }
    return stamp;
  }

  private load(def: PackDefinition): LoadedPack {
    const stamp = this.verify(def);
    const dir = this.packDir(def);
    if (def.kind === 'xsd') {
      const drivers: Record<string, string> = {};
      for (const entry of Object.keys(def.entries)) drivers[entry] = path.join(dir, stamp.drivers?.[entry] as string);
      return { kind: 'xsd', id: def.id, version: def.version, title: def.title, drivers };
    }
    const stylesheets = (stamp.stylesheets ?? []).map((s) => ({
      sef: JSON.parse(readFileSync(path.join(dir, s.sef), 'utf8')) as unknown,
      baseUri: pathToFileURL(path.join(dir, 'files', s.compiledFrom)).href,
      xslt: s.xslt,
    }));
    return { kind: 'schematron', id: def.id, version: def.version, title: def.title, stylesheets };
  }
}
