import { createDocumentActivities, type DocumentActivityDeps } from './documents.activities';
import { withFailureMapping } from './to-application-failure';

export type ActivityDeps = DocumentActivityDeps;

/** Every activity the worker registers, built from its dependencies (no globals). */
export function createActivities(deps: ActivityDeps) {
  return withFailureMapping({
    ...createDocumentActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
