#!/usr/bin/env node
'use strict';
// Command line for the local servers:
//   node scripts/services.js ensure [--all]
//   node scripts/services.js start [--persistent DIR] [--ui] [--temporal-port N] [--ui-port N] [--mongodb-port N]
//                                  [--taxsim] [--taxsim-port N]
// `start` prints shell `export` lines on stdout (logs go to stderr) and runs until SIGINT/SIGTERM.

const path = require('node:path');
const services = require('./lib/services');

const USAGE = `usage:
  node scripts/services.js ensure [--all]
      build the tools this machine needs (--all: the Temporal CLI, the FerretDB wrapper and PostgreSQL regardless)
  node scripts/services.js start [--persistent DIR] [--ui] [--temporal-port N] [--ui-port N] [--mongodb-port N]
                                 [--taxsim] [--taxsim-port N]
      start Temporal and the database (--taxsim: and the reference tax authority, default port 8090, built by
      \`npm run build\`; AS4 with the PEPPOL_* settings of this environment, else its HTTP API only), print export
      lines, stay in the foreground until signalled; LOCAL_DB_BACKEND=postgres|sqlite picks FerretDB's backend`;

function parseArgs(argv) {
  const out = { cmd: argv[0], flags: {} };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const needsValue = ['--persistent', '--temporal-port', '--ui-port', '--mongodb-port', '--taxsim-port'];
    if (needsValue.includes(a)) {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      out.flags[a.slice(2)] = v;
    } else if (a === '--ui' || a === '--all' || a === '--taxsim') {
      out.flags[a.slice(2)] = true;
    } else if (a === '-h' || a === '--help') {
      out.cmd = 'help';
    } else {
      throw new Error(`unknown argument: ${a}`);
    }
  }
  return out;
}

function port(value, name) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--${name} must be a port number`);
  return n;
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
  if (args.cmd === 'ensure') {
    const tools = await services.ensureTools({ all: Boolean(args.flags.all) });
    for (const [name, p] of Object.entries(tools)) process.stderr.write(`${name}: ${p}\n`);
    return 0;
  }
  if (args.cmd === 'start') {
    const t0 = Date.now();
    const s = await services.startServices({
      persistentDir: args.flags.persistent ? path.resolve(args.flags.persistent) : undefined,
      ui: Boolean(args.flags.ui),
      ports: {
        temporal: port(args.flags['temporal-port'], 'temporal-port'),
        temporalUi: port(args.flags['ui-port'], 'ui-port'),
        mongodb: port(args.flags['mongodb-port'], 'mongodb-port'),
      },
      handleSignals: false,
      ...(args.flags.taxsim ? { taxsim: { port: port(args.flags['taxsim-port'], 'taxsim-port') } } : {}),
    });
    process.stdout.write(`export TEMPORAL_ADDRESS=${s.temporalAddress}\nexport MONGODB_URI=${s.mongodbUri}\n`);
    if (s.taxsimUrl) process.stdout.write(`export TAXSIM_URL=${s.taxsimUrl}\n`);
    if (s.temporalUiUrl) process.stderr.write(`Temporal UI: ${s.temporalUiUrl}\n`);
    process.stderr.write(`services up in ${Date.now() - t0} ms (logs in ${s.logDir}); Ctrl-C to stop\n`);
    await new Promise((resolve) => {
      const onSignal = (sig) => {
        process.stderr.write(`${sig}: stopping\n`);
        resolve();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
    });
    await s.stop();
    return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return args.cmd === 'help' ? 0 : 2;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`services: ${err && err.stack ? err.message : err}\n`);
    process.exit(1);
  },
);
