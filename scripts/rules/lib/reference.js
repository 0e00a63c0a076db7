'use strict';
// The reference engine for benchmarks and comparisons: Saxon-HE (Java) running a pack's official XSLT, as fetched by
// `npm run rules:fetch` (tools.json + the pack's files). Kept out of src/: the gateway itself never starts a JVM.

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { rulesDir } = require('./paths');

/** Classpath of Saxon-HE from <rulesDir>/tools.json. */
function saxonHeClasspath(env = process.env) {
  const file = path.join(rulesDir(env), 'tools.json');
  if (!fs.existsSync(file)) throw new Error(`${file} missing: run npm run rules:fetch`);
  const cp = JSON.parse(fs.readFileSync(file, 'utf8'))['saxon-he']?.classpath;
  if (!cp || cp.some((j) => !fs.existsSync(j))) throw new Error('Saxon-HE jars missing: run npm run rules:fetch');
  return cp.join(path.delimiter);
}

/** Absolute paths of the official (unpatched) XSLT files of a built Schematron pack, in run order. */
function officialXslt(packId, version, env = process.env) {
  const dir = path.join(rulesDir(env), packId, version);
  const stamp = JSON.parse(fs.readFileSync(path.join(dir, 'pack.json'), 'utf8'));
  if (!stamp.stylesheets) throw new Error(`${packId} ${version} is not a Schematron pack`);
  return stamp.stylesheets.map((s) => path.join(dir, 'files', s.xslt));
}

/**
 * Runs `xslt` with Saxon-HE on `source` (a file, or a directory: every file in it, one compile) into `output`
 * (a file or directory). Resolves with the wall time in milliseconds, JVM start and stylesheet compile included.
 */
function runSaxonHe({ xslt, source, output, timeoutMs = 600_000, env = process.env }) {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      ['-cp', saxonHeClasspath(env), 'net.sf.saxon.Transform', `-s:${source}`, `-xsl:${xslt}`, `-o:${output}`],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, _out, stderr) => {
        if (err) reject(new Error(`Saxon-HE failed: ${stderr.slice(-2000) || err.message}`));
        else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      },
    );
  });
}

module.exports = { saxonHeClasspath, officialXslt, runSaxonHe };
