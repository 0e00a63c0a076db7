// Three projects so `npm run test:unit` stays fast and server-backed suites share one set of servers.
// ts-jest transpiles only (isolatedModules in tsconfig); `npm run typecheck` is the type gate.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }];
const base = { testEnvironment: 'node', transform: { '^.+\\.ts$': tsJest }, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...base, displayName: 'api', testMatch: ['<rootDir>/test/api/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/{workflows,integration}/**/*.test.ts'],
      testTimeout: 120000,
    },
  ],
};
