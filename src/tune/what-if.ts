import { runGrid, type GridCell, type GridRule, type GridSpec } from './grid';
import { parkedJitter, type JitterResult } from './jitter';
import type { PingColumns } from './ping-columns';

/**
 * One what-if, as the command and the sidebar both show it: the grid of
 * admitted fractions and, beside it, the parked jitter with its suggested
 * Movement.
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
  jitter: JitterResult;
}

export function whatIf(columns: PingColumns, request: WhatIfRequest, onCell?: (done: number, total: number) => void): WhatIfResult {
  return {
    spec: request.spec,
    received: columns.size,
    assets: columns.names.length,
    cells: runGrid(columns, request.spec, request.rule, onCell),
    jitter: parkedJitter(columns, { heartbeatSeconds: request.heartbeatSeconds }),
  };
}
