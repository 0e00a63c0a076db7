#!/usr/bin/env node
'use strict';
// Builds the file tree of the production image: what the Dockerfile runs, and what the image test starts processes
// from. Everything the API and the worker read at run time, and nothing else:
//   dist/                     compiled sources, the validation thread script and the prebuilt workflow bundle
//   node_modules/             production dependencies only (npm ci --omit=dev)
//   transforms/               the rules manifest (which packs, pinned by sha256)
//   rules/                    the compiled rule packs (fetched from Maven Central and verified, or copied from a
//                             verified cache with --rules-from)
//   scripts/demo/             the demo documents (the self-check validates the demo invoice)
//   package.json, package-lock.json
//
//   node scripts/image-tree.js <out-dir> [--rules-from <rules-dir>]
// Needs the repository's dev dependencies (tsc, the workflow bundler, xslt3) and, without --rules-from, Maven and
// xmllint (scripts/rules/fetch.js). Start the processes with RULES_CACHE_DIR=<out-dir>/rules and
// TEMPORAL_WORKFLOW_BUNDLE=<out-dir>/dist/workflow-bundle.js.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { REPO_ROOT } = require('./rules/lib/paths');
const { fetchRules } = require('./rules/fetch');

function say(msg) {
  process.stderr.write(`[image-tree] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
}

function copy(rel, out) {
  fs.cpSync(path.join(REPO_ROOT, rel), path.join(out, rel), { recursive: true });
}

async function buildImageTree(outDir, options = {}) {
  const out = path.resolve(outDir);
  fs.mkdirSync(out, { recursive: true });
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  say('compiling');
  run(process.execPath, [tsc, '-p', path.join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', path.join(out, 'dist')]);
  for (const rel of ['package.json', 'package-lock.json', 'transforms/rules-manifest.json', 'scripts/demo'])
    copy(rel, out);
  say('installing production dependencies');
  const quiet = ['--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  try {
    run('npm', ['ci', ...quiet], { cwd: out });
  } catch (e) {
    // A registry mirror without other platforms' optional binaries makes `npm ci` refuse the lock file (.ci/run).
    say(`npm ci failed (${e.message}); installing from the same lock file with npm install --no-save`);
    run('npm', ['install', '--no-save', ...quiet], { cwd: out });
  }
  // Bundled from the compiled tree, whose imports resolve against the production dependencies just installed.
  const bundle = path.join(out, 'dist', 'workflow-bundle.js');
  run(process.execPath, [path.join(REPO_ROOT, 'scripts', 'build-workflow-bundle.js'), bundle], {
    env: { ...process.env, WORKFLOWS_DIST: path.join(out, 'dist') },
  });
  const rules = path.join(out, 'rules');
  if (options.rulesFrom) {
    say(`copying the rule packs from ${options.rulesFrom}`);
    fs.cpSync(path.resolve(options.rulesFrom), rules, {
      recursive: true,
      filter: (src) => path.basename(src) !== '.lock',
    });
  } else {
    say('fetching and compiling the rule packs');
    await fetchRules({ env: { ...process.env, RULES_CACHE_DIR: rules } });
  }
  say(`ready: ${out}`);
  return out;
}

module.exports = { buildImageTree };

if (require.main === module) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'rules-from': { type: 'string' } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: node scripts/image-tree.js <out-dir> [--rules-from <rules-dir>]\n');
    process.exit(2);
  }
  buildImageTree(positionals[0], { rulesFrom: values['rules-from'] }).catch((e) => {
    say(`failed: ${e.message}`);
    process.exit(1);
  });
}
