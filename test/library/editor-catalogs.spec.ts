/**
 * Every string the editor shows comes from a message catalog, so a
 * translation is only a new locales/<lang>/ folder; and each node's help
 * follows Node-RED's help style guide.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { join } from 'path';
import { catalog, editorTypes, lookup, nodeSets, PACK_ROOT, type Catalog, type NodeSet } from '../e2e/support/pack';

const SHARED_EDITOR_JS = join(PACK_ROOT, 'resources', 'dedup-editor.js');

/** The part of an editor file inside <script type="text/html" data-template-name="...">. */
function templates(html: string): string[] {
  return [...html.matchAll(/<script type="text\/html" data-template-name="[^"]+">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
}

/** The registerType scripts of an editor file. */
function definitionScripts(html: string): string[] {
  return [...html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map((m) => m[1]);
}

/** data-i18n keys, without their [attribute] prefixes, namespace-free ones only. */
function i18nKeys(template: string): string[] {
  return [...template.matchAll(/data-i18n="([^"]+)"/g)]
    .flatMap((m) => m[1].split(';'))
    .map((k) => k.replace(/^\[[^\]]+\]/, '').trim())
    .filter((k) => k !== '');
}

/** Literal keys passed to this._(...) / RED._(...) / node._(...). */
function literalTranslationKeys(script: string): string[] {
  // A key built at run time ("dedup-redis.validation." + name) is checked where its parts are known.
  return [...script.matchAll(/\b_\(\s*["']([^"']+)["']\s*[,)]/g)].map((m) => m[1]);
}

function usesKey(set: NodeSet, entries: Catalog, key: string): void {
  // "node-red:..." keys are Node-RED's own catalog.
  if (key.startsWith('node-red:')) return;
  assert.ok(lookup(entries, key) !== undefined, `${set.set}: "${key}" is in ${set.catalog.replace(PACK_ROOT + '/', '')}`);
}

describe('editor strings come from the message catalogs', function () {
  for (const set of nodeSets()) {
    describe(set.set, function () {
      const html = readFileSync(set.html, 'utf8');
      const entries = catalog(set);

      it('has a catalog rooted at the node type, with the palette label of each palette node', function () {
        for (const t of editorTypes(set)) {
          assert.ok(typeof entries[t.type] === 'object', `the catalog has a "${t.type}" section`);
          if (t.category !== 'config') assert.ok(lookup(entries, `${t.type}.paletteLabel`), `${t.type}.paletteLabel`);
        }
      });

      it('resolves every data-i18n key of the edit dialog', function () {
        const keys = templates(html).flatMap(i18nKeys);
        assert.ok(keys.length > 5, 'the dialog is translated through data-i18n');
        for (const key of keys) usesKey(set, entries, key);
      });

      it('resolves every literal key the definition translates (labels, output labels, palette label)', function () {
        for (const key of definitionScripts(html).flatMap(literalTranslationKeys)) usesKey(set, entries, key);
      });

      it('has no hard-coded text in the edit dialog', function () {
        for (const template of templates(html)) {
          const text = template
            .replace(/<style[\s\S]*?<\/style>/g, '')
            .replace(/<[^>]+>/g, ' ')
            .replace(/&nbsp;/g, ' ')
            .trim();
          assert.equal(text, '', `text outside the catalog: "${text.slice(0, 80)}"`);
          for (const [, attribute, value] of template.matchAll(/\b(placeholder|title)="([^"]*)"/g)) {
            // Only example values (addresses, URLs) may be literal: they read the same in every language.
            assert.match(value, /^[\w.:/,\s-]*\d[\w.:/,\s-]*$/, `${attribute}="${value}" should come from the catalog`);
          }
        }
      });

      it('has no English sentence as a string literal in its definition', function () {
        const literals = definitionScripts(html).flatMap((script) => [...script.matchAll(/"([^"\\]*)"|'([^'\\]*)'/g)].map((m) => m[1] ?? m[2]));
        const events = /^(change|keyup|input|focus|blur)( (change|keyup|input|focus|blur))*$/;
        const prose = literals.filter((l) => /[A-Za-z]{2,} [A-Za-z]{2,}/.test(l) && !events.test(l));
        assert.deepEqual(prose, [], 'words meant for people belong in the catalog');
      });
    });
  }

  it('has every validation reason the shared editor helpers give, for each node that uses them', function () {
    const shared = readFileSync(SHARED_EDITOR_JS, 'utf8');
    const declared = /var REASONS = \[([^\]]*)\]/.exec(shared);
    assert.ok(declared, 'dedup-editor.js declares its REASONS');
    const reasons = [...declared[1].matchAll(/"(\w+)"/g)].map((m) => m[1]);
    // Every literal reason given is declared (redisState's are returned as names, also declared).
    for (const [, given] of shared.matchAll(/"(\w+)"/g)) {
      if (/^(positive|wholePositive|ttlShorterThanWindow|redis[A-Z]\w*|property)$/.test(given)) assert.ok(reasons.includes(given), `${given} is in REASONS`);
    }
    for (const [, given] of shared.matchAll(/reason\(this, (?:\w+ \? )?"(\w+)"/g)) assert.ok(reasons.includes(given), `${given} is in REASONS`);
    assert.ok(reasons.length >= 5, `found the reasons: ${reasons.join(', ')}`);
    for (const set of nodeSets()) {
      const html = readFileSync(set.html, 'utf8');
      if (!/TelemetryDedupEditor\.check\./.test(html)) continue;
      const entries = catalog(set);
      for (const t of editorTypes(set)) {
        for (const reason of reasons) usesKey(set, entries, `${t.type}.validation.${reason}`);
        // check.positive("<field>") and check.msgProperty("<field>") name the field by its label.
        for (const [, field] of html.matchAll(/check\.(?:positive|msgProperty)\("(\w+)"/g)) usesKey(set, entries, `${t.type}.label.${field}`);
      }
    }
  });

  it('has every reason of the dedup-redis dialog’s own validators', function () {
    const set = nodeSets().find((s) => s.set === 'dedup-redis');
    assert.ok(set);
    const html = readFileSync(set.html, 'utf8');
    const rules = [...html.matchAll(/rule\("(\w+)"/g)].map((m) => m[1]);
    assert.ok(rules.length >= 5);
    for (const rule of rules) usesKey(set, catalog(set), `dedup-redis.validation.${rule}`);
  });

  it('has no dialog, helper or stylesheet text in resources/dedup-editor.js outside the catalogs', function () {
    const shared = readFileSync(SHARED_EDITOR_JS, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    const literals = [...shared.matchAll(/"([^"\\]*)"/g)].map((m) => m[1]);
    const prose = literals.filter((l) => /^[A-Z][a-z]+ [a-z]+/.test(l));
    assert.deepEqual(prose, []);
  });
});

describe('node help follows the help style guide', function () {
  for (const set of nodeSets()) {
    for (const t of editorTypes(set)) {
      it(`${t.type}: a first paragraph for the tooltip, then ${t.category === 'config' ? 'Details' : 'Inputs, Outputs (one per port), Details, References'}`, function () {
        const help = readFileSync(set.help, 'utf8');
        const section = new RegExp(`<script type="text/html" data-help-name="${t.type}">([\\s\\S]*?)</script>`).exec(help);
        assert.ok(section, `help for ${t.type}`);
        const body = section[1].trim();
        assert.match(body, /^<p>[^<]{20,}/, 'starts with a paragraph of plain text (the palette tooltip)');
        const headings = [...body.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => m[1].trim());
        const expected = t.category === 'config' ? ['Details'] : ['Inputs', 'Outputs', 'Details', 'References'];
        const present = headings.filter((h) => expected.includes(h));
        assert.deepEqual(present, expected, `headings in order: ${headings.join(', ')}`);
        if (t.category !== 'config') {
          const ports = /<ol class="node-ports">([\s\S]*?)<\/ol>/.exec(body);
          assert.ok(ports, 'outputs as <ol class="node-ports">');
          const items = ports[1].match(/<li>/g) ?? [];
          const outputs = Number(/outputs\s*:\s*(\d+)/.exec(readFileSync(set.html, 'utf8'))?.[1]);
          assert.equal(items.length, outputs, `one <li> per output (${outputs})`);
        }
      });
    }
  }
});
