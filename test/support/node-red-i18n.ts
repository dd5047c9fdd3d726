/**
 * The pack's message catalogs read by Node-RED's own i18n (@node-red/util of
 * the devDependency): the same loader the runtime and the editor's /locales
 * requests use, with its en-US fallback merged into each language and its
 * `_plural` keys read as i18next's `_other`. A test's translations are
 * therefore the ones a user sees, plural forms included.
 */
import { join } from 'path';

export const LOCALES_DIR = join(__dirname, '..', '..', 'nodes', 'locales');

export type Translate = (key: string, substitutions?: Record<string, string | number>) => string;

interface NodeRedI18n {
  init(settings: Record<string, unknown>): void;
  registerMessageCatalog(namespace: string, dir: string, file: string): Promise<void>;
  i: { loadLanguages(languages: string[]): Promise<unknown>; getFixedT(language: string, namespace: string): Translate };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's i18n module, untyped
const { i18n } = require('@node-red/util') as { i18n: NodeRedI18n };

const registered = new Map<string, Promise<void>>();

/** A translator for one catalog (its namespace is the file's base name) in one language. */
export async function nodeRedTranslator(namespace: string, language: string): Promise<Translate> {
  // Only the first call initialises; later ones are ignored by Node-RED.
  i18n.init({});
  let loading = registered.get(namespace);
  if (loading === undefined) {
    loading = i18n.registerMessageCatalog(namespace, LOCALES_DIR, `${namespace}.json`);
    registered.set(namespace, loading);
  }
  await loading;
  await i18n.i.loadLanguages([language]);
  return i18n.i.getFixedT(language, namespace);
}
