// Three projects so `npm run test:unit` stays fast and server-backed suites share one set of servers.
// ts-jest transpiles only (isolatedModules in tsconfig); `tsc -p tsconfig.json` in `npm test` is the type gate.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }];
// ESM-only packages (archiver 8 and its own dependencies) are compiled to CommonJS for jest's loader, which does
// not use Node's require(esm); the built code loads them with require(esm) (Node >= 20.19).
const ESM_PACKAGES = ['archiver', 'zip-stream', 'compress-commons', 'crc32-stream', 'is-stream'];
const ESM_ONLY = `/node_modules/(${ESM_PACKAGES.join('|')})/.+\\.js$`;
const esmToCjs = [
  'ts-jest',
  { tsconfig: { allowJs: true, module: 'commonjs', esModuleInterop: true }, diagnostics: false },
];
const base = {
  testEnvironment: 'node',
  // dist/ holds compiled copies (and package.json); jest must only see the sources.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: { '^.+\\.ts$': tsJest, [ESM_ONLY]: esmToCjs },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  // Slow files first, also on a machine without jest's cached durations (see the file).
  testSequencer: '<rootDir>/test/support/jest/sequencer.js',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...base,
      displayName: 'api',
      testMatch: ['<rootDir>/test/api/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/jest/api-timeout.ts'],
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/{workflows,integration}/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/jest/integration-timeout.ts'],
    },
  ],
};
