'use strict';
// A worker entry that fails while loading, as a missing module or a syntax error in a build would.
throw new Error('worker entry failed to load (test)');
