/**
 * Parts of the route trace in plain words, for `switchyard calls inspect` and the dashboard's call view
 * (one wording for both; bundled into the browser code: at run time it imports only the savers'
 * thresholds and formats/wait-words.ts, both pure): the token-saver outcome (pipeline/ports.ts
 * TokenSaverTrace, SPEC S-1, S-2, S-4) as one sentence, a failed attempt's token refresh
 * (RefreshTrace, SPEC 6.2/P-7) as lines, and the head of the error answer a client got.
 */
import { formatMs } from "../formats/wait-words.ts";
import type { RefreshTrace, TokenCallTrace, TokenSaverTrace, TraceError } from "./ports.ts";
import { MIN_CHARS, MIN_SAVING } from "./savers/thresholds.ts";

/** "1 tool result" / "3 tool results". */
function results(n: number): string {
  return `${n.toLocaleString("en-US")} tool result${n === 1 ? "" : "s"}`;
}

/**
 * One sentence saying what the token savers did to the body served: what they shortened and how much
 * they saved, why they were skipped, or that they looked at long tool results and shortened none.
 */
export function tokenSaverSentence(ts: TokenSaverTrace): string {
  if ("skipped" in ts) {
    switch (ts.skipped) {
      case "header":
        return "Token savers skipped: the request turned them off (X-Switchyard-Token-Saver: off).";
      case "prompt_cache":
        return "Token savers skipped: this provider's prompt cache needs the history byte for byte (Anthropic-format providers with prompt caching).";
      case "cache_marker":
        return "Token savers left the tool results alone: the client marks its conversation with cache_control and this provider receives the markers, so every tool result goes as written (a marker moving forward never finds a result it passes changed).";
    }
  }
  if ("unchanged" in ts) {
    const were = ts.unchanged === 1 ? "it was" : "they were";
    return `Token savers shortened nothing: they looked at ${results(ts.unchanged)} of ${MIN_CHARS} characters or more, but ${were} not a kind they shorten (diffs, git status, trees, directory listings, compiler output, search results, logs with repeated lines) or would not get ${Math.round(MIN_SAVING * 100)} % shorter.`;
  }
  const rules = Object.entries(ts.rules)
    .map(([rule, n]) => `${n} ${rule.replace(/_/g, " ")}`)
    .join(", ");
  return `Token savers shortened ${results(ts.results)} (${rules}): ${ts.charsBefore.toLocaleString("en-US")} → ${ts.charsAfter.toLocaleString("en-US")} characters, about ${ts.tokensSaved.toLocaleString("en-US")} tokens saved.`;
}

/** "token call at +1.2 s: 503 in 40 ms (the token endpoint answered 503 …)", or "… ok in 120 ms". */
function callLine(c: TokenCallTrace): string {
  const when = c.startMs >= 0 ? `at +${formatMs(c.startMs)}` : `${formatMs(-c.startMs)} before this request arrived`;
  const how = c.error === undefined ? "ok" : c.status !== undefined ? `${c.status}` : "failed";
  return `token call ${when}: ${how} in ${formatMs(c.durationMs)}${c.error !== undefined ? ` (${c.error})` : ""}`;
}

/**
 * The lines of one refresh: "refresh: token refreshed (1 token call); waited 130 ms; the same account
 * is tried again" (or "…; not refreshed"), then one per token-endpoint call; durations as
 * {@link formatMs} writes them ("120 ms", "1.5 s").
 */
export function refreshLines(r: RefreshTrace): string[] {
  const then = r.ok ? "the same account is tried again" : "not refreshed";
  return [`refresh: ${r.note}; waited ${formatMs(r.waitedMs)}; ${then}`, ...r.calls.map(callLine)];
}

/**
 * The head of the error answer a client got (RouteTrace.error), in the words of the body it read: its
 * status and its format's type, then the code when the body carried one that says more — "500
 * server_error" (Chat), "429 rate_limit_error" (Anthropic), "429 usage_limit_reached ·
 * key_budget_exceeded" (Responses, HTTP or WebSocket), "429 RESOURCE_EXHAUSTED" (Gemini). A trace
 * recorded before the client's type was kept (2026-12-06) has only the gateway's own kind, which no
 * client reads: said as such, "500 · gateway error kind api_error", never as what the client got.
 */
export function answeredErrorHead(e: TraceError): string {
  if (e.clientType !== undefined) return `${e.status} ${e.clientType}${e.clientCode !== undefined && e.clientCode !== e.clientType ? ` · ${e.clientCode}` : ""}`;
  return `${e.status} · gateway error kind ${e.kind}${e.code !== undefined && e.code !== e.kind ? `, code ${e.code}` : ""} (the type the client read was not recorded)`;
}
