import { readFileSync } from 'fs';
import { join } from 'path';

/**
 * The dedup sidebar's message catalog (nodes/locales/en-US/dedup-sidebar.json),
 * read outside Node-RED: the dedup-tune command words its output from the
 * same catalog as the sidebar, with i18next's `__name__` substitutions.
 * The path holds from src/tune (tsx) and from nodes/tune (compiled) alike.
 */
const CATALOG = join(__dirname, '..', '..', 'nodes', 'locales', 'en-US', 'dedup-sidebar.json');

export type Translate = (key: string, substitutions?: Record<string, string | number>) => string;

export function loadCatalog(path: string = CATALOG): Translate {
  const root = (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>)['dedup-sidebar'];
  return (key, substitutions = {}) => {
    let entry: unknown = root;
    for (const part of key.split('.')) entry = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[part] : undefined;
    if (typeof entry !== 'string') throw new Error(`the message catalog has no string "dedup-sidebar.${key}"`);
    return entry.replace(/__(\w+)__/g, (whole, name: string) => (name in substitutions ? String(substitutions[name]) : whole));
  };
}
