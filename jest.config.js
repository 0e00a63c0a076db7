// Three projects so `npm run test:unit` stays fast and server-backed suites share one set of servers.
// ts-jest transpiles only (isolatedModules in tsconfig); `tsc -p tsconfig.json` in `npm test` is the type gate.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }];
const base = {
  testEnvironment: 'node',
  // dist/ holds compiled copies (and package.json); jest must only see the sources.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: { '^.+\\.ts$': tsJest },
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
