/**
 * Property paths inside a reading, in the syntax Node-RED uses for message
 * properties: `uplink_message.decoded_payload.fill_pct`, `rx[0].rssi`,
 * `meta["battery level"]`. Parsed once when a node starts; read without
 * throwing, following own properties only (a path through `__proto__` or
 * `constructor` reads nothing).
 */
export interface PropertyPath {
  /** As written, for messages and error texts. */
  readonly text: string;
  readonly parts: readonly (string | number)[];
}

/** A name between dots: anything but dots, brackets, quotes and spaces; digits alone are an index, as in Node-RED. */
const NAME = /[^.[\]'"\s]+/y;

export function parsePath(text: string): PropertyPath {
  const source = text.trim();
  if (source === '') throw new Error('a property path must not be empty');
  const parts: (string | number)[] = [];
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`"${source}" is not a property path: ${what} at character ${at + 1}`);
  };
  let expectName = true;
  while (at < source.length) {
    const ch = source[at];
    if (ch === '[') {
      at++;
      const quote = source[at];
      if (quote === '"' || quote === "'") {
        let value = '';
        at++;
        while (at < source.length && source[at] !== quote) {
          if (source[at] === '\\' && at + 1 < source.length) at++;
          value += source[at];
          at++;
        }
        if (source[at] !== quote) fail('an unclosed quote');
        at++;
        parts.push(value);
      } else {
        const digits = /\d+/y;
        digits.lastIndex = at;
        const m = digits.exec(source);
        if (!m) fail('an index that is not a number or a quoted name');
        parts.push(Number(m?.[0]));
        at = digits.lastIndex;
      }
      if (source[at] !== ']') fail('a missing ]');
      at++;
      expectName = false;
      continue;
    }
    if (ch === '.') {
      if (expectName) fail('an empty name');
      at++;
      expectName = true;
      continue;
    }
    if (!expectName) fail('a name that does not follow a dot');
    NAME.lastIndex = at;
    const m = NAME.exec(source);
    if (!m) fail(`an unexpected ${JSON.stringify(ch)}`);
    const name = m?.[0] as string;
    parts.push(/^\d+$/.test(name) ? Number(name) : name);
    at = NAME.lastIndex;
    expectName = false;
  }
  if (expectName) fail('a path that ends in a dot');
  return { text: source, parts };
}

/** The value at the path, or undefined when any step is missing. */
export function readPath(root: unknown, path: PropertyPath): unknown {
  let value = root;
  const parts = path.parts;
  for (let i = 0; i < parts.length; i++) {
    if (value === null || typeof value !== 'object') return undefined;
    const part = parts[i] as string | number;
    if (!Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

/** The path's last name: what a measured value is called in the hashed JSON unless named. */
export function lastName(path: PropertyPath): string {
  return String(path.parts[path.parts.length - 1]);
}

/** How a path inside the reading at `where` reads in a message: msg.payload[2].uplink_message.f_cnt */
export function locate(where: string, path: PropertyPath | null): string {
  if (path === null) return where;
  let out = where;
  for (const part of path.parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`;
  }
  return out;
}
