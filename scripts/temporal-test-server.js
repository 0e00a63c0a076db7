#!/usr/bin/env node
'use strict';
// Temporal's time-skipping test server for the workflow tests, without the internet: @temporalio/testing would
// download a native build from GitHub; we resolve the Java implementation (tools/temporal-test-server) from Maven
// Central into the cache once and write a launcher the SDK starts as an `existing-path` executable:
//   <cache>/temporal-test-server/classpath.txt   the resolved dependencies
//   <cache>/temporal-test-server/test-server     the launcher (java -cp … io.temporal.testserver.TestServer <port>)
// `node scripts/temporal-test-server.js [--quiet]` prepares it and prints the launcher's path.
const fs = require('node:fs');
const path = require('node:path');
const { ensureJavaHarness } = require('./lib/java-harness');
const { cacheDir } = require('./lib/services');
const { ensureTool } = require('./rules/lib/system-tools');

const NAME = 'temporal-test-server';
const MAIN_CLASS = 'io.temporal.testserver.TestServer';

/** Single-quoted for sh: the cache path may hold spaces. */
function shQuote(s) {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** The launcher's path; resolves the server from Maven Central when the cache lacks it. */
function ensureTemporalTestServer(env = process.env, log = (m) => process.stderr.write(`${m}\n`)) {
  const { classpath } = ensureJavaHarness(
    NAME,
    'Temporal test server: resolving it from Maven Central (once)',
    env,
    log,
  );
  const java = ensureTool('java', 'default-jre-headless', log);
  const launcher = path.join(cacheDir(env), NAME, 'test-server');
  // The SDK passes the port as the only argument; TestServer takes it the same way.
  const script = `#!/bin/sh\nexec ${shQuote(java)} -cp ${shQuote(classpath)} ${MAIN_CLASS} "$@"\n`;
  if (!fs.existsSync(launcher) || fs.readFileSync(launcher, 'utf8') !== script) {
    fs.writeFileSync(`${launcher}.tmp`, script, { mode: 0o755 });
    fs.renameSync(`${launcher}.tmp`, launcher);
  }
  return launcher;
}

module.exports = { ensureTemporalTestServer };

if (require.main === module) {
  try {
    const launcher = ensureTemporalTestServer();
    if (!process.argv.includes('--quiet')) process.stdout.write(`${launcher}\n`);
  } catch (e) {
    process.stderr.write(`${e.stderr ? e.stderr.toString() : ''}${e.stdout ? e.stdout.toString() : ''}${e.message}\n`);
    process.exit(1);
  }
}
