#!/usr/bin/env node
'use strict';
// Writes docs/configuration.md from the config schema's descriptions and defaults (`npm run docs:config`,
// after a build). A unit test fails when the file and the schema disagree.
const fs = require('node:fs');
const path = require('node:path');
const { renderConfigurationDoc } = require(path.join(__dirname, '../dist/src/config/config-doc.js'));
fs.writeFileSync(path.join(__dirname, '../docs/configuration.md'), renderConfigurationDoc());
console.log('docs/configuration.md written');
