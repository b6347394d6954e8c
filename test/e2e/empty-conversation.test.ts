/**
 * A translated request with no conversation left for its target (a new user's tryout, 2026-12-04):
 * it went upstream as Anthropic `messages: []` or Gemini `contents: []`, which the real providers
 * refuse with a 400 about a field the client did not write that way, and a combo spent an attempt on
 * every target. Now a 400 in the client's own format names the client's field and why nothing is left,
 * before any upstream call (pipeline/empty-conversation.ts); a combo target of another format that can
 * take the request still serves it.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["anth", "anthropic"], ["oai", "openai"], ["gem", "gemini"], ["anthc", "anthropic-compatible"], ["resp", "openai-responses"])}
accounts:
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
  - id: anthc-1
    provider: anthc
    api_key: env:FAKE_KEY
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: oai-1
    provider: oai
    api_key: env:FAKE_KEY
  - id: gem-1
    provider: gem
    api_key: env:FAKE_KEY
combos:
  - name: anth-then-oai
    targets:
      - model: anth/claude-x
      - model: oai/gpt-x
  - name: two-gems
    targets:
      - model: gem/gemini-x
      - model: gem/gemini-y
`;

const suite = gatewaySuite(YAML);

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${suite.gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const openaiError = (message: string, param: string) => ({ error: { message, type: "invalid_request_error", param, code: null } });
const GEMINI_NEEDS = "A Gemini request needs at least one user or model turn with content";
const ANTHROPIC_NEEDS = "An Anthropic Messages request needs at least one user or assistant message with content";
const RESPONSES_NEEDS = "A Responses request needs at least one input item (or a previous_response_id, conversation or prompt that holds the conversation)";
const REMOTE_IMAGE = "an image given by remote URL was not sent: Gemini takes only inline data, gs:// or Files API URIs, and the gateway does not fetch";

describe("nothing left to send after translation: a 400 in the client's format, no upstream call", () => {
  test("Messages → Gemini, the only block of an unknown type: named (not an 'empty message')", async () => {
    const r = await post("/v1/messages", { model: "gem/gemini-x", max_tokens: 10, messages: [{ role: "user", content: [{ type: "bogus" }] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `Nothing in \`messages\` can be sent to gem/gemini-x: the content block of type "bogus" has no Gemini equivalent. ${GEMINI_NEEDS}; the request was not sent to gem/gemini-x.`,
      },
    });
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Chat → Gemini, the only content an image by remote URL", async () => {
    const r = await post("/v1/chat/completions", {
      model: "gem/gemini-x",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }],
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(openaiError(`Nothing in \`messages\` can be sent to gem/gemini-x: ${REMOTE_IMAGE}. ${GEMINI_NEEDS}; the request was not sent to gem/gemini-x.`, "messages"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Responses → Gemini: an unknown input item only; no input at all; only instructions", async () => {
    const bogus = await post("/v1/responses", { model: "gem/gemini-x", input: [{ type: "bogus" }] });
    expect(bogus.status).toBe(400);
    expect(bogus.body).toEqual(
      openaiError(`Nothing in \`input\` can be sent to gem/gemini-x: the input item of type "bogus" has no Gemini equivalent. ${GEMINI_NEEDS}; the request was not sent to gem/gemini-x.`, "input"),
    );
    const none = await post("/v1/responses", { model: "gem/gemini-x" });
    expect(none.status).toBe(400);
    expect(none.body).toEqual(openaiError(`The request has no \`input\`. ${GEMINI_NEEDS}; the request was not sent to gem/gemini-x.`, "input"));
    const instructions = await post("/v1/responses", { model: "gem/gemini-x", instructions: "be nice" });
    expect(instructions.status).toBe(400);
    expect(instructions.body).toEqual(openaiError(`The request has no \`input\`, only instructions. ${GEMINI_NEEDS}; the request was not sent to gem/gemini-x.`, "input"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Responses → Anthropic with input []", async () => {
    const r = await post("/v1/responses", { model: "anth/claude-x", input: [] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(openaiError(`\`input\` is empty. ${ANTHROPIC_NEEDS}; the request was not sent to anth/claude-x.`, "input"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Chat → Anthropic: only a system message; only an empty user message", async () => {
    const system = await post("/v1/chat/completions", { model: "anth/claude-x", messages: [{ role: "system", content: "be nice" }] });
    expect(system.status).toBe(400);
    expect(system.body).toEqual(openaiError(`\`messages\` has only system or developer messages. ${ANTHROPIC_NEEDS}; the request was not sent to anth/claude-x.`, "messages"));
    const empty = await post("/v1/chat/completions", { model: "anth/claude-x", messages: [{ role: "user", content: "" }] });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(openaiError(`Nothing in \`messages\` can be sent to anth/claude-x: 1 message has no content. ${ANTHROPIC_NEEDS}; the request was not sent to anth/claude-x.`, "messages"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Gemini client → Anthropic, the only part of a kind the parser does not read: INVALID_ARGUMENT", async () => {
    const r = await post("/v1beta/models/anth/claude-x:generateContent", { contents: [{ role: "user", parts: [{ toolCall: { id: "t1" } }] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: {
        code: 400,
        message: `Nothing in \`contents\` can be sent to anth/claude-x: the part of kind "toolCall" has no Anthropic equivalent. ${ANTHROPIC_NEEDS}; the request was not sent to anth/claude-x.`,
        status: "INVALID_ARGUMENT",
      },
    });
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Messages → a third-party Anthropic server (tidy lane), only an empty message: the same", async () => {
    const r = await post("/v1/messages", { model: "anthc/glm-x", max_tokens: 10, messages: [{ role: "user", content: [] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: `Nothing in \`messages\` can be sent to anthc/glm-x: messages with no content were removed. ${ANTHROPIC_NEEDS}; the request was not sent to anthc/glm-x.` },
    });
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("a combo: a target of another format that takes the request serves it (OpenAI takes a system message alone)", async () => {
    const r = await post("/v1/chat/completions", { model: "anth-then-oai", messages: [{ role: "system", content: "be nice" }] });
    expect(r.status).toBe(200);
    expect(suite.gw.fake.requests.map((q) => q.path)).toEqual(["/v1/chat/completions"]);
    expect(suite.gw.fake.requests[0]!.body.messages).toEqual([{ role: "system", content: "be nice" }]);
  });

  test("a combo of two Gemini targets: no attempt on either", async () => {
    const r = await post("/v1/chat/completions", {
      model: "two-gems",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }],
    });
    expect(r.status).toBe(400);
    expect((r.body as { error: { param: string } }).error.param).toBe("messages");
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("something left: a block of an unknown type beside text is named in dropped_input_item, not counted as an empty message", async () => {
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "gem/gemini-x", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "bogus" }] }, { role: "assistant", content: [{ type: "bogus" }] }, { role: "user", content: "again" }] }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]")).toEqual([
      { code: "dropped_input_item", message: "Content blocks with no equivalent in the request to gem/gemini-x were not sent: bogus." },
    ]);
    expect(suite.gw.fake.requests[0]!.body.contents).toEqual([{ role: "user", parts: [{ text: "hi" }, { text: "again" }] }]);
  });
});

describe("a Responses target (openai-responses) with nothing left: refused the same way (it went upstream as input: [])", () => {
  test("Messages → Responses, the only block of an unknown type (with a system prompt, which alone is no conversation)", async () => {
    const r = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 10, system: "be nice", messages: [{ role: "user", content: [{ type: "bogus" }] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `Nothing in \`messages\` can be sent to resp/gpt-x: the content block of type "bogus" has no Responses equivalent. ${RESPONSES_NEEDS}; the request was not sent to resp/gpt-x.`,
      },
    });
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Gemini client → Responses, the only part of a kind the parser does not read: INVALID_ARGUMENT", async () => {
    const r = await post("/v1beta/models/resp/gpt-x:generateContent", { contents: [{ role: "user", parts: [{ toolCall: { id: "t1" } }] }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: {
        code: 400,
        message: `Nothing in \`contents\` can be sent to resp/gpt-x: the part of kind "toolCall" has no Responses equivalent. ${RESPONSES_NEEDS}; the request was not sent to resp/gpt-x.`,
        status: "INVALID_ARGUMENT",
      },
    });
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Chat → Responses, only an empty user message", async () => {
    const r = await post("/v1/chat/completions", { model: "resp/gpt-x", messages: [{ role: "user", content: "" }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(openaiError(`Nothing in \`messages\` can be sent to resp/gpt-x: 1 message has no content. ${RESPONSES_NEEDS}; the request was not sent to resp/gpt-x.`, "messages"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("a system message alone is an input item, as it is a Chat conversation: sent", async () => {
    const r = await post("/v1/chat/completions", { model: "resp/gpt-x", messages: [{ role: "system", content: "be nice" }] });
    expect(r.status).toBe(200);
    expect(suite.gw.fake.requests.map((q) => q.path)).toEqual(["/v1/responses"]);
    expect((suite.gw.fake.requests[0]!.body.input as Array<{ role: string }>).map((i) => i.role)).toEqual(["system"]);
  });
});

describe("a malformed Chat tool on a translated lane", () => {
  test("{type: function} without function: a 400 naming tools[0].function (as OpenAI answers), not a dropped_tool warning and a 200", async () => {
    const r = await post("/v1/chat/completions", { model: "gem/gemini-x", messages: [{ role: "user", content: "hi" }], tools: [{ type: "function" }] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(openaiError('tools[0].function: a function tool needs "function" (its name and parameters).', "tools[0].function"));
    expect(suite.gw.fake.requests.length).toBe(0);
  });
});
