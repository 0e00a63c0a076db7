#!/usr/bin/env node
'use strict';
// Builds the veraPDF PDF/A checker (tools/verapdf-harness) into the cache, outside the repository:
//   <cache>/verapdf-harness/classpath.txt   the resolved Maven dependencies (veraPDF), fetched from Maven Central once
//   <cache>/verapdf-harness/classes/         our one class, compiled with javac (no Maven plugins needed)
// `node scripts/verapdf-harness.js [--quiet]` builds and prints the java classpath;
// `node scripts/verapdf-harness.js --check file.pdf ...` prints veraPDF's PDF/A-3B verdicts as JSON.
// Tests call ensureVeraPdfHarness() / checkPdfA().
const { execFileSync } = require('node:child_process');
const { ensureJavaHarness } = require('./lib/java-harness');
const { ensureTool } = require('./rules/lib/system-tools');

const MAIN_CLASS = 'dev.invoicegateway.verapdf.PdfACheck';

/** Returns { classpath } for `java -cp`; builds what is missing or stale. Throws with the tool's output on failure. */
function ensureVeraPdfHarness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  return ensureJavaHarness('verapdf-harness', 'veraPDF harness: resolving veraPDF from Maven Central (once)', env, log);
}

/**
 * veraPDF's verdicts for the given files against a PDF/A flavour (default 3b), one JVM for all of them:
 * [{ file, compliant, flavour, failures: [{ rule, description, context, count }] } | { file, error }].
 */
function checkPdfA(files, flavour = '3b', env = process.env) {
  const { classpath } = ensureVeraPdfHarness(env);
  const java = ensureTool('java', 'default-jre-headless', () => {});
  const out = execFileSync(java, ['-cp', classpath, MAIN_CLASS, '--flavour', flavour, ...files], {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.toString('utf8'));
}

module.exports = { ensureVeraPdfHarness, checkPdfA };

if (require.main === module) {
  try {
    const k = process.argv.indexOf('--check');
    if (k !== -1) {
      process.stdout.write(`${JSON.stringify(checkPdfA(process.argv.slice(k + 1)), null, 2)}\n`);
    } else {
      const { classpath } = ensureVeraPdfHarness();
      // `--quiet`: build only (npm test prepares the harness beside the other tools before jest runs).
      if (!process.argv.includes('--quiet')) process.stdout.write(`${classpath}\n`);
    }
  } catch (e) {
    process.stderr.write(`${e.stderr ? e.stderr.toString() : ''}${e.stdout ? e.stdout.toString() : ''}${e.message}\n`);
    process.exit(1);
  }
}
