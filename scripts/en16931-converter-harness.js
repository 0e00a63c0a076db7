#!/usr/bin/env node
'use strict';
// Builds the reference-converter harness (tools/en16931-converter-harness: phax en16931-ubl2cii and en16931-cii2ubl)
// into the cache, outside the repository, the way scripts/phase4-harness.js builds the phase4 one:
//   <cache>/en16931-converter-harness/classpath.txt   the resolved Maven dependencies, fetched from Maven Central once
//   <cache>/en16931-converter-harness/classes/         our one class, compiled with javac (no Maven plugins needed)
// `node scripts/en16931-converter-harness.js` builds and prints the java classpath; the transformation benchmark
// calls ensureConverterHarness(), which reports a missing Maven or JDK as `unavailable` rather than installing one.
const path = require('node:path');
const { cacheDir, findOnPath } = require('./lib/services');
const { buildJavaHarness, toolOutput } = require('./lib/java-harness');

const HARNESS_DIR = path.join(__dirname, '..', 'tools', 'en16931-converter-harness');
const MAIN_CLASS = 'dev.invoicegateway.converterharness.Harness';

class Unavailable extends Error {}

/**
 * Returns { classpath, java, mainClass } for running the harness, or { unavailable: why } when it cannot be built
 * here (no JDK, no Maven while the dependencies are not resolved yet, Maven Central unreachable, a compile error).
 * Builds only what is missing or stale; the dependencies are resolved once per pom.xml.
 */
function ensureConverterHarness(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  const java = findOnPath('java', env);
  const javac = findOnPath('javac', env);
  if (!java || !javac)
    return { unavailable: 'no JDK on PATH (java and javac are needed; Debian: apt-get install default-jdk-headless)' };
  try {
    const { classpath } = buildJavaHarness({
      harnessDir: HARNESS_DIR,
      out: path.join(cacheDir(env), 'en16931-converter-harness'),
      javac,
      mvn: () => {
        const mvn = findOnPath('mvn', env);
        if (!mvn)
          throw new Unavailable(
            'Maven (mvn) is not on PATH, so the converters cannot be fetched from Maven Central (Debian: apt-get ' +
              'install maven)',
          );
        return mvn;
      },
      resolving: 'en16931 converter harness: resolving en16931-ubl2cii and en16931-cii2ubl from Maven Central (once)',
      log,
    });
    return { classpath, java, mainClass: MAIN_CLASS };
  } catch (e) {
    if (e instanceof Unavailable) return { unavailable: e.message };
    if (e.stage === 'resolve')
      return {
        unavailable:
          'Maven could not resolve the converters (Maven Central unreachable?):\n' + (toolOutput(e) || e.message),
      };
    if (e.stage === 'compile')
      return { unavailable: `javac could not compile the harness:\n${toolOutput(e) || e.message}` };
    throw e;
  }
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
