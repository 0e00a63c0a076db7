'use strict';
// jest runs the slowest test files first so that no worker is left with a long file while the other idles; it knows
// which are slow from the durations it cached on an earlier run, and without them (a fresh machine, CI) falls back to
// file size. Several of the slowest unit files are small (a few lines that validate the whole corpus), so by size they
// start last and one worker runs them alone at the end. Without a cached duration, these files count with the time
// they took on a 2-core machine (in band, 2026-11); every other file is ordered as jest orders it.

const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Seconds per file, for files that take ten seconds or more. */
const KNOWN_SECONDS = {
  // The agreement gate, in two files so both workers share it (about 50 ms of SaxonJS per variant, 5,000 each).
  'test/unit/validation/compiled-agreement.test.ts': 500,
  'test/unit/validation/compiled-agreement-variants.test.ts': 400,
  'test/unit/en16931/round-trip.test.ts': 116,
  'test/unit/validation/en16931-unit-suite.test.ts': 91,
  'test/unit/validation/corpus.test.ts': 87,
  'test/unit/validation/xsd-reference.test.ts': 60,
  'test/unit/validation/pool.test.ts': 35,
  'test/unit/formats/hostile-detection.test.ts': 26,
  'test/unit/validation/facturx-extended-patch.test.ts': 25,
  'test/unit/transform/source-tree-equivalence.test.ts': 23,
  'test/unit/transform/ebinterface.test.ts': 14,
  'test/unit/transform/facturx-pdf.test.ts': 13,
};

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const known = (test) => {
      if (this.time(test) != null) return undefined;
      const s = KNOWN_SECONDS[path.relative(ROOT, test.path).split(path.sep).join('/')];
      return s === undefined ? undefined : s * 1000;
    };
    // Only files without a cached duration move, longest first, to where jest starts the files it has no duration for:
    // after the files that failed last time, before all others.
    const hinted = sorted.filter((t) => known(t) !== undefined).sort((a, b) => known(b) - known(a));
    const rest = sorted.filter((t) => known(t) === undefined);
    const at = rest.findIndex((t) => !this.hasFailed(t));
    return at === -1 ? [...rest, ...hinted] : [...rest.slice(0, at), ...hinted, ...rest.slice(at)];
  }
}

module.exports = SlowFirstSequencer;
