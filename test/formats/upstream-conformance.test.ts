/**
 * What the gateway SENDS to a provider is a request that provider's API accepts (issue "Formats"): the
 * fake upstreams of the other tests accept any body, so a translated request the real API refuses (a
 * member it does not take, a field in the wrong place, a wrong type) would go unnoticed until a user got
 * a 400. Every client request of the shared fixtures (real Claude Code / Codex captures, the request of
 * each regression case) and the hand-written requests of test/support/conformance-requests.ts (tools and
 * tool results, images, documents, thinking and reasoning, response formats, stop lists, sampling) is
 * translated by pipeline/translate.ts for gpt-5 and gpt-4.1 (Chat Completions and Responses),
 * claude-sonnet-4-5 and gemini-2.5-pro, and the body is validated against that API's published request
 * schema (test/fixtures/schemas, README there) plus the rules its documentation states in prose
 * (test/support/upstream-rules.ts). Native pairs (the client's own bytes to its own API) are not the
 * gateway's writing and are left out.
 *
 * Where a published schema is stricter than the live API and the gateway writes what the API's own
 * clients write, test/support/upstream-conformance.ts LIVE_ACCEPTED says so with the evidence; every
 * other violation fails here.
 */
import { describe, expect, test } from "bun:test";
import { allResults, explain, unexplained, validatorFor } from "../support/upstream-conformance.ts";
import { refusedLines } from "../support/upstream-schemas.ts";
import { ruleViolations } from "../support/upstream-rules.ts";

const results = allResults();

describe("the schemas and rules refuse what the APIs refuse (this test can fail)", () => {
  const refused = (schema: string, body: unknown) => {
    const v = validatorFor(schema);
    return v(body) ? [] : explain(v.errors ?? []);
  };
  test("OpenAI Chat Completions", () => {
    expect(refused("openai-chat-completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }] })).toEqual([]);
    expect(refused("openai-chat-completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }], max_output_tokens: 5 })).toEqual(["/max_output_tokens: is not a member the API takes"]);
    expect(refused("openai-chat-completions", { model: "gpt-5", messages: [{ role: "assistant", content: "hi", reasoning: "x" }] })).toEqual(["/messages/0/reasoning: is not a member the API takes"]);
    expect(refused("openai-chat-completions", { model: "gpt-5", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x", detail: "huge" } }] }] })).toEqual([
      '/messages/0/content/0/image_url/detail: must be one of ["auto","low","high"]',
    ]);
  });
  test("OpenAI Responses", () => {
    expect(refused("openai-responses", { model: "gpt-5", input: [{ type: "function_call_output", call_id: "c", output: "x" }] })).toEqual([]);
    expect(refused("openai-responses", { model: "gpt-5", input: "hi", messages: [] })).toEqual(["/messages: is not a member the API takes"]);
    expect(refused("openai-responses", { model: "gpt-5", input: "hi", max_output_tokens: "5" })).toContain("/max_output_tokens: must be integer");
  });
  test("Anthropic Messages", () => {
    expect(refused("anthropic-messages", { model: "claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })).toEqual([]);
    expect(refused("anthropic-messages", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] })).toEqual(["/: must have required property 'max_tokens'"]);
    expect(refused("anthropic-messages", { model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }], stop: ["x"] })).toEqual(["/stop: is not a member the API takes"]);
    expect(ruleViolations("anthropic-messages", { max_tokens: 1000, thinking: { type: "enabled", budget_tokens: 1024 }, temperature: 0.2, messages: [] }, "claude-sonnet-4-5")).toEqual([
      "rule thinking-budget-below-max-tokens: budget_tokens 1024 ≥ max_tokens 1000",
      "rule thinking-temperature: /temperature 0.2 with thinking",
    ]);
  });
  test("Gemini generateContent", () => {
    expect(refused("gemini-generate-content", { contents: [{ role: "user", parts: [{ text: "hi" }] }] })).toEqual([]);
    expect(refused("gemini-generate-content", { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { max_tokens: 5 } })).toEqual([
      "/generationConfig/max_tokens: is not a member the API takes",
    ]);
    expect(ruleViolations("gemini-generate-content", { contents: [], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }, "gemini-2.5-pro")).toEqual([
      "rule thinking-budget-2.5-pro: /generationConfig/thinkingConfig/thinkingBudget 0 (128–32768 or -1)",
    ]);
  });
});

describe("what LIVE_ACCEPTED lets through is only what it names (this test can fail)", () => {
  const messages = [{ role: "user", content: "hi" }];
  test("context_management only with the context-management beta header", () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 5, messages, context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] } };
    expect(refusedLines({ schema: "anthropic-messages", body }, "claude-sonnet-4-5")).toEqual(["/context_management: is not a member the API takes"]);
    expect(refusedLines({ schema: "anthropic-messages", body, headers: { "anthropic-beta": "claude-code-20250219,context-management-2025-06-27" } }, "claude-sonnet-4-5")).toEqual([]);
    expect(refusedLines({ schema: "anthropic-messages", body: { ...body, stop: ["x"] }, headers: { "anthropic-beta": "context-management-2025-06-27" } }, "m")).toEqual(["/stop: is not a member the API takes"]);
  });
  test("reasoning_content only for an openai-compatible server", () => {
    const body = { model: "deepseek-chat", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "x", reasoning_content: "r" }] };
    expect(refusedLines({ schema: "openai-chat-completions", body }, "gpt-5")).toContain("/messages/1/reasoning_content: is not a member the API takes");
    expect(refusedLines({ schema: "openai-chat-completions", body, openaiCompatible: true }, "deepseek-chat")).toEqual([]);
  });
  test("Codex's own Responses members: input message id, client_metadata, namespace tool parameters; nothing else", () => {
    const body = {
      model: "gpt-5",
      input: [{ type: "message", id: "msg_1", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      client_metadata: { session_id: "s" },
      tools: [{ type: "namespace", name: "ns", description: "d", tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }] }],
    };
    expect(refusedLines({ schema: "openai-responses", body }, "gpt-5")).toEqual([]);
    expect(refusedLines({ schema: "openai-responses", body: { ...body, client_metadata: { n: 1 } } }, "gpt-5")).toEqual(["/client_metadata: is not a member the API takes"]);
    expect(refusedLines({ schema: "openai-responses", body: { ...body, input: [{ ...body.input[0], status: 3 }] } }, "gpt-5").length).toBeGreaterThan(0);
  });
});

describe("every translated request conforms to its target API", () => {
  test("coverage: the harness translated and checked the inputs (not all passed through or refused)", () => {
    const checked = results.filter((r) => r.outcome === "checked");
    expect(checked.length).toBeGreaterThanOrEqual(400);
    for (const schema of ["openai-chat-completions", "openai-responses", "anthropic-messages", "gemini-generate-content"]) {
      expect(checked.filter((r) => r.target.schema === schema).length).toBeGreaterThanOrEqual(60);
    }
    // The only refusal is B41's previous_response_id for a target without server-side history.
    expect(results.filter((r) => r.outcome === "refused").map((r) => r.key)).toEqual([
      "cases/B41.json → anthropic/claude-sonnet-4-5",
      "cases/B41.json → gemini/gemini-2.5-pro",
    ]);
  });
  for (const r of results) {
    if (r.outcome !== "checked") continue;
    test(r.key, () => {
      expect(unexplained(r)).toEqual([]);
    });
  }
});

/**
 * Not a schema rule (found while reading the translated bodies): a Chat message's `name` has no member
 * in a Responses input item, so the Responses body goes without it, and a `dropped_field` warning says
 * so, as on the Anthropic and Gemini lanes (SPEC F-2).
 */
describe("a Chat message name dropped for a Responses upstream is named in a dropped_field warning", () => {
  for (const r of results) {
    if (r.outcome !== "checked" || r.input.clientFormat !== "openai-chat" || r.target.schema !== "openai-responses") continue;
    const named = (r.input.body.messages as Array<{ name?: unknown }>).some((m) => m.name !== undefined);
    if (!named) continue;
    test(r.key, () => {
      expect(r.warnings?.filter((w) => w.code === "dropped_field" && /name/i.test(w.message)).length).toBeGreaterThan(0);
    });
  }
});
