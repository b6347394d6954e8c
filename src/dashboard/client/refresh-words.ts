/**
 * A failed attempt's token refresh (pipeline/ports.ts RefreshTrace, SPEC 6.2/P-7) in plain words, for
 * `switchyard calls inspect` and the dashboard's call view (bundled into the browser code: it imports
 * only ./format.ts at run time, which imports only pure formats/ code). One line for the refresh, then one per
 * token-endpoint call; durations as the call view writes them (`ms`: "120 ms", "1.5 s").
 */
import type { RefreshTrace, TokenCallTrace } from "../../../pipeline/ports.ts";
import { ms as span } from "./format.ts";

/** "token call at +1.2 s, 503 in 40 ms: the token endpoint answered 503 …", or "… ok in 120 ms". */
function callLine(c: TokenCallTrace): string {
  const when = c.startMs >= 0 ? `at +${span(c.startMs)}` : `${span(-c.startMs)} before this request arrived`;
  const how = c.error === undefined ? "ok" : c.status !== undefined ? `${c.status}` : "failed";
  return `token call ${when}: ${how} in ${span(c.durationMs)}${c.error !== undefined ? ` (${c.error})` : ""}`;
}

/**
 * The lines of one refresh: "refresh: token refreshed (1 token call); waited 130 ms; the same account
 * is tried again" (or "…; the next account is tried"), then each token call.
 */
export function refreshLines(r: RefreshTrace): string[] {
  const then = r.ok ? "the same account is tried again" : "not refreshed";
  return [`refresh: ${r.note}; waited ${span(r.waitedMs)}; ${then}`, ...r.calls.map(callLine)];
}
