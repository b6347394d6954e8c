/**
 * The graceful stop of a running gateway (SPEC D-3), src/app.ts's `shutdown`: stop accepting, let the
 * requests in flight finish within the grace period (`server.shutdown_grace_ms`, or until a second
 * signal ends it), end what is still open, then report the last requests, flush and close the store,
 * and remove instance.json.
 */
import type { AlertWebhook } from "./alerts/webhook.ts";
import type { GraceEnd } from "../pipeline/index.ts";
import type { KeyLimitCounters } from "../pipeline/ports.ts";
import { SharedKeyCounters } from "./limits/shared-counters.ts";
import type { UsageRetention } from "./store/usage-retention.ts";
import type { Store } from "./store/types.ts";
import { unwrittenAtCloseLine } from "./log-lines.ts";
import { settledBy } from "./retry-until.ts";

/** What {@link stopGateway} stops, waits on and closes: the running app's parts. */
export interface StopParts {
  /** Stops everything that is not a request: event streams, timers, watchers, the config file's watch. */
  halt: () => void;
  /**
   * Called once the server has closed its last connection (no request can come anymore): says in the
   * log what was counted and held back until then (the browser rules' refusals within their minute:
   * src/http/browser-refusals.ts `BrowserRefusalLog.flush`).
   */
  lastLines?: () => void;
  /** Bun's server: `stop(false)` stops accepting, `stop(true)` closes the connections still open. */
  server: { stop(closeActiveConnections?: boolean): Promise<void>; readonly pendingRequests: number };
  /** The requests in flight (streams included), by request id. */
  inflight: { readonly size: number };
  /** Streamed replies still open: each function ends its stream with the format's in-band error (pipeline/commit-out.ts). */
  openStreams: ReadonlySet<() => void>;
  /**
   * Aborted when the grace period is over: a request still waiting on its upstream (no reply committed)
   * has its upstream call aborted and gets a 503 `gateway_stopping` in its format (pipeline AttemptDeps.graceOver).
   */
  graceOver: GraceEnd;
  /** Runs what finished requests still have queued to report (src/after-reply.ts). */
  settle: () => void;
  webhook: Pick<AlertWebhook, "close">;
  /** The embedded store's budget windows, saved at the end (src/limits/key-counters.ts). */
  budgetWindows?: { save(): Promise<unknown> };
  keyCounters: KeyLimitCounters;
  retention: Pick<UsageRetention, "stop">;
  store: Store;
  /**
   * Writes again the account locks, cooldowns, removed pairings and circuits the embedded store refused
   * (src/accounts/retry-writes.ts), before its last flush. On a shared store it waits, until `until()`
   * (ms since the epoch) at the latest, for the writes still being tried (src/accounts/shared-state-writes.ts).
   */
  retryStateWrites?: (until: () => number) => unknown;
  /**
   * Read after the store's close: the account state writes lost, by what happened
   * (src/accounts/registry.ts `unwrittenStateWrites`): rejected earlier (each said in its `error` line
   * then), dropped earlier at the embedded store's cap on waiting writes, and those still on their way or
   * waiting at the stop (with those the closed store refused). All are counted lost (exit 1).
   */
  unwrittenStateWrites?: () => { rejected: number; droppedAtCap: number; atStop: number };
  log: (line: string) => void;
  telemetry?: { shutdown(): Promise<unknown> };
  /** The request log's stdout buffer (absent when the app was given its own `log`). */
  stdoutLog?: { flush(): unknown };
  /** Removes instance.json when this start wrote it (its nonce), and gives back the data directory's lock when this process holds it. */
  removeInstanceFile: () => void;
}

/**
 * What a stop has done so far, for its lifecycle lines (src/main.ts, src/log-lines.ts stoppedLine):
 * filled in by {@link stopGateway} as it goes. Times in ms since the epoch.
 */
export interface StopProgress {
  startedAt: number;
  /** Requests in flight (streams included) when the stop began. */
  inflightAtStart: number;
  /** Requests open now: all of them (streams included), and the streamed replies among them. */
  open(): { requests: number; streams: number };
  /**
   * Requests still open when the grace period ended (its full length, or a second signal), which were
   * then ended (a stream with its in-band error, a request waiting on its upstream with a 503); 0 when
   * every request finished within it. Unset until then.
   */
  endedAtGraceEnd?: number;
  /** Usage rows the last flush had to write (after the last requests were reported); unset until then. */
  lastUsageRows?: number;
  /** Set when the stop is done. */
  endedAt?: number;
}

/**
 * Stops the gateway (SPEC D-3): `graceMs` is the grace period, ms; `graceCut()` says whether a second
 * signal ended it early (read while waiting); `progress`, when given, is filled in as the stop goes
 * ({@link StopProgress}). Resolves false when writes were lost while the database was away (logged),
 * else true; never rejects for a request still open (it is ended, not awaited).
 */
export async function stopGateway(parts: StopParts, graceMs: number, graceCut: () => boolean, progress?: StopProgress): Promise<boolean> {
  const { server, inflight, openStreams, settle, keyCounters, store } = parts;
  parts.halt();
  void server.stop(false);
  const deadline = Date.now() + graceMs;
  // A finished request may still be writing its last bytes: wait for Bun's pending count too.
  while ((inflight.size > 0 || server.pendingRequests > 0) && Date.now() < deadline && !graceCut()) await Bun.sleep(50);
  // Requests still open after the grace period are ended, not cut (their upstream calls aborted):
  // streams with the format's in-band error (`gateway_stopping`, outcome `error`), a request still waiting on its upstream (for a whole
  // reply, or a stream's first content) with a 503 in its format, logged and counted as any failed
  // request; a moment for those last bytes to reach the clients.
  if (progress) progress.endedAtGraceEnd = inflight.size;
  if (openStreams.size > 0 || inflight.size > 0 || server.pendingRequests > 0) {
    parts.graceOver.end();
    for (const end of [...openStreams]) end();
    const cut = Date.now() + 1000;
    while ((inflight.size > 0 || server.pendingRequests > 0) && Date.now() < cut) await Bun.sleep(20);
  }
  await server.stop(true);
  parts.lastLines?.();
  settle(); // what the last requests spent counts in the budget windows and shares saved below
  await parts.webhook.close();
  await parts.budgetWindows?.save();
  // Leased key-limit shares: report the last use before the store gives the unused shares back,
  // retried until the grace period ends or a second signal (try20 D2). The budget use still unreported
  // then goes to the store, which writes it with its last flush or keeps it for the next start (a store
  // that cannot take it, closing already or without the means: those budget windows' use is lost and
  // counted so in the stop's line); the minute windows' use is lost (they lapse within a minute).
  const left = keyCounters instanceof SharedKeyCounters ? await keyCounters.close(() => (graceCut() ? 0 : deadline)) : undefined;
  const minuteWindowsLost = left?.minuteWindows ?? 0;
  const budgetsNotTaken = left?.budgets.length && !store.keepUnreportedUse?.(left.budgets) ? left.budgets.length : 0;
  settle();
  await parts.retention.stop();
  if (progress) progress.lastUsageRows = store.stats().pendingUsage;
  await parts.retryStateWrites?.(() => (graceCut() ? 0 : deadline));
  // bounded by the grace period's end: a stalled database's flush waits (the store's close keeps its batch)
  await settledBy(Promise.resolve(store.flush()), () => (graceCut() ? 0 : deadline));
  const closedStore = (await store.close(() => (graceCut() ? 0 : deadline))) || undefined;
  // after the close: a state write the closed store refused counts with those still on their way
  const st = parts.unwrittenStateWrites?.() ?? { rejected: 0, droppedAtCap: 0, atStop: 0 };
  const atStop = st.atStop > 0 ? { ...(closedStore ?? { usage: 0, traces: 0, keyUse: 0, while: store.shared ? "account state writes were still on their way" : "writes to the embedded store fail" }), state: (closedStore?.state ?? 0) + st.atStop } : closedStore;
  const closed = st.rejected + st.droppedAtCap > 0 ? { ...(atStop ?? { usage: 0, traces: 0, state: 0, keyUse: 0 }), earlierState: { rejected: st.rejected, droppedAtCap: st.droppedAtCap } } : atStop;
  const unwritten = budgetsNotTaken ? { ...(closed ?? { usage: 0, traces: 0, state: 0 }), keyUse: (closed?.keyUse ?? 0) + budgetsNotTaken } : closed;
  const lost = unwrittenAtCloseLine(unwritten, minuteWindowsLost, Date.now(), parts.log, graceCut());
  await parts.telemetry?.shutdown();
  parts.stdoutLog?.flush();
  parts.removeInstanceFile();
  if (progress) progress.endedAt = Date.now();
  return !lost;
}
