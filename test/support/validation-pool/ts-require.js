'use strict';
// Worker threads load JavaScript, and the tests run from the TypeScript sources (ts-jest compiles only what jest
// itself loads). This hook compiles each .ts file as a worker requires it, transpile-only with the project's module
// settings, as ts-jest does with isolatedModules.

const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  inlineSourceMap: true,
};

if (!require.extensions['.ts']) {
  require.extensions['.ts'] = (module, filename) => {
    const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      compilerOptions,
      fileName: filename,
    });
    module._compile(outputText, filename);
  };
}
