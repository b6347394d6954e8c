/**
 * The route trace's token-saver outcome (pipeline/ports.ts TokenSaverTrace, SPEC S-1, S-2, S-4) in
 * plain words, one sentence, for `switchyard calls inspect` and the dashboard's call view (bundled into
 * the browser code: it imports nothing but the thresholds).
 */
import type { TokenSaverTrace } from "./ports.ts";
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
        return "Token savers left the tool results alone: every long one sits at or before the client's last cache_control marker, the part it asked the provider to cache.";
    }
  }
  if ("unchanged" in ts) {
    const were = ts.unchanged === 1 ? "it was" : "they were";
    return `Token savers shortened nothing: they looked at ${results(ts.unchanged)} of ${MIN_CHARS} characters or more, but ${were} not a kind they shorten (diffs, git status, trees, directory listings, search results, logs with repeated lines) or would not get ${Math.round(MIN_SAVING * 100)} % shorter.`;
  }
  const rules = Object.entries(ts.rules)
    .map(([rule, n]) => `${n} ${rule.replace(/_/g, " ")}`)
    .join(", ");
  return `Token savers shortened ${results(ts.results)} (${rules}): ${ts.charsBefore.toLocaleString("en-US")} → ${ts.charsAfter.toLocaleString("en-US")} characters, about ${ts.tokensSaved.toLocaleString("en-US")} tokens saved.`;
}
