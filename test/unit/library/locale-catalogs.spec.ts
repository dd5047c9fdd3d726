/**
 * The translations (nodes/locales/de, ja) hold everything en-US holds: every
 * catalog and help file, every key with the same {{placeholders}}, no key
 * en-US no longer has, every value translated, and each help file the same
 * document (sections, Inputs / Outputs / Details / References, one item per
 * output, the same code and links). A failure lists every key at once, so
 * after a merge it names all the keys still to translate.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { LOCALES_DIR, nodeRedTranslator } from '../../support/node-red-i18n';

/** The languages the pack ships besides en-US. */
const LANGUAGES = ['de', 'ja'] as const;

/** The help headings of Node-RED's core nodes in each language (its de and ja help files use these). */
const HEADINGS: Record<(typeof LANGUAGES)[number], Record<string, string>> = {
  de: { Inputs: 'Eingangsdaten', Outputs: 'Ausgangsdaten', Details: 'Details', References: 'Referenzen' },
  ja: { Inputs: '入力', Outputs: '出力', Details: '詳細', References: '参照' },
};

/**
 * Words that stay as they are in a translation: product and protocol names,
 * units, and loanwords Node-RED's own de catalog uses (Name, Host, Port,
 * Server). A value may equal its en-US text only if it is made of these,
 * placeholders, numbers, and code-like tokens (msg paths, node types).
 */
const STAY = new Set(
  'Redis TTL URL TLS ACL Lua JSON JSONata CSV JSONL SHA UTC ISO README MB KB ms s m h d min max Host Port Server Cluster Sentinels Name Heartbeat Lease Dedup dedup'.split(' '),
);

type Catalog = { [key: string]: string | Catalog };

const en = (file: string): string => join(LOCALES_DIR, 'en-US', file);
const catalogFiles = (): string[] => readdirSync(join(LOCALES_DIR, 'en-US')).filter((f) => f.endsWith('.json')).sort();
const helpFiles = (): string[] => readdirSync(join(LOCALES_DIR, 'en-US')).filter((f) => f.endsWith('.html')).sort();

function leaves(entries: Catalog, prefix = ''): Map<string, string> {
  const found = new Map<string, string>();
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value === 'string') found.set(prefix + key, value);
    else for (const [k, v] of leaves(value, `${prefix}${key}.`)) found.set(k, v);
  }
  return found;
}

const readCatalog = (path: string): Map<string, string> => leaves(JSON.parse(readFileSync(path, 'utf8')) as Catalog);

/** The {{placeholders}} of a text: i18next's __name__ (Node-RED's interpolation) and the ${ENV_VAR} written out for users. */
const placeholders = (text: string): string[] => [...text.matchAll(/__\w+?__|\$\{\w+\}/g)].map((m) => m[0]).sort();

/** True when nothing in the text needs translating: only STAY words, placeholders, numbers, code and property types. */
function nothingToTranslate(text: string): boolean {
  const rest = text
    .replace(/<code>[\s\S]*?<\/code>/g, ' ')
    .replace(/<span class="property-type">[\s\S]*?<\/span>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/__\w+?__|\$\{\w+\}|&\w+;/g, ' ');
  return [...rest.matchAll(/\p{L}[\p{L}\w.\-]*/gu)].every(([word]) => STAY.has(word) || /[._\-\d]/.test(word));
}

const squash = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The help sections of a file, by node type. */
function helpSections(html: string): Map<string, string> {
  return new Map([...html.matchAll(/<script type="text\/html" data-help-name="([^"]+)">([\s\S]*?)<\/script>/g)].map((m) => [m[1] as string, m[2] as string]));
}

/** The parts of a help section a translation must keep one for one. */
function outline(section: string): { headings: string[]; counts: Record<string, number>; code: string[]; links: string[]; texts: string[] } {
  const counts: Record<string, number> = {};
  for (const tag of ['p', 'dt', 'dd', 'li', 'ol', 'dl', 'ul']) counts[tag] = (section.match(new RegExp(`<${tag}[\\s>]`, 'g')) ?? []).length;
  // A list item's own text: up to its nested list of properties. A property's
  // name (a dt before its type) is a msg property: it stays as it is.
  const texts = [...section.matchAll(/<(p|dt|dd|li)(?:\s[^>]*)?>([\s\S]*?)(?=<\/\1>|<dl)/g)].map((m) => {
    const text = squash(m[2] ?? '');
    return m[1] === 'dt' ? text.replace(/^[^<]*(?=<span class="property-type">)/, '') : text;
  });
  return {
    headings: [...section.matchAll(/<h3>([^<]*)<\/h3>/g)].map((m) => (m[1] ?? '').trim()),
    counts,
    code: [...section.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => squash(m[1] ?? '')).sort(),
    links: [...section.matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string).sort(),
    texts,
  };
}

describe('translations hold everything en-US holds', function () {
  it(`ships en-US and ${LANGUAGES.join(', ')}, each with every catalog and help file of en-US`, function () {
    assert.deepEqual(readdirSync(LOCALES_DIR).sort(), ['en-US', ...LANGUAGES].sort());
    assert.ok(catalogFiles().length >= 5 && helpFiles().length >= 4, 'en-US has the catalogs and help files');
    const missing = LANGUAGES.flatMap((lang) => [...catalogFiles(), ...helpFiles()].filter((f) => !existsSync(join(LOCALES_DIR, lang, f))).map((f) => `${lang}/${f}`));
    assert.deepEqual(missing, [], 'files of en-US missing from a translation');
  });

  for (const lang of LANGUAGES) {
    describe(lang, function () {
      for (const file of catalogFiles()) {
        describe(file, function () {
          const source = readCatalog(en(file));
          const target = (): Map<string, string> => readCatalog(join(LOCALES_DIR, lang, file));

          it('has every key of en-US (a plural form included)', function () {
            const translated = target();
            const missing = [...source.keys()].filter((key) => !translated.has(key));
            assert.deepEqual(missing, [], `keys of en-US/${file} to translate into ${lang}/${file}`);
          });

          it('has no key en-US does not have (other than a plural form of one it has)', function () {
            const stale = [...target().keys()].filter((key) => !source.has(key) && !(key.endsWith('_plural') && source.has(key.slice(0, -'_plural'.length))));
            assert.deepEqual(stale, [], `keys of ${lang}/${file} that en-US/${file} no longer has`);
          });

          it('keeps every {{placeholder}} of each key', function () {
            const differ: string[] = [];
            for (const [key, text] of target()) {
              const original = source.get(key) ?? source.get(key.replace(/_plural$/, ''));
              if (original !== undefined && placeholders(original).join() !== placeholders(text).join()) differ.push(`${key}: ${placeholders(original).join(' ')} ≠ ${placeholders(text).join(' ')}`);
            }
            assert.deepEqual(differ, [], 'placeholders that differ from en-US');
          });

          it('translates every value (the same text only where nothing is to translate; node names stay)', function () {
            const translated = target();
            const english = [...source].filter(([key, text]) => !key.endsWith('paletteLabel') && translated.get(key) === text && !nothingToTranslate(text)).map(([key, text]) => `${key}: ${text}`);
            assert.deepEqual(english, [], `values left in English in ${lang}/${file}`);
          });
        });
      }

      for (const file of helpFiles()) {
        describe(file, function () {
          const source = helpSections(readFileSync(en(file), 'utf8'));
          const target = (): Map<string, string> => helpSections(readFileSync(join(LOCALES_DIR, lang, file), 'utf8'));

          it('helps the same node types', function () {
            assert.ok(source.size > 0);
            assert.deepEqual([...target().keys()].sort(), [...source.keys()].sort());
          });

          it(`has the same document: headings in ${lang} (Node-RED's own), one item per output, the same properties, code and links`, function () {
            for (const [type, section] of source) {
              const original = outline(section);
              const translation = outline(target().get(type) ?? '');
              assert.deepEqual(translation.headings, original.headings.map((h) => HEADINGS[lang][h] ?? h), `${type}: headings`);
              assert.deepEqual(translation.counts, original.counts, `${type}: paragraphs, properties and output items`);
              assert.deepEqual(translation.code, original.code, `${type}: <code> kept as it is`);
              assert.deepEqual(translation.links, original.links, `${type}: links`);
            }
          });

          it('translates every paragraph, property description and output label', function () {
            for (const [type, section] of source) {
              const original = outline(section).texts;
              const translation = outline(target().get(type) ?? '').texts;
              assert.equal(translation.length, original.length, `${type}: the same blocks of text`);
              const english = original.filter((text, at) => text === translation[at] && !nothingToTranslate(text));
              assert.deepEqual(english, [], `${type}: text left in English in ${lang}/${file}`);
            }
          });
        });
      }
    });
  }
});

describe('plural forms, as Node-RED reads them', function () {
  for (const file of catalogFiles()) {
    const namespace = file.replace(/\.json$/, '');
    const plurals = [...readCatalog(en(file)).keys()].filter((key) => key.endsWith('_plural')).map((key) => key.slice(0, -'_plural'.length));
    if (plurals.length === 0) continue;
    for (const lang of ['en-US', ...LANGUAGES]) {
      it(`${lang}/${file}: a count of 1 reads the singular, 0 and 2 the plural, in ${lang}`, async function () {
        const t = await nodeRedTranslator(namespace, lang);
        const own = readCatalog(join(LOCALES_DIR, lang, file));
        const english = readCatalog(en(file));
        const fill = (text: string | undefined, count: number): string => (text ?? '').replace(/__count__/g, String(count));
        for (const key of plurals) {
          const words = (count: number): string => t(key, { count, total: 3, problems: '' });
          assert.equal(words(1), fill(own.get(key), 1), `${key}, count 1`);
          assert.equal(words(2), fill(own.get(`${key}_plural`), 2), `${key}, count 2`);
          assert.equal(words(0), fill(own.get(`${key}_plural`), 0), `${key}, count 0`);
          // Node-RED fills a language's missing keys from en-US: a plural form left out would be English.
          if (lang !== 'en-US') assert.notEqual(words(2), fill(english.get(`${key}_plural`), 2), `${lang}: ${key}, count 2, is translated`);
        }
      });
    }
  }
});
