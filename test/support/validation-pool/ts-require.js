'use strict';
// Worker threads load JavaScript, and the tests run from the TypeScript sources (ts-jest compiles only what jest
// itself loads). This hook compiles each .ts file as a worker requires it, transpile-only with the project's module
// settings, as ts-jest does with isolatedModules.
//
// Every worker a test starts would otherwise load the TypeScript compiler and transpile the whole validation and
// transformation source tree again (seconds per worker); the output is kept on disk, keyed by the compiler's version,
// these options, the file's path and its content, in the tool cache (INVOICE_GATEWAY_CACHE, else
// ~/.cache/invoice-gateway). A changed source has a new key, so a stale entry is never used.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CACHE_DIR = path.join(
  process.env.INVOICE_GATEWAY_CACHE || path.join(os.homedir(), '.cache', 'invoice-gateway'),
  'ts-require',
);

let ts; // loaded on the first cache miss only
let compilerOptions;
let salt;

function compiler() {
  if (!ts) {
    ts = require('typescript');
    compilerOptions = {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      inlineSourceMap: true,
    };
  }
  return ts;
}

/** The compiler's version without loading the compiler: part of every key. */
function cacheSalt() {
  if (salt === undefined) {
    const { version } = JSON.parse(fs.readFileSync(require.resolve('typescript/package.json'), 'utf8'));
    salt = `typescript ${version}; commonjs es2022 esModuleInterop inlineSourceMap\0`;
  }
  return salt;
}

function transpile(source, filename) {
  const key = crypto
    .createHash('sha256')
    .update(cacheSalt())
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
  const file = path.join(CACHE_DIR, `${key}.js`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // not cached yet
  }
  const { outputText } = compiler().transpileModule(source, { compilerOptions, fileName: filename });
  try {
    // Written under a unique name, then renamed: a worker reading the entry sees all of it or none of it.
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, outputText);
    fs.renameSync(tmp, file);
  } catch {
    // an unwritable cache only costs the next worker the same compilation
  }
  return outputText;
}

if (!require.extensions['.ts']) {
  require.extensions['.ts'] = (module, filename) => {
    module._compile(transpile(fs.readFileSync(filename, 'utf8'), filename), filename);
  };
}
