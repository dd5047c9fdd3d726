import { runGrid, type GridCell, type GridRule, type GridSpec } from './grid';
import { parkedJitter, type JitterResult } from './jitter';
import type { PingColumns } from '../core/window/ping-columns';

/**
 * One what-if, as the command and the sidebar both show it: the grid of
 * admitted fractions and, beside it, the parked jitter with its suggested
 * Movement (in position mode: a reading has no parked jitter).
 */
export interface WhatIfRequest {
  spec: GridSpec;
  rule: GridRule;
  /** The Heartbeat the jitter is measured under: the node's own, or the command's --heartbeat. */
  heartbeatSeconds: number;
}

export interface WhatIfResult {
  spec: GridSpec;
  /** Pings run through each cell. */
  received: number;
  assets: number;
  cells: GridCell[];
  /** null in value mode. */
  jitter: JitterResult | null;
}

/** `cells`: the grid when the caller ran it already (the command, in threads of its own); otherwise it runs here. */
export function whatIf(columns: PingColumns, request: WhatIfRequest, cells: GridCell[] = runGrid(columns, request.spec, request.rule)): WhatIfResult {
  return {
    spec: request.spec,
    received: columns.size,
    assets: columns.names.length,
    cells,
    jitter: request.rule.mode === 'value' ? null : parkedJitter(columns, { heartbeatSeconds: request.heartbeatSeconds }),
  };
}
