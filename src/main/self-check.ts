/**
 * The startup self-check: can this installation do its main job? Every pinned rule pack is installed and matches its
 * checksums, the XSD engine loads (libxml2-wasm in process, or xmllint when configured), the demo invoice shipped with
 * the gateway validates with the official rules end to end (XSD and Schematron engines both exercised), and the Peppol
 * access-point key loads. In production the API and the worker refuse to start when a check fails, naming what is
 * missing, instead of failing documents later; `npm run admin -- self-check` runs the same checks, and `/readyz`
 * reports the rule packs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/load-config';
import { loadAs4Keys } from '../peppol/as4/as4-keys';
import { createValidator, defaultManifestFile } from '../validation';
import { validatorOptions } from './compose';

export interface SelfCheckItem {
  name: 'rules' | 'xsd' | 'sample' | 'peppol';
  ok: boolean;
  detail: string;
}

export interface SelfCheckReport {
  ok: boolean;
  checks: SelfCheckItem[];
}

/** The installation's root: the repository, or /app in the image (where the rules manifest is, in transforms/). */
function packageRoot(): string {
  return path.dirname(path.dirname(defaultManifestFile()));
}

/** The Peppol BIS Billing 3.0 invoice of the demo, shipped with the gateway (scripts/demo). */
export function selfCheckSample(): string {
  return path.join(packageRoot(), 'scripts', 'demo', 'invoice.xml');
}

function checkXsdEngine(config: Readonly<Config>): SelfCheckItem {
  if (config.validation.xsdEngine === 'libxml2-wasm') {
    try {
      const pkg = require.resolve('libxml2-wasm/package.json');
      const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string };
      return { name: 'xsd', ok: true, detail: `libxml2-wasm ${version ?? 'unknown version'} (in process)` };
    } catch (e) {
      return { name: 'xsd', ok: false, detail: `libxml2-wasm is not installed: ${(e as Error).message}` };
    }
  }
  const run = spawnSync('xmllint', ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (run.error || run.status !== 0)
    return {
      name: 'xsd',
      ok: false,
      detail: `xmllint (libxml2-utils) is not installed or does not run: ${run.error?.message ?? `exit ${run.status}`}`,
    };
  const version = /xmllint: using libxml version (\S+)/.exec(`${run.stderr}${run.stdout}`)?.[1] ?? 'unknown version';
  return { name: 'xsd', ok: true, detail: `xmllint, libxml ${version}` };
}

async function checkRules(config: Readonly<Config>, sample: string): Promise<SelfCheckItem[]> {
  const validator = createValidator(validatorOptions(config));
  const packs = validator.status();
  const missing = packs.filter((p) => !p.ready);
  const rules: SelfCheckItem = missing.length
    ? {
        name: 'rules',
        ok: false,
        detail:
          `${missing.length} of ${packs.length} rule packs are not ready in ${config.validation.rulesDir}: ` +
          missing.map((p) => `${p.id}@${p.version} (${p.problem})`).join(', ') +
          '; run `npm run rules:fetch` with RULES_CACHE_DIR set to that directory',
      }
    : { name: 'rules', ok: true, detail: `${packs.length} rule packs verified in ${config.validation.rulesDir}` };
  if (!existsSync(sample)) return [rules, { name: 'sample', ok: false, detail: `the sample ${sample} is missing` }];
  try {
    const result = await validator.validate(readFileSync(sample));
    const errors = result.assertions.filter((a) => a.flag !== 'warning');
    const ran = result.ruleSets.map((r) => r.id).join(', ');
    return [
      rules,
      result.isValid
        ? { name: 'sample', ok: true, detail: `the demo invoice is valid (${ran})` }
        : {
            name: 'sample',
            ok: false,
            detail: `the demo invoice failed validation (${ran}): ${errors
              .slice(0, 3)
              .map((a) => `[${a.ruleId}] ${a.text}`)
              .join('; ')}`,
          },
    ];
  } catch (e) {
    return [
      rules,
      { name: 'sample', ok: false, detail: `validating the demo invoice failed: ${(e as Error).message}` },
    ];
  }
}

function checkPeppol(config: Readonly<Config>): SelfCheckItem {
  if (!config.as4.enabled)
    return {
      name: 'peppol',
      ok: config.env !== 'production',
      detail:
        'no Peppol access-point key: set PEPPOL_AP_KEYSTORE (PKCS#12), PEPPOL_AP_KEYSTORE_PASSWORD and PEPPOL_AP_CA',
    };
  try {
    const keys = loadAs4Keys(config.as4);
    return { name: 'peppol', ok: true, detail: `access point ${keys.keys.seatId}` };
  } catch (e) {
    return { name: 'peppol', ok: false, detail: `the Peppol access-point key does not load: ${(e as Error).message}` };
  }
}

export async function runSelfCheck(
  config: Readonly<Config>,
  options: { sample?: string } = {},
): Promise<SelfCheckReport> {
  const checks = [
    ...(await checkRules(config, options.sample ?? selfCheckSample())),
    checkXsdEngine(config),
    checkPeppol(config),
  ];
  return { ok: checks.every((c) => c.ok), checks };
}

const RULES_READINESS_TTL_MS = 60_000;

/**
 * The `/readyz` check of the rule packs: every pinned pack installed and matching its checksums. Hashing every pack
 * takes a moment, so the answer is kept for a minute.
 */
export function rulePacksReadiness(config: Readonly<Config>): () => Promise<boolean> {
  const validator = createValidator(validatorOptions(config));
  let last: { at: number; ready: boolean } | undefined;
  return () => {
    if (!last || Date.now() - last.at > RULES_READINESS_TTL_MS)
      last = { at: Date.now(), ready: validator.status().every((p) => p.ready) };
    return Promise.resolve(last.ready);
  };
}

/** The one-line reason a process refuses to start. */
export function selfCheckFailure(report: SelfCheckReport): string {
  return `self-check failed: ${report.checks
    .filter((c) => !c.ok)
    .map((c) => `${c.name}: ${c.detail}`)
    .join(' | ')}`;
}

/** Production processes start only on an installation that passes the self-check. */
export async function requireSelfCheck(config: Readonly<Config>): Promise<void> {
  if (config.env !== 'production') return;
  const report = await runSelfCheck(config);
  if (!report.ok) throw new Error(selfCheckFailure(report));
}
