/**
 * Which column of a recorded file holds what the sliding-window node reads:
 * the asset id, the time, the position (or, in value mode, the reading)
 * and, for a node whose rules read them, the heading, the accuracy, the
 * fix's validity, its satellites and its HDOP. A column is a CSV header's
 * name or a JSON Lines property; the user names it (dedup-tune's --asset,
 * --time, --lat, --lon, --value, ...; the sidebar's picker), or it is
 * recognised by a common name.
 */
import type { WindowMode } from '../core/window/sliding-window';

export type Role = 'assetId' | 'time' | 'lat' | 'lon' | 'heading' | 'accuracy' | 'value' | 'valid' | 'satellites' | 'hdop';

export const REQUIRED_ROLES = ['assetId', 'time', 'lat', 'lon'] as const satisfies readonly Role[];
/** What a file must have in value mode: a reading instead of a position. */
export const REQUIRED_VALUE_ROLES = ['assetId', 'time', 'value'] as const satisfies readonly Role[];

/** The roles a file must have for a rule of this mode. */
export function requiredRoles(mode: WindowMode | undefined): readonly Role[] {
  return mode === 'value' ? REQUIRED_VALUE_ROLES : REQUIRED_ROLES;
}

/**
 * Names recognised without being given, best first: a file with both
 * `vehicle` and `id` is keyed by vehicle, `id` being as often a row number.
 */
export const RECOGNISED: Readonly<Record<Role, readonly string[]>> = {
  assetId: ['assetId', 'asset_id', 'vehicle', 'vehicle_id', 'device_id', 'deviceId', 'name_id', 'id'],
  time: ['ts', 'timestamp', 'datetime', 'time'],
  lat: ['lat', 'latitude'],
  lon: ['lon', 'longitude', 'lng'],
  heading: ['heading'],
  accuracy: ['accuracy'],
  value: ['value', 'reading', 'fill_pct', 'fill_level', 'level'],
  valid: ['valid', 'fix', 'validity', 'gps_valid'],
  satellites: ['satellites', 'sats', 'num_sats', 'satellite_count'],
  hdop: ['hdop'],
};

/** The option (dedup-tune `--asset`) and the query parameter (the sidebar's upload) that name each role's column. */
export const ROLE_OPTIONS: Readonly<Record<Role, string>> = {
  assetId: 'asset',
  time: 'time',
  lat: 'lat',
  lon: 'lon',
  heading: 'heading',
  accuracy: 'accuracy',
  value: 'value',
  valid: 'valid',
  satellites: 'satellites',
  hdop: 'hdop',
};

/** How a role is called in messages. */
export const ROLE_NAMES: Readonly<Record<Role, string>> = {
  assetId: 'asset id',
  time: 'time',
  lat: 'latitude',
  lon: 'longitude',
  heading: 'heading',
  accuracy: 'accuracy',
  value: 'value',
  valid: 'validity',
  satellites: 'satellites',
  hdop: 'HDOP',
};

/** The columns a user named; a blank name means "recognise it". */
export type ColumnChoice = Partial<Record<Role, string>>;

/** A role's column as found: its name as the file writes it, its index among the file's columns, and whether the user named it. */
export interface ChosenColumn {
  name: string;
  index: number;
  given: boolean;
}

export type ColumnsResult =
  | { ok: true; chosen: Partial<Record<Role, ChosenColumn>> }
  | { ok: false; problem: 'missing'; roles: Role[] }
  | { ok: false; problem: 'noColumn'; role: Role; column: string };

/**
 * Finds each role's column among `names` (a header, or the keys of a JSON
 * object): the given name, else the first recognised one. Names match as
 * written first, then regardless of case and surrounding spaces. The roles
 * of `required` must be found; the others are absent when not.
 */
export function chooseColumns(names: readonly string[], given: ColumnChoice, roles: readonly Role[], required: readonly Role[] = REQUIRED_ROLES): ColumnsResult {
  const folded = names.map(fold);
  const find = (name: string): number => {
    const exact = names.indexOf(name);
    return exact !== -1 ? exact : folded.indexOf(fold(name));
  };
  const chosen: Partial<Record<Role, ChosenColumn>> = {};
  const missing: Role[] = [];
  for (const role of roles) {
    const wanted = given[role]?.trim() ?? '';
    if (wanted !== '') {
      const index = find(wanted);
      if (index === -1) return { ok: false, problem: 'noColumn', role, column: wanted };
      chosen[role] = { name: names[index] as string, index, given: true };
      continue;
    }
    for (const name of RECOGNISED[role]) {
      const index = find(name);
      if (index !== -1) {
        chosen[role] = { name: names[index] as string, index, given: false };
        break;
      }
    }
    if (chosen[role] === undefined && required.includes(role)) missing.push(role);
  }
  return missing.length > 0 ? { ok: false, problem: 'missing', roles: missing } : { ok: true, chosen };
}

function fold(name: string): string {
  return name.trim().toLowerCase();
}
