/**
 * Live events from `GET /admin/api/events` (Server-Sent Events, SPEC 9.4): one EventSource per page
 * load, shared by every view. Views subscribe with {@link useLive}; after a reconnect every subscriber
 * gets a `hello` event, so it can re-read the state it shows.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { AccountStateEvent, AlertEvent, ConfigReloadedEvent, KeysChangedEvent, RequestFinishedEvent, RoutingChangedEvent } from "../../events/bus.ts";
import { reloadToSignIn } from "./session-ended.ts";

/** What subscribers receive. */
export type LiveEvent =
  | (RequestFinishedEvent & { inflight?: number; costUsd?: number })
  | (AccountStateEvent & { provider?: string })
  | AlertEvent
  | KeysChangedEvent
  | RoutingChangedEvent
  | ConfigReloadedEvent
  | { type: "hello"; at: number };

/**
 * Connection state shown in the header: `stopped` after the gateway said it is stopping (`event:
 * shutdown`), until a gateway answers again (the browser's EventSource reconnects on its own; when it gives up,
 * {@link connectLive}'s stream opens a new one).
 */
export type LiveState = "connecting" | "live" | "reconnecting" | "stopped";

const listeners = new Set<(e: LiveEvent) => void>();
const stateListeners = new Set<(s: LiveState) => void>();
let state: LiveState = "connecting";
let source: EventSource | undefined;

function setState(s: LiveState) {
  state = s;
  for (const l of stateListeners) l(s);
}

function dispatch(e: LiveEvent) {
  for (const l of listeners) l(e);
}

/** First wait before opening a new stream after the browser closed one (ms); doubles up to {@link RETRY_MAX_MS}. */
const RETRY_FIRST_MS = 1_000;
/** Longest wait between two attempts to open the stream again (ms). */
const RETRY_MAX_MS = 15_000;
let retryMs = RETRY_FIRST_MS;
let retryTimer: ReturnType<typeof setTimeout> | undefined;

/** Opens the event stream (once; later calls do nothing while one is open or about to be reopened). */
export function connectLive(): void {
  if (source || retryTimer) return;
  open();
}

function open(): void {
  const es = new EventSource("/admin/api/events");
  source = es;
  es.addEventListener("open", () => {
    retryMs = RETRY_FIRST_MS;
  });
  es.addEventListener("hello", (m) => {
    retryMs = RETRY_FIRST_MS;
    setState("live");
    dispatch({ type: "hello", at: Number(JSON.parse((m as MessageEvent).data).at) || Date.now() });
  });
  for (const type of ["request_finished", "account_state", "alert", "keys_changed", "routing_changed", "config_reloaded"]) {
    es.addEventListener(type, (m) => {
      try {
        dispatch(JSON.parse((m as MessageEvent).data) as LiveEvent);
      } catch {
        // a frame that is not JSON is skipped
      }
    });
  }
  // The server ends the stream when this browser's session ends (signed out elsewhere, expired, key
  // revoked); a reconnect it refuses leaves the source closed. Either way the page goes to the sign-in
  // view (a page reload re-asks the server which view to show).
  es.addEventListener("signed_out", () => reloadToSignIn("ended"));
  es.addEventListener("shutdown", () => setState("stopped"));
  es.addEventListener("error", () => {
    if (state !== "stopped") setState("reconnecting");
    if (es.readyState !== EventSource.CLOSED || source !== es) return;
    // The browser reconnects on its own after a dropped stream, but gives up for good after one
    // answer that is not a 200 event stream (HTML "fail the connection": a proxy's 502/503 while the
    // gateway restarts, a 503 while the store is away). Unless the session ended (401), open a new
    // stream after a wait that doubles from 1 s to 15 s and starts again at 1 s once one opens.
    const retry = () => {
      if (source !== es || retryTimer) return;
      const wait = retryMs;
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        if (source === es) open();
      }, wait);
    };
    void fetch("/admin/api/settings", { credentials: "same-origin" }).then(
      (r) => {
        if (r.status === 401) reloadToSignIn("ended");
        else retry();
      },
      retry,
    );
  });
}

/** Calls `fn` for every live event while the component is mounted. */
export function useLive(fn: (e: LiveEvent) => void): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const l = (e: LiveEvent) => ref.current(e);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
}

/** The connection state, re-rendering on change. */
export function useLiveState(): LiveState {
  const [s, set] = useState(state);
  useEffect(() => {
    stateListeners.add(set);
    set(state); // a change between the first render and this effect would be missed otherwise
    return () => void stateListeners.delete(set);
  }, []);
  return s;
}
