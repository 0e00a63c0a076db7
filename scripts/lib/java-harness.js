'use strict';
// Builds one of the small Java harnesses in tools/ (a pom.xml for the dependencies, our classes under
// src/main/java) into the cache, outside the repository, without Maven plugins beyond the pinned dependency plugin:
//   <out>/classpath.txt   the resolved Maven dependencies, fetched from Maven Central once per pom.xml
//   <out>/classes/         our classes, compiled with javac when their sources (or the dependencies) change
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cacheDir } = require('./services');
const { ensureTool } = require('../rules/lib/system-tools');

// The same pinned plugin the rule packs are fetched with (transforms/rules-manifest.json).
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';

function sources(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.java') ? [path.join(dir, e.name)] : [],
    )
    .sort();
}

/** Over names relative to `base` and contents, so two checkouts of the same sources share one build. */
function fingerprint(base, files) {
  const h = crypto.createHash('sha256');
  for (const f of files) h.update(path.relative(base, f)).update(fs.readFileSync(f));
  return h.digest('hex');
}

/** The step that failed travels on the error: `resolve` (Maven) or `compile` (javac). */
function step(stage, work) {
  try {
    return work();
  } catch (e) {
    e.stage = stage;
    throw e;
  }
}

/**
 * Returns { classpath } for `java -cp`; builds what is missing or stale.
 * - harnessDir: tools/<name> (pom.xml, src/main/java)
 * - out: the cache folder for this harness
 * - javac: path of javac; mvn(): path of mvn, asked for only when the dependencies must be resolved
 * - resolving: the log line shown when Maven runs (once)
 * Throws the tool's error (with `stage`) on failure.
 */
function buildJavaHarness({ harnessDir, out, javac, mvn, resolving, log }) {
  fs.mkdirSync(out, { recursive: true });
  const pom = path.join(harnessDir, 'pom.xml');
  const cpFile = path.join(out, 'classpath.txt');
  const cpStamp = path.join(out, 'classpath.stamp');
  const pomPrint = fingerprint(harnessDir, [pom]);
  if (!fs.existsSync(cpFile) || !fs.existsSync(cpStamp) || fs.readFileSync(cpStamp, 'utf8') !== pomPrint) {
    const maven = mvn();
    log(resolving);
    step('resolve', () =>
      execFileSync(
        maven,
        ['-q', '-B', '-f', pom, `${DEPENDENCY_PLUGIN}:build-classpath`, `-Dmdep.outputFile=${cpFile}`],
        { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20 * 60_000 },
      ),
    );
    fs.writeFileSync(cpStamp, pomPrint);
  }
  const deps = fs.readFileSync(cpFile, 'utf8').trim();
  const srcDir = path.join(harnessDir, 'src', 'main', 'java');
  // A harness of dependencies only (a server started by its own main class) has nothing to compile.
  if (!fs.existsSync(srcDir)) return { classpath: deps };
  const classes = path.join(out, 'classes');
  const srcs = sources(srcDir);
  const stamp = path.join(out, 'classes.stamp');
  const print = fingerprint(harnessDir, [...srcs, cpFile]);
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== print) {
    fs.rmSync(classes, { recursive: true, force: true });
    step('compile', () =>
      execFileSync(javac, ['--release', '17', '-d', classes, '-cp', deps, ...srcs], {
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 5 * 60_000,
      }),
    );
    fs.writeFileSync(stamp, print);
  }
  return { classpath: `${classes}${path.delimiter}${deps}` };
}

/** The last lines of a failed tool's output. */
function toolOutput(e) {
  return `${e.stderr ? e.stderr.toString() : ''}${e.stdout ? e.stdout.toString() : ''}`
    .trim()
    .split('\n')
    .slice(-15)
    .join('\n');
}

/**
 * buildJavaHarness for tools/<name>, into <cache>/<name>, installing a missing JDK or Maven from the Debian packages
 * (what the test run needs; the benchmark's converter harness reports them missing instead).
 */
function ensureJavaHarness(name, resolving, env, log) {
  return buildJavaHarness({
    harnessDir: path.join(__dirname, '..', '..', 'tools', name),
    out: path.join(cacheDir(env), name),
    javac: ensureTool('javac', 'default-jdk-headless', log),
    mvn: () => ensureTool('mvn', 'maven', log),
    resolving,
    log,
  });
}

module.exports = { buildJavaHarness, ensureJavaHarness, toolOutput, sources };
