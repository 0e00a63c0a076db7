#!/usr/bin/env node
'use strict';
// Builds the phase4 loopback harness (tools/phase4-harness) into the cache, outside the repository:
//   <cache>/phase4-harness/classpath.txt   the resolved Maven dependencies (phase4, Jetty), fetched from Maven Central once
//   <cache>/phase4-harness/classes/         our few classes, compiled with javac (no Maven plugins needed)
// `node scripts/phase4-harness.js [--quiet]` builds and prints the java classpath; tests call ensurePhase4Harness().
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('./lib/services');
const { ensureTool } = require('./rules/lib/system-tools');

// The same pinned plugin the rule packs are fetched with (transforms/rules-manifest.json).
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';

const HARNESS_DIR = path.join(__dirname, '..', 'tools', 'phase4-harness');

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
function ensurePhase4Harness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  const mvn = ensureTool('mvn', 'maven', log);
  const javac = ensureTool('javac', 'default-jdk-headless', log);
  const out = path.join(cacheDir(env), 'phase4-harness');
  fs.mkdirSync(out, { recursive: true });
  const pom = path.join(HARNESS_DIR, 'pom.xml');
  const cpFile = path.join(out, 'classpath.txt');
  const cpStamp = path.join(out, 'classpath.stamp');
  const pomPrint = fingerprint([pom]);
  if (!fs.existsSync(cpFile) || !fs.existsSync(cpStamp) || fs.readFileSync(cpStamp, 'utf8') !== pomPrint) {
    log('phase4 harness: resolving phase4 and Jetty from Maven Central (once)');
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

module.exports = { ensurePhase4Harness };

if (require.main === module) {
  try {
    const { classpath } = ensurePhase4Harness();
    // `--quiet`: build only (npm test prepares the harness beside the other tools before jest runs).
    if (!process.argv.includes('--quiet')) process.stdout.write(`${classpath}\n`);
  } catch (e) {
    process.stderr.write(`${e.stderr ? e.stderr.toString() : ''}${e.stdout ? e.stdout.toString() : ''}${e.message}\n`);
    process.exit(1);
  }
}
