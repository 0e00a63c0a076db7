#!/usr/bin/env node
'use strict';
// Builds the phase4 loopback harness (tools/phase4-harness) into the cache, outside the repository:
//   <cache>/phase4-harness/classpath.txt   the resolved Maven dependencies (phase4, Jetty), fetched from Maven
//                                          Central once
//   <cache>/phase4-harness/classes/         our few classes, compiled with javac (no Maven plugins needed)
// `node scripts/phase4-harness.js [--quiet]` builds and prints the java classpath; tests call ensurePhase4Harness().
const { ensureJavaHarness } = require('./lib/java-harness');

/** Returns { classpath } for `java -cp`; builds what is missing or stale. Throws with the tool's output on failure. */
function ensurePhase4Harness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  return ensureJavaHarness(
    'phase4-harness',
    'phase4 harness: resolving phase4 and Jetty from Maven Central (once)',
    env,
    log,
  );
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
