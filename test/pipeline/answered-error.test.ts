/**
 * The error a client got, as the route trace keeps it (pipeline/context.ts errorAnswer) and as the
 * dashboard's call view and `switchyard calls inspect` head it (pipeline/trace-words.ts
 * answeredErrorHead): the type and code of the body the client's format wrote, not the gateway's own
 * kind (tryout5 saw "500 api_error" for a Chat client that read `server_error`, and "429 rate_limit ·
 * key_budget_exceeded" for a Codex client that read `usage_limit_reached`).
 */
import { expect, test } from "bun:test";
import { errorAnswer, newContext, type Endpoint } from "../../pipeline/context.ts";
import { refusalError } from "../../pipeline/key-limits.ts";
import { answeredErrorHead } from "../../pipeline/trace-words.ts";
import { hubError, type HubError } from "../../formats/hub.ts";
import { TEST_IDS } from "../support/context.ts";

const PATHS: Record<Endpoint, string> = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages", count_tokens: "/v1/messages/count_tokens", gemini: "/v1beta/models/m:generateContent", gemini_count_tokens: "/v1beta/models/m:countTokens" };
const now = Date.UTC(2026, 11, 6, 23, 0, 0);

/** The trace's error head and the body's error object for `err` answered on `endpoint`. */
async function answered(endpoint: Endpoint, err: HubError): Promise<{ head: string; body: Record<string, unknown> }> {
  const ctx = newContext({ request: new Request(`http://127.0.0.1:1${PATHS[endpoint]}`, { method: "POST" }), endpoint, peer: "127.0.0.1" }, now, TEST_IDS);
  const res = errorAnswer(ctx, err);
  const body = (await res.json()) as { error: Record<string, unknown> };
  return { head: answeredErrorHead(ctx.trace.error!), body: body.error };
}

const upstream500 = () => hubError("api_error", "upstream exploded", { status: 500 });
const spent = () => refusalError("team-a", { limit: "budget", budget: { window: "1d", usd: 0.05 }, used: 0.138, max: 0.05, retryAfterMs: 3_600_000 }, now);

test("a 500 after every target failed: each client's own type, as its body says", async () => {
  const seen = {
    chat: await answered("chat", upstream500()),
    responses: await answered("responses", upstream500()),
    messages: await answered("messages", upstream500()),
    gemini: await answered("gemini", upstream500()),
  };
  expect(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.head]))).toEqual({ chat: "500 server_error", responses: "500 server_error", messages: "500 api_error", gemini: "500 INTERNAL" });
  expect([seen.chat.body.type, seen.messages.body.type, seen.gemini.body.status]).toEqual(["server_error", "api_error", "INTERNAL"]);
});

test("a key's used-up budget: Chat rate_limit_error, Anthropic rate_limit_error, Responses usage_limit_reached, each with the code its body carried", async () => {
  const chat = await answered("chat", spent());
  const messages = await answered("messages", spent());
  const responses = await answered("responses", spent());
  expect([chat.head, messages.head, responses.head]).toEqual(["429 rate_limit_error · key_budget_exceeded", "429 rate_limit_error", "429 usage_limit_reached · key_budget_exceeded"]);
  expect([chat.body.type, chat.body.code, messages.body.type, messages.body.code, responses.body.type, responses.body.code]).toEqual([
    "rate_limit_error",
    "key_budget_exceeded",
    "rate_limit_error",
    undefined,
    "usage_limit_reached",
    "key_budget_exceeded",
  ]);
});

test("a trace recorded before the client's type was kept says its kind is the gateway's, not what the client got", () => {
  expect(answeredErrorHead({ status: 500, kind: "api_error", message: "upstream exploded" })).toBe("500 · gateway error kind api_error (the type the client read was not recorded)");
  expect(answeredErrorHead({ status: 429, kind: "rate_limit", code: "key_budget_exceeded", message: "…" })).toBe("429 · gateway error kind rate_limit, code key_budget_exceeded (the type the client read was not recorded)");
});
