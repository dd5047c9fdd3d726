/**
 * Every string the editor shows comes from a message catalog, so a
 * translation is only a new locales/<lang>/ folder; and each node's help
 * follows Node-RED's help style guide.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { join } from 'path';
import { catalog, editorTypes, lookup, nodeSets, PACK_ROOT, type Catalog, type NodeSet } from '../../e2e/support/pack';

const SHARED_EDITOR_JS = join(PACK_ROOT, 'resources', 'dedup-editor.js');

/** The dialogs' State section as dedup-editor.js writes it (STATE_SECTION), `{type}` and `{cap}` still in it. */
function stateSection(shared: string): string {
  const declared = /var STATE_SECTION = \[([\s\S]*?)\]\.join\(/.exec(shared);
  assert.ok(declared, 'dedup-editor.js declares its STATE_SECTION');
  return [...(declared[1] ?? '').matchAll(/'([^'\\]*)'/g)].map((m) => m[1] ?? '').join('\n');
}

/**
 * The part of an editor file inside <script type="text/html" data-template-name="...">,
 * as the editor shows it: with the State section where the template holds its placeholder.
 */
function templates(html: string): string[] {
  const shared = readFileSync(SHARED_EDITOR_JS, 'utf8');
  return [...html.matchAll(/<script type="text\/html" data-template-name="([^"]+)">([\s\S]*?)<\/script>/g)].map(([, type = '', template = '']) =>
    template.replace(/<div class="dedup-state-section" data-cap="(\w+)"><\/div>/g, (_placeholder, cap: string) =>
      stateSection(shared).replace(/\{type\}/g, type).replace(/\{cap\}/g, cap)),
  );
}

/** The registerType scripts of an editor file. */
function definitionScripts(html: string): string[] {
  return [...html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
}

/** data-i18n keys, without their [attribute] prefixes, namespace-free ones only. */
function i18nKeys(template: string): string[] {
  return [...template.matchAll(/data-i18n="([^"]+)"/g)]
    .flatMap((m) => (m[1] ?? '').split(';'))
    .map((k) => k.replace(/^\[[^\]]+\]/, '').trim())
    .filter((k) => k !== '');
}

/** The text of a call's first argument, from just after its "(": up to a top-level "," or ")". */
function firstArgument(text: string, from: number): string {
  let depth = 0;
  let quote = '';
  for (let at = from; at < text.length; at++) {
    const ch = text[at] as string;
    if (quote !== '') {
      if (ch === '\\') at++;
      else if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      if (depth === 0) return text.slice(from, at);
      depth--;
    } else if (ch === ',' && depth === 0) return text.slice(from, at);
  }
  return text.slice(from);
}

/** The text between the "{" at or after `from` and its matching "}". */
function bracedBlock(text: string, from: number): string {
  const open = text.indexOf('{', from);
  if (open < 0) return '';
  let depth = 0;
  for (let at = open; at < text.length; at++) {
    if (text[at] === '{') depth++;
    else if (text[at] === '}' && --depth === 0) return text.slice(open + 1, at);
  }
  return text.slice(open + 1);
}

const stringLiterals = (text: string): string[] => [...text.matchAll(/"([^"\\]*)"|'([^'\\]*)'/g)].map((m) => (m[1] ?? m[2]) as string);

/** The literals that can be a key's ending: joined on with +, or a branch of a ?: (not one compared with ===). */
const suffixLiterals = (text: string): string[] =>
  [...text.matchAll(/[?:+]\s*(?:"([^"\\]*)"|'([^'\\]*)')/g)].map((m) => (m[1] ?? m[2]) as string);

/** A catalog key the editor translates, or a section whose keys are chosen at run time. */
interface KeyUse {
  key: string;
  /** Only the section is known ("dedup-redis.validation." + name): it must exist. */
  section: boolean;
}

/**
 * The t("...") keys of a shared helper in dedup-editor.js that takes the
 * node's translator as a parameter named t (e.g. measuresList(node, t)).
 */
function sharedTranslatorKeys(shared: string, helper: string): string[] {
  const declaration = new RegExp(`function ${helper}\\(([^)]*)\\)`).exec(shared);
  if (declaration === null || !/\bt\b/.test(declaration[1] as string)) return [];
  const body = bracedBlock(shared, declaration.index);
  return [...body.matchAll(/\bt\(\s*"([^"]+)"/g)].map((m) => m[1] as string);
}

/**
 * Every key an editor file's definitions translate, derived from its code:
 * - `_("<type>.key")`, and each literal key of an expression as the first
 *   argument (`_(index === 0 ? "<type>.outputs.a" : "<type>.outputs.b")`);
 * - a key prefix joined to literals (`_("<type>.label." + (x ? "a" : "b"))`)
 *   gives prefix + each literal; joined to a variable, only the section;
 * - a translator wrapper `var t = function (key) { return node._("<type>." + key) }`:
 *   its calls `t("label.x")`, and the t("...") keys of the shared helpers it
 *   is handed to (`E.measuresList(node, t)`).
 */
function translatedKeys(set: NodeSet, html: string, shared: string): KeyUse[] {
  const types = editorTypes(set).map((t) => t.type);
  const isKey = (text: string): boolean => types.some((type) => text.startsWith(`${type}.`));
  const uses: KeyUse[] = [];
  for (const script of definitionScripts(html)) {
    for (const call of script.matchAll(/\b_\(/g)) {
      const argument = firstArgument(script, call.index + call[0].length);
      const literals = stringLiterals(argument);
      const others = suffixLiterals(argument).filter((l) => !isKey(l));
      for (const key of literals.filter(isKey)) {
        if (!key.endsWith('.')) uses.push({ key, section: false });
        else if (others.length === 0) uses.push({ key: key.slice(0, -1), section: true });
        else for (const suffix of others) uses.push({ key: key + suffix, section: false });
      }
    }
    for (const wrapper of script.matchAll(/\bvar (\w+) = function \((\w+)[^)]*\) \{\s*return \w+\._\(\s*"([^"]+\.)"\s*\+\s*(\w+)\b/g)) {
      const [, name, parameter, prefix, joined] = wrapper as unknown as [string, string, string, string, string];
      if (joined !== parameter) continue;
      for (const call of script.matchAll(new RegExp(`\\b${name}\\(\\s*"([^"]+)"`, 'g'))) uses.push({ key: prefix + (call[1] as string), section: false });
      for (const handed of script.matchAll(new RegExp(`\\bE\\.(\\w+)\\([^()]*\\b${name}\\s*\\)`, 'g'))) {
        const keys = sharedTranslatorKeys(shared, handed[1] as string);
        assert.ok(keys.length > 0, `${set.set}: E.${handed[1]} is handed the translator ${name} but no t("...") key was found in it`);
        for (const key of keys) uses.push({ key: prefix + key, section: false });
      }
    }
  }
  return uses;
}

/** The registerType options object of a type, as text. */
function registration(html: string, type: string): string {
  const at = html.search(new RegExp(`registerType\\(\\s*["']${type}["']`));
  return at < 0 ? '' : bracedBlock(html, at);
}

/** A catalog section (an object) by dotted key, or undefined. */
function section(entries: Catalog, key: string): Catalog | undefined {
  let entry: string | Catalog | undefined = entries;
  for (const part of key.split('.')) entry = entry !== undefined && typeof entry === 'object' ? entry[part] : undefined;
  return entry !== undefined && typeof entry === 'object' ? entry : undefined;
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

      it('has the State section once in the dialog of a node with a store, with its own cap', function () {
        const cap: Record<string, string> = { 'sliding-window-dedup': 'maxAssets', 'sensor-reconnect-dedup': 'maxKeys' };
        const dialogs = templates(html);
        const stores = dialogs.filter((template) => template.includes('id="node-input-store"'));
        if (cap[set.set] === undefined) {
          assert.deepEqual(stores, [], 'no store, no State section');
          return;
        }
        assert.equal(stores.length, 1);
        const dialog = stores[0] as string;
        for (const id of ['store', 'redis', 'ttlSeconds', cap[set.set] as string, 'persistSeconds', 'onStoreError']) {
          assert.equal(dialog.split(`id="node-input-${id}"`).length - 1, 1, `one #node-input-${id}`);
        }
        assert.doesNotMatch(dialog, /\{type\}|\{cap\}|dedup-state-section/, 'the placeholder and its fields are filled in');
      });

      it('resolves every data-i18n key of the edit dialog', function () {
        const keys = templates(html).flatMap(i18nKeys);
        assert.ok(keys.length > 5, 'the dialog is translated through data-i18n');
        for (const key of keys) usesKey(set, entries, key);
      });

      it('resolves every key the definition translates (palette label, labels, port labels, placeholders)', function () {
        const uses = translatedKeys(set, html, readFileSync(SHARED_EDITOR_JS, 'utf8'));
        // At least the palette label and one label per port of each palette
        // node, one key for a config node: a parser that finds nothing fails.
        let minimum = 0;
        for (const t of editorTypes(set)) {
          const options = registration(html, t.type);
          minimum += t.category === 'config' ? 1 : 1 + Number(/\binputs\s*:\s*(\d+)/.exec(options)?.[1] ?? 0) + Number(/\boutputs\s*:\s*(\d+)/.exec(options)?.[1] ?? 0);
        }
        assert.ok(minimum > 0, 'the file registers a type');
        assert.ok(uses.length >= minimum, `found ${uses.length} translated keys, expected at least ${minimum}: ${uses.map((u) => u.key).join(', ')}`);
        for (const use of uses) {
          if (use.section) assert.ok(section(entries, use.key), `${set.set}: the section "${use.key}" is in ${set.catalog.replace(PACK_ROOT + '/', '')}`);
          else usesKey(set, entries, use.key);
        }
      });

      it('labels every port: the input, and each output with a label of its own, from the catalog', function () {
        for (const t of editorTypes(set)) {
          if (t.category === 'config') continue;
          const options = registration(html, t.type);
          assert.ok(options !== '', `the registerType options of ${t.type}`);
          for (const [property, ports] of [
            ['inputLabels', Number(/\binputs\s*:\s*(\d+)/.exec(options)?.[1] ?? 0)],
            ['outputLabels', Number(/\boutputs\s*:\s*(\d+)/.exec(options)?.[1] ?? 0)],
          ] as const) {
            if (ports === 0) continue;
            const at = options.search(new RegExp(`\\b${property}\\s*:\\s*function`));
            assert.ok(at >= 0, `${t.type} has ${property} for its ${ports} port(s)`);
            const keys = [...new Set(stringLiterals(bracedBlock(options, at)).filter((l) => l.startsWith(`${t.type}.`)))];
            assert.ok(keys.length >= ports, `${t.type}.${property}: ${keys.length} distinct catalog keys for ${ports} port(s): ${keys.join(', ')}`);
            for (const key of keys) usesKey(set, entries, key);
          }
        }
      });

      it('has no hard-coded text in the edit dialog', function () {
        for (const template of templates(html)) {
          const text = template
            .replace(/<style[\s\S]*?<\/style>/g, '')
            .replace(/<[^>]+>/g, ' ')
            .replace(/&nbsp;/g, ' ')
            .trim();
          assert.equal(text, '', `text outside the catalog: "${text.slice(0, 80)}"`);
          for (const [, attribute = '', value = ''] of template.matchAll(/\b(placeholder|title)="([^"]*)"/g)) {
            // Only example values (addresses, URLs) may be literal: they read the same in every language.
            assert.match(value, /^[\w.:/,\s-]*\d[\w.:/,\s-]*$/, `${attribute}="${value}" should come from the catalog`);
          }
        }
      });

      it('has no English sentence as a string literal in its definition', function () {
        const literals = definitionScripts(html).flatMap((script) => [...script.matchAll(/"([^"\\]*)"|'([^'\\]*)'/g)].map((m) => m[1] ?? m[2] ?? ''));
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
    const reasons = [...(declared[1] ?? '').matchAll(/"(\w+)"/g)].map((m) => m[1] ?? '');
    // Every literal reason given is declared (redisState's are returned as names, also declared).
    for (const [, given = ''] of shared.matchAll(/"(\w+)"/g)) {
      if (/^(positive|wholePositive|ttlShorterThanWindow|redis[A-Z]\w*|property)$/.test(given)) assert.ok(reasons.includes(given), `${given} is in REASONS`);
    }
    for (const [, given = ''] of shared.matchAll(/reason\(this, (?:\w+ \? )?"(\w+)"/g)) assert.ok(reasons.includes(given), `${given} is in REASONS`);
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

  it('gives every shared validator two parameters: Node-RED takes a returned reason only from a 3.x validator, told by its arity', function () {
    const shared = readFileSync(SHARED_EDITOR_JS, 'utf8');
    const checks = bracedBlock(shared, shared.indexOf('var check = {'));
    const validators = [...checks.matchAll(/function \(value\b[^)]*\)/g)].map((m) => m[0]);
    assert.ok(validators.length >= 10, `found the validators: ${validators.join(', ')}`);
    for (const validator of validators) assert.match(validator, /^function \(value, \w+\)$/);
  });

  it('has every reason of the dedup-redis dialog’s own validators', function () {
    const set = nodeSets().find((s) => s.set === 'dedup-redis');
    assert.ok(set);
    const html = readFileSync(set.html, 'utf8');
    const rules = [...html.matchAll(/rule\("(\w+)"/g)].map((m) => m[1] ?? '');
    assert.ok(rules.length >= 5);
    for (const rule of rules) usesKey(set, catalog(set), `dedup-redis.validation.${rule}`);
  });

  it('has no dialog, helper or stylesheet text in resources/dedup-editor.js outside the catalogs', function () {
    const shared = readFileSync(SHARED_EDITOR_JS, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    const literals = [...shared.matchAll(/"([^"\\]*)"/g)].map((m) => m[1] ?? '');
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
        const body = (section[1] ?? '').trim();
        assert.match(body, /^<p>[^<]{20,}/, 'starts with a paragraph of plain text (the palette tooltip)');
        const headings = [...body.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => (m[1] ?? '').trim());
        const expected = t.category === 'config' ? ['Details'] : ['Inputs', 'Outputs', 'Details', 'References'];
        const present = headings.filter((h) => expected.includes(h));
        assert.deepEqual(present, expected, `headings in order: ${headings.join(', ')}`);
        if (t.category !== 'config') {
          // The guide: several outputs each get an item of an ol.node-ports; a single
          // output is described directly, in a dl.message-properties under Outputs.
          const outputs = Number(/outputs\s*:\s*(\d+)/.exec(readFileSync(set.html, 'utf8'))?.[1]);
          const ports = /<ol class="node-ports">([\s\S]*?)<\/ol>/.exec(body);
          if (outputs > 1) {
            assert.ok(ports, 'outputs as <ol class="node-ports">');
            const items = (ports[1] ?? '').match(/<li>/g) ?? [];
            assert.equal(items.length, outputs, `one <li> per output (${outputs})`);
          } else {
            assert.equal(ports, null, 'a single output needs no list of ports');
            assert.match(body, /<h3>Outputs<\/h3>\s*<dl class="message-properties">/, 'the single output described in a dl.message-properties');
          }
        }
      });
    }
  }
});
