/**
 * Colour arithmetic for the theme tests: computed CSS colours parsed, laid
 * over their background, and compared by WCAG 2 contrast ratio (1 to 21).
 */

export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0 (transparent) to 1 (opaque). */
  a: number;
}

/** A computed colour as getComputedStyle gives it: `rgb(r, g, b)` or `rgba(r, g, b, a)`. */
export function parseColour(text: string): Rgba {
  const match = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(text.trim());
  if (match === null) throw new Error(`not an rgb() colour: ${text}`);
  const alpha = match[4] === undefined ? 1 : match[4].endsWith('%') ? Number(match[4].slice(0, -1)) / 100 : Number(match[4]);
  return { r: Number(match[1]), g: Number(match[2]), b: Number(match[3]), a: alpha };
}

/** `colour` at `opacity` (times its own alpha) over an opaque `background`. */
export function over(colour: Rgba, background: Rgba, opacity = 1): Rgba {
  const a = colour.a * opacity;
  const mix = (f: number, b: number): number => f * a + b * (1 - a);
  return { r: mix(colour.r, background.r), g: mix(colour.g, background.g), b: mix(colour.b, background.b), a: 1 };
}

function channel(value: number): number {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** WCAG 2 relative luminance, 0 (black) to 1 (white). */
export function luminance(colour: Rgba): number {
  return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b);
}

/** WCAG 2 contrast ratio of two opaque colours. */
export function contrast(a: Rgba, b: Rgba): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

export function hex(colour: Rgba): string {
  return `#${[colour.r, colour.g, colour.b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}
