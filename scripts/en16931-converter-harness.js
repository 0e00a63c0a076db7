#!/usr/bin/env node
'use strict';
// Builds the reference-converter harness (tools/en16931-converter-harness: phax en16931-ubl2cii and en16931-cii2ubl)
// into the cache, outside the repository, the way scripts/phase4-harness.js builds the phase4 one:
//   <cache>/en16931-converter-harness/classpath.txt   the resolved Maven dependencies, fetched from Maven Central once
//   <cache>/en16931-converter-harness/classes/         our one class, compiled with javac (no Maven plugins needed)
// `node scripts/en16931-converter-harness.js` builds and prints the java classpath; the transformation benchmark
// calls ensureConverterHarness(), which reports a missing Maven or JDK as `unavailable` rather than installing one.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir, findOnPath } = require('./lib/services');

// The same pinned plugin the rule packs and the phase4 harness are resolved with.
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';
const HARNESS_DIR = path.join(__dirname, '..', 'tools', 'en16931-converter-harness');
const MAIN_CLASS = 'dev.invoicegateway.converterharness.Harness';

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

function toolOutput(e) {
  return `${e.stderr ? e.stderr.toString() : ''}${e.stdout ? e.stdout.toString() : ''}`.trim().split('\n').slice(-15).join('\n');
}

/**
 * Returns { classpath, java, mainClass } for running the harness, or { unavailable: why } when it cannot be built
 * here (no JDK, no Maven while the dependencies are not resolved yet, Maven Central unreachable, a compile error).
 * Builds only what is missing or stale; the dependencies are resolved once per pom.xml.
 */
function ensureConverterHarness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  const java = findOnPath('java', env);
  const javac = findOnPath('javac', env);
  if (!java || !javac) return { unavailable: 'no JDK on PATH (java and javac are needed; Debian: apt-get install default-jdk-headless)' };
  const out = path.join(cacheDir(env), 'en16931-converter-harness');
  fs.mkdirSync(out, { recursive: true });
  const pom = path.join(HARNESS_DIR, 'pom.xml');
  const cpFile = path.join(out, 'classpath.txt');
  const cpStamp = path.join(out, 'classpath.stamp');
  const pomPrint = fingerprint([pom]);
  if (!fs.existsSync(cpFile) || !fs.existsSync(cpStamp) || fs.readFileSync(cpStamp, 'utf8') !== pomPrint) {
    const mvn = findOnPath('mvn', env);
    if (!mvn) return { unavailable: 'Maven (mvn) is not on PATH, so the converters cannot be fetched from Maven Central (Debian: apt-get install maven)' };
    log('en16931 converter harness: resolving en16931-ubl2cii and en16931-cii2ubl from Maven Central (once)');
    try {
      execFileSync(mvn, ['-q', '-B', '-f', pom, `${DEPENDENCY_PLUGIN}:build-classpath`, `-Dmdep.outputFile=${cpFile}`], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20 * 60_000 });
    } catch (e) {
      return { unavailable: `Maven could not resolve the converters (Maven Central unreachable?):\n${toolOutput(e) || e.message}` };
    }
    fs.writeFileSync(cpStamp, pomPrint);
  }
  const deps = fs.readFileSync(cpFile, 'utf8').trim();
  const classes = path.join(out, 'classes');
  const srcs = sources(path.join(HARNESS_DIR, 'src', 'main', 'java'));
  const stamp = path.join(out, 'classes.stamp');
  const print = fingerprint([...srcs, cpFile]);
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== print) {
    fs.rmSync(classes, { recursive: true, force: true });
    try {
      execFileSync(javac, ['--release', '17', '-d', classes, '-cp', deps, ...srcs], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 5 * 60_000 });
    } catch (e) {
      return { unavailable: `javac could not compile the harness:\n${toolOutput(e) || e.message}` };
    }
    fs.writeFileSync(stamp, print);
  }
  return { classpath: `${classes}${path.delimiter}${deps}`, java, mainClass: MAIN_CLASS };
}

module.exports = { ensureConverterHarness };

if (require.main === module) {
  const h = ensureConverterHarness();
  if (h.unavailable) {
    process.stderr.write(`${h.unavailable}\n`);
    process.exit(1);
  }
  process.stdout.write(`${h.classpath}\n`);
}
