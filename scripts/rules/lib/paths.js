'use strict';
// Where fetched rule packs live. The same rule is implemented by src/config/load-config.ts (validation.rulesDir);
// a unit test keeps the two in step.

const os = require('node:os');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const MANIFEST_FILE = path.join(REPO_ROOT, 'transforms', 'rules-manifest.json');

/** RULES_CACHE_DIR, else <INVOICE_GATEWAY_CACHE or ~/.cache/invoice-gateway>/rules. */
function rulesDir(env = process.env) {
  if (env.RULES_CACHE_DIR) return path.resolve(env.RULES_CACHE_DIR);
  const cache = env.INVOICE_GATEWAY_CACHE || path.join(os.homedir(), '.cache', 'invoice-gateway');
  return path.resolve(cache, 'rules');
}

module.exports = { REPO_ROOT, MANIFEST_FILE, rulesDir };
