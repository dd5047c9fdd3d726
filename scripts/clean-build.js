#!/usr/bin/env node
'use strict';
/**
 * Removes what tsc wrote into nodes/ before it writes again. tsc never
 * deletes the output of a source that moved or went away, and npm pack
 * takes everything in nodes/, so a module moved in src/ would otherwise
 * ship twice (and could be loaded from its old place). Only .js and
 * .js.map files are removed: the editor files, locales and icons in
 * nodes/ are sources, and none of them is JavaScript.
 */
const { readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const NODES = join(__dirname, '..', 'nodes');

function clean(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      clean(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
    } else if (/\.js(\.map)?$/.test(entry.name)) {
      rmSync(path);
    }
  }
}

clean(NODES);
