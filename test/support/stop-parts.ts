import type { StopParts } from "../../src/stop-gateway.ts";

/**
 * A {@link StopParts} for calling `stopGateway` without a gateway: every part idle (no server, no
 * requests in flight, no open streams, a webhook and retention that close at once), the log lines
 * pushed into `lines`, and `over` (typically the store and the key counters) replacing the idle parts.
 */
export function idleStopParts(lines: string[], over: Partial<StopParts>): StopParts {
  return {
    halt: () => {},
    server: { stop: async () => {}, pendingRequests: 0 },
    inflight: { size: 0 },
    openStreams: new Set(),
    graceOver: { end: () => {} } as unknown as StopParts["graceOver"],
    settle: () => {},
    webhook: { close: async () => {} } as unknown as StopParts["webhook"],
    keyCounters: {} as unknown as StopParts["keyCounters"],
    retention: { stop: async () => {} } as unknown as StopParts["retention"],
    store: {} as unknown as StopParts["store"],
    log: (l) => lines.push(l),
    removeInstanceFile: () => {},
    ...over,
  };
}
