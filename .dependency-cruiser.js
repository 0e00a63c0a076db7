// The layer rules of docs/ARCHITECTURE.md, made executable (`npm run lint`).
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'workflows-are-deterministic',
      comment: 'workflows/ may import @temporalio/workflow, workflows/, src/core and types only',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: ['^workflows/', '^src/core/', '@temporalio/workflow', '@temporalio/common'],
      },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { pathNot: '^src/core/' },
    },
    {
      name: 'api-not-activities-or-worker',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: ['^activities/', '@temporalio/worker', '^node_modules/mongoose'] },
    },
    {
      name: 'activities-not-api-or-workflows',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: ['^api/', '^src/main/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'activities-only-types-from-workflows',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^workflows/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-not-edges',
      comment: 'domain and infrastructure know nothing of the HTTP edge, workflows, activities or composition roots',
      severity: 'error',
      from: { path: '^src/(?!main/)' },
      to: { path: ['^api/', '^workflows/', '^activities/', '^src/main/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'mongoose-only-in-storage',
      severity: 'error',
      from: { pathNot: ['^src/storage/', '^test/'] },
      to: { path: '^node_modules/(mongoose|mongodb)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
