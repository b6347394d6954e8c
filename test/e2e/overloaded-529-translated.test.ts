/**
 * Anthropic's 529 (overloaded) reaches a client of another format as 503, the status OpenAI's and
 * Gemini's APIs use for it, in the client's own error format and with the upstream's Retry-After when
 * it gave one (sdk16 S4: a Chat client got `HTTP/1.1 529 HM`). An Anthropic Messages client of the
 * same upstream still gets 529. Real gateway, fake Anthropic-compatible upstream answering 529.
 */
import { expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

const OVERLOADED = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a Chat client gets 503 with Retry-After and an OpenAI error body; an Anthropic client of the same upstream keeps 529", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ status: 529, headers: { "retry-after": "7" }, json: OVERLOADED }));
  const chat = await post("/v1/chat/completions", { model: "anthc/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] });
  expect(chat.status).toBe(503);
  expect(chat.headers.get("retry-after")).toBe("7");
  expect(await chat.json()).toEqual({ error: { message: "Overloaded", type: "server_error", param: null, code: "overloaded_error" } });

  // (another model: the first one's account backs off after its 529)
  const anthropic = await post("/v1/messages", { model: "anthc/claude-opus-4-5", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
  expect(anthropic.status).toBe(529);
  expect(((await anthropic.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
  expect(gw.fake.requests.map((r) => r.model)).toEqual(["claude-sonnet-4-5", "claude-opus-4-5"]);
});

test("a Chat client gets 503 without Retry-After when the upstream named no wait; Gemini and Responses clients 503 too", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ status: 529, json: OVERLOADED }));
  const chat = await post("/v1/chat/completions", { model: "anth/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] });
  expect(chat.status).toBe(503);
  expect(chat.headers.get("retry-after")).toBeNull();
  expect(((await chat.json()) as { error: { code: string } }).error.code).toBe("overloaded_error");
  // (each request another model: a model's account backs off after its 529)
  const responses = await post("/v1/responses", { model: "anth/claude-opus-4-5", input: "x" });
  expect(responses.status).toBe(503);
  const gemini = await post("/v1beta/models/anth%2Fclaude-haiku-4-5:generateContent", { contents: [{ role: "user", parts: [{ text: "x" }] }] });
  expect(gemini.status).toBe(503);
  expect(((await gemini.json()) as { error: { code: number; status: string } }).error).toMatchObject({ code: 503, status: "UNAVAILABLE" });
  expect(gw.fake.requests.map((r) => r.model)).toEqual(["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"]);
});
