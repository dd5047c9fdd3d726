/**
 * Facts about the pack read from its files, the way Node-RED and the Flow
 * Library read them: package.json, the editor .html beside each runtime .js,
 * the en-US message catalogs and help, and examples/.
 */
import { existsSync, readdirSync, readFileSync } from 'fs';
import { basename, dirname, join } from 'path';

export const PACK_ROOT = join(__dirname, '..', '..', '..');

export interface PackageJson {
  name: string;
  version: string;
  license?: string;
  keywords?: string[];
  repository?: string | { type?: string; url?: string };
  bugs?: string | { url?: string; email?: string };
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  files?: string[];
  'node-red'?: { version?: string; nodes?: Record<string, string> };
}

export function packageJson(): PackageJson {
  return JSON.parse(readFileSync(join(PACK_ROOT, 'package.json'), 'utf8')) as PackageJson;
}

export interface NodeSet {
  /** The key in package.json's node-red.nodes. */
  set: string;
  /** The runtime file, e.g. nodes/sliding-window-dedup.js. */
  js: string;
  /** The editor file beside it. */
  html: string;
  /** Its message catalog and help (en-US). */
  catalog: string;
  help: string;
}

export function nodeSets(): NodeSet[] {
  const nodes = packageJson()['node-red']?.nodes ?? {};
  return Object.entries(nodes).map(([set, file]) => {
    const js = join(PACK_ROOT, file);
    const base = basename(file, '.js');
    return {
      set,
      js,
      html: join(dirname(js), `${base}.html`),
      catalog: join(dirname(js), 'locales', 'en-US', `${base}.json`),
      help: join(dirname(js), 'locales', 'en-US', `${base}.html`),
    };
  });
}

export interface EditorType {
  type: string;
  category: string;
  set: NodeSet;
}

/**
 * The node types an editor file registers, with their category. Only plain
 * `RED.nodes.registerType("<literal>", { ... category: "<literal>" ... })`
 * calls are recognised, which is what the Flow Library can read.
 */
export function editorTypes(set: NodeSet): EditorType[] {
  const html = readFileSync(set.html, 'utf8');
  const found: EditorType[] = [];
  const call = /RED\.nodes\.registerType\(\s*(["'])([^"']+)\1\s*,\s*\{/g;
  for (let match = call.exec(html); match !== null; match = call.exec(html)) {
    const rest = html.slice(match.index + match[0].length);
    const category = /\bcategory\s*:\s*(["'])([^"']+)\1/.exec(rest);
    found.push({ type: match[2] ?? '', category: category?.[2] ?? '', set });
  }
  return found;
}

/** Every registerType call in an editor file, literal or not. */
export function registerTypeCallCount(set: NodeSet): number {
  return (readFileSync(set.html, 'utf8').match(/registerType\s*\(/g) ?? []).length;
}

export function allEditorTypes(): EditorType[] {
  return nodeSets().filter((s) => existsSync(s.html)).flatMap(editorTypes);
}

/** The non-config node types (the ones in the palette). */
export function flowNodeTypes(): string[] {
  return allEditorTypes()
    .filter((t) => t.category !== 'config')
    .map((t) => t.type);
}

export function configNodeTypes(): string[] {
  return allEditorTypes()
    .filter((t) => t.category === 'config')
    .map((t) => t.type);
}

export type Catalog = { [key: string]: string | Catalog };

export function catalog(set: NodeSet): Catalog {
  return JSON.parse(readFileSync(set.catalog, 'utf8')) as Catalog;
}

/** A catalog entry by dotted key, or undefined. */
export function lookup(entries: Catalog, key: string): string | undefined {
  let entry: string | Catalog | undefined = entries;
  for (const part of key.split('.')) {
    entry = entry !== undefined && typeof entry === 'object' ? entry[part] : undefined;
  }
  return typeof entry === 'string' ? entry : undefined;
}

export function setOfType(type: string): NodeSet {
  const found = allEditorTypes().find((t) => t.type === type);
  if (found === undefined) throw new Error(`no editor file registers ${type}`);
  return found.set;
}

/** The first paragraph of a type's help, as text (the palette tooltip). */
export function helpFirstParagraph(type: string): string {
  const html = readFileSync(setOfType(type).help, 'utf8');
  const section = new RegExp(`data-help-name=["']${type}["'][^>]*>([\\s\\S]*?)</script>`).exec(html);
  if (section === null) throw new Error(`no help for ${type}`);
  const paragraph = /<p>([\s\S]*?)<\/p>/.exec(section[1] ?? '');
  if (paragraph === null) throw new Error(`the help of ${type} has no first paragraph`);
  return (paragraph[1] ?? '').replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
}

export interface Example {
  name: string;
  file: string;
  flow: Array<{ id: string; type: string; [key: string]: unknown }>;
}

export function examples(): Example[] {
  const dir = join(PACK_ROOT, 'examples');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      name: basename(f, '.json'),
      file: join(dir, f),
      flow: JSON.parse(readFileSync(join(dir, f), 'utf8')) as Example['flow'],
    }));
}
