#!/usr/bin/env node
'use strict';
// Builds the veraPDF PDF/A checker (tools/verapdf-harness) into the cache, outside the repository:
//   <cache>/verapdf-harness/classpath.txt   the resolved Maven dependencies (veraPDF), fetched from Maven Central once
//   <cache>/verapdf-harness/classes/         our one class, compiled with javac (no Maven plugins needed)
// `node scripts/verapdf-harness.js [--quiet]` builds and prints the java classpath;
// `node scripts/verapdf-harness.js --check file.pdf ...` prints veraPDF's PDF/A-3B verdicts as JSON.
// Tests call ensureVeraPdfHarness() / checkPdfA().
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('./lib/services');
const { ensureTool } = require('./rules/lib/system-tools');

// The same pinned plugin the rule packs are fetched with (transforms/rules-manifest.json).
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';
const MAIN_CLASS = 'dev.invoicegateway.verapdf.PdfACheck';

const HARNESS_DIR = path.join(__dirname, '..', 'tools', 'verapdf-harness');

function sources(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.java') ? [path.join(dir, e.name)] : []))
    .sort();
}

function fingerprint(files) {
  const h = crypto.createHash('sha256');
  for (const f of files) h.update(f).update(fs.readFileSync(f));
  return h.digest('hex');
}

/** Returns { classpath } for `java -cp`; builds what is missing or stale. Throws with the tool's output on failure. */
function ensureVeraPdfHarness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  const mvn = ensureTool('mvn', 'maven', log);
  const javac = ensureTool('javac', 'default-jdk-headless', log);
  const out = path.join(cacheDir(env), 'verapdf-harness');
  fs.mkdirSync(out, { recursive: true });
  const pom = path.join(HARNESS_DIR, 'pom.xml');
  const cpFile = path.join(out, 'classpath.txt');
  const cpStamp = path.join(out, 'classpath.stamp');
  const pomPrint = fingerprint([pom]);
  if (!fs.existsSync(cpFile) || !fs.existsSync(cpStamp) || fs.readFileSync(cpStamp, 'utf8') !== pomPrint) {
    log('veraPDF harness: resolving veraPDF from Maven Central (once)');
    execFileSync(mvn, ['-q', '-B', '-f', pom, `${DEPENDENCY_PLUGIN}:build-classpath`, `-Dmdep.outputFile=${cpFile}`], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20 * 60_000 });
    fs.writeFileSync(cpStamp, pomPrint);
  }
  const deps = fs.readFileSync(cpFile, 'utf8').trim();
  const classes = path.join(out, 'classes');
  const srcs = sources(path.join(HARNESS_DIR, 'src', 'main', 'java'));
  const stamp = path.join(out, 'classes.stamp');
  const print = fingerprint([...srcs, cpFile]);
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== print) {
    fs.rmSync(classes, { recursive: true, force: true });
    execFileSync(javac, ['--release', '17', '-d', classes, '-cp', deps, ...srcs], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 5 * 60_000 });
    fs.writeFileSync(stamp, print);
  }
  return { classpath: `${classes}${path.delimiter}${deps}` };
}

/**
 * veraPDF's verdicts for the given files against a PDF/A flavour (default 3b), one JVM for all of them:
 * [{ file, compliant, flavour, failures: [{ rule, description, context, count }] } | { file, error }].
 */
function checkPdfA(files, flavour = '3b', env = process.env) {
  const { classpath } = ensureVeraPdfHarness(env);
  const java = ensureTool('java', 'default-jre-headless', () => {});
  const out = execFileSync(java, ['-cp', classpath, MAIN_CLASS, '--flavour', flavour, ...files], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000, maxBuffer: 64 * 1024 * 1024 });
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
