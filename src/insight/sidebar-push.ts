import { forgetClosed } from '../telemetry/records';
import { insightSummaries, type NodeSummary } from './sidebar-view';

let publisher: { timer: NodeJS.Timeout; stop: () => void } | undefined;

/**
 * Pushes insightSummaries() through `publish` every `intervalMs` (the
 * sidebar plugin hands RED.comms.publish), forgetting at each tick the
 * nodes closed too long ago. One publisher at a time: a second call
 * replaces the first. Returns a function that stops it.
 */
export function publishInsight(publish: (summaries: NodeSummary[], now: number) => void, intervalMs: number): () => void {
  publisher?.stop();
  let lastWasEmpty = false;
  const tick = (): void => {
    const now = Date.now();
    forgetClosed(now);
    const summaries = insightSummaries(now);
    // Once empty is enough: it clears the editor's list.
    if (summaries.length === 0 && lastWasEmpty) return;
    lastWasEmpty = summaries.length === 0;
    try {
      publish(summaries, now);
    } catch {
      // The editor connection is Node-RED's business; a failed push is retried at the next tick.
    }
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    if (publisher?.timer === timer) publisher = undefined;
  };
  publisher = { timer, stop };
  tick();
  return stop;
}
