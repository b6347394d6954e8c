/**
 * `switchyard calls inspect ID` (src/cli/calls.ts): without `--json` the route trace is lines to read —
 * the outcome with its status and time, the candidates, each decision and each attempt with its
 * classification, effect and error, warnings and token savers — not the admin API's JSON object.
 */
import { expect, test } from "bun:test";
import type { RouteTrace } from "../../pipeline/ports.ts";
import { inspectCommand, traceLines } from "../../src/cli/calls.ts";

const FALLBACK: RouteTrace = {
  routeId: "sy_test",
  requestId: "req_test",
  ts: Date.UTC(2026, 11, 2, 14, 12, 0, 984),
  clientFormat: "anthropic-messages",
  requestedModel: "coding",
  keyName: "ci",
  candidates: ["glm/glm-5.3", "oai/gpt-5-mini"],
  decisions: [
    { subject: "glm/glm-5.3 @ glm-main", verdict: "in", reason: "first eligible account; the provider's only account" },
    { subject: "oai/gpt-5-mini @ oai-main", verdict: "in", reason: "first eligible account; the provider's only account" },
  ],
  attempts: [
    { target: "glm/glm-5.3", providerId: "glm", model: "glm-5.3", accountId: "glm-main", startMs: 2, durationMs: 40, status: 429, classification: "rate_limited", effect: "cooldown 90s for glm-5.3", error: "Rate limited" },
    { target: "oai/gpt-5-mini", providerId: "oai", model: "gpt-5-mini", accountId: "oai-main", startMs: 43, durationMs: 1250, status: 200 },
  ],
  warnings: [{ code: "dropped_field", message: "top_k is not supported by openai-chat: dropped" }],
  outcome: "ok",
  status: 200,
  totalMs: 1294,
  transport: "http",
  tokenSaver: { results: 2, charsBefore: 12000, charsAfter: 3000, tokensSaved: 2250, rules: { diff: 1, log: 1 } },
};

test("a call that fell back reads as its outcome, candidates, decisions and both attempts", () => {
  expect(traceLines(FALLBACK)).toEqual([
    "sy_test  2026-12-02T14:12:00.984Z",
    "requested   coding (anthropic-messages), key ci",
    "outcome     ok 200, 1.3 s",
    "transport   http",
    "candidates  glm/glm-5.3 → oai/gpt-5-mini",
    "decisions",
    "  in    glm/glm-5.3 @ glm-main: first eligible account; the provider's only account",
    "  in    oai/gpt-5-mini @ oai-main: first eligible account; the provider's only account",
    "attempts",
    "  1. glm/glm-5.3 @ glm-main → 429, started +2 ms, took 40 ms",
    "     rate_limited → cooldown 90s for glm-5.3",
    "     error: Rate limited",
    "  2. oai/gpt-5-mini @ oai-main → 200, started +43 ms, took 1.3 s",
    "warnings",
    "  dropped_field: top_k is not supported by openai-chat: dropped",
    "Token savers shortened 2 tool results (1 diff, 1 log): 12,000 → 3,000 characters, about 2,250 tokens saved.",
  ]);
});

test("every token-saver outcome is one sentence: shortened, skipped and why, or looked at long results and shortened none (that one was silent)", () => {
  const last = (tokenSaver: RouteTrace["tokenSaver"]) => traceLines({ ...FALLBACK, warnings: [], tokenSaver }).at(-1);
  expect(last({ unchanged: 2 })).toBe(
    "Token savers shortened nothing: they looked at 2 tool results of 500 characters or more, but they were not a kind they shorten (diffs, git status, trees, directory listings, compiler output, search results, logs with repeated lines) or would not get 10 % shorter.",
  );
  expect(last({ skipped: "header" })).toBe("Token savers skipped: the request turned them off (X-Switchyard-Token-Saver: off).");
  expect(last({ skipped: "prompt_cache" })).toBe("Token savers skipped: this provider's prompt cache needs the history byte for byte (Anthropic-format providers with prompt caching).");
  expect(last({ skipped: "cache_marker" })).toBe("Token savers left the tool results alone: the client marks its conversation with cache_control and this provider receives the markers, so every tool result goes as written (a marker moving forward never finds a result it passes changed).");
  expect(last({ results: 1, charsBefore: 900, charsAfter: 300, tokensSaved: 150, rules: { git_status: 1 } })).toBe("Token savers shortened 1 tool result (1 git status): 900 → 300 characters, about 150 tokens saved.");
  expect(traceLines({ ...FALLBACK, tokenSaver: undefined }).some((l) => l.startsWith("Token savers"))).toBe(false);
});

test("a request refused before routing says no upstream call was made", () => {
  const refused: RouteTrace = { routeId: "sy_r", requestId: "req_r", ts: 0, clientFormat: "openai-chat", requestedModel: "", candidates: [], decisions: [], attempts: [], warnings: [], outcome: "rejected", status: 400, totalMs: 0 };
  expect(traceLines(refused)).toEqual([
    "sy_r  1970-01-01T00:00:00.000Z",
    "requested   (no model) (openai-chat)",
    "outcome     rejected 400, 0 ms",
    // a trace of an earlier version names no transport: unknown, not guessed (try17's tryout)
    "transport   unknown (recorded before switchyard kept how a call came)",
    "candidates  none",
    "attempts    none (refused before any upstream call)",
  ]);
  expect(traceLines({ ...refused, transport: "websocket" })[3]).toBe("transport   websocket (Codex's Responses WebSocket: one response.create frame in, the reply's events out as JSON frames)");
});

test("a refused request's trace names the status, the error type the client's body carried, the field and the message the client got", () => {
  const refused: RouteTrace = {
    routeId: "sy_m", requestId: "req_m", ts: 0, clientFormat: "anthropic-messages", requestedModel: "cluade", candidates: [], decisions: [], attempts: [], warnings: [], outcome: "rejected", status: 404, totalMs: 1,
    error: { status: 404, kind: "model_not_found", code: "model_not_found", param: "model", message: "The model `cluade` is not an alias or combo.", clientType: "not_found_error" },
  };
  expect(traceLines(refused)).toEqual([
    "sy_m  1970-01-01T00:00:00.000Z",
    "requested   cluade (anthropic-messages)",
    "outcome     rejected 404, 1 ms",
    "transport   unknown (recorded before switchyard kept how a call came)",
    "error       404 not_found_error (model): The model `cluade` is not an alias or combo.",
    "candidates  none",
    "attempts    none (refused before any upstream call)",
  ]);
  // A trace recorded before the client's type was kept has the gateway's own kind only: said as such (tryout5)
  const { clientType: _, ...old } = refused.error!;
  expect(traceLines({ ...refused, error: old })[4]).toBe("error       404 · gateway error kind model_not_found (the type the client read was not recorded) (model): The model `cluade` is not an alias or combo.");
});

test("inspect prints those lines; with --json the admin API's object", async () => {
  const run = async (json: boolean) => {
    const out: string[] = [];
    await inspectCommand({ id: "sy_test", bodies: false, json }, async () => FALLBACK, {
      out: (l) => out.push(l),
      fail: (l) => {
        throw new Error(typeof l === "string" ? l : l.join("\n"));
      },
    });
    return out;
  };
  expect(await run(false)).toEqual(traceLines(FALLBACK));
  expect(JSON.parse((await run(true)).join("\n"))).toEqual(FALLBACK);
});
