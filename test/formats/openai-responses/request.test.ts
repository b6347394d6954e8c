import { describe, expect, test } from "bun:test";
import { clientRequest, regressionCase } from "../../support/fixtures.ts";
import { FormatError, type HubRequest, type ThinkingPart, type ToolCallPart } from "../../../formats/hub.ts";
import type { BuildTarget } from "../../../formats/codec.ts";
import { openaiResponses, assertNoPreviousResponse } from "../../../formats/openai-responses/index.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { pointer as at, expectUpstream } from "../../support/json.ts";

const { parseRequest, buildRequest } = openaiResponses as Required<typeof openaiResponses>;

const CODEX: BuildTarget = { model: "gpt-5-codex", kind: "codex", family: "openai", stream: true };
const OPENAI: BuildTarget = { model: "gpt-x", kind: "openai", family: "openai", stream: true };

/** A Codex body as its upstream should see it after a hub round trip: message/output item ids (no hub slot) and item status are not carried. */
function withoutItemIds(body: any): any {
  return {
    ...body,
    input: body.input.map((item: any) => {
      const { id, status, ...rest } = item;
      return item.type === "function_call" ? { ...rest, id } : rest;
    }),
  };
}

describe("Codex CLI bodies", () => {
  for (const file of ["codex-default.json", "codex-tool-use-1.json", "codex-tool-use-2.json"]) {
    test(`${file}: parses, and rebuilds for kind codex with everything kept`, async () => {
      const body = await clientRequest(file);
      const hub = parseRequest(body);
      expect(hub.model).toBe("gpt-5-codex");
      expect(hub.stream).toBe(true);
      expect(hub.system).toEqual([]); // Codex sends no instructions: its prompt is developer messages
      expect(hub.messages.slice(0, 4).map((m) => m.role)).toEqual(["developer", "developer", "user", "user"]);
      expect(hub.messages[3]!.content).toEqual([{ type: "text", text: "say hi" }]);
      expect(hub.store).toBe(false);
      expect(hub.include).toEqual(["reasoning.encrypted_content"]);
      expect(hub.promptCacheKey).toBe(body.prompt_cache_key);
      expect(hub.reasoning).toEqual({ summary: "auto" });
      expect(hub.toolChoice).toEqual({ type: "auto" });
      expect(hub.parallelToolCalls).toBe(true);
      expect(hub.source.extra.client_metadata).toEqual(body.client_metadata);

      // tools: functions flat, the namespace's functions flattened with `namespace`, web_search provider-only
      const ns = body.tools.find((t: any) => t.type === "namespace");
      const nsFns = hub.tools.filter((t) => t.kind === "function" && t.namespace === ns.name);
      expect(nsFns.map((t) => (t as { name: string }).name)).toEqual(ns.tools.map((t: any) => t.name));
      expect(hub.tools.filter((t) => t.kind === "provider").map((t) => (t as any).raw.type)).toEqual(["namespace", "web_search"]);
      const getGoal = hub.tools.find((t) => t.kind === "function" && t.name === "get_goal");
      expect(getGoal).toMatchObject({ parameters: { type: "object", properties: {}, required: [], additionalProperties: false }, strict: false });

      const built = buildRequest(hub, CODEX);
      expect(built.warnings).toEqual([]);
      // The Codex backend requires `instructions` (400 "Instructions are required"): "" is added.
      expect(built.body).toEqual({ ...withoutItemIds(body), instructions: "" });
      // B40-style ids: an item id the client minted for an output (`fco_…`) is not sent
      expect(JSON.stringify(built.body.input)).not.toContain('"fco_');
    });
  }

  test("codex-tool-use-2: the tool round trip becomes an assistant tool_call turn and a user tool_result turn", async () => {
    const body = await clientRequest("codex-tool-use-2.json");
    const hub = parseRequest(body);
    const [assistant, result] = hub.messages.slice(-2);
    expect(assistant).toEqual({
      role: "assistant",
      content: [{ type: "tool_call", id: "call_fake_1", name: "exec_command", arguments: '{"cmd":"echo fake-tool-ran"}', itemId: "fc_fake_1" }],
    });
    expect(result!.role).toBe("user");
    expect(result!.content).toEqual([{ type: "tool_result", callId: "call_fake_1", content: [{ type: "text", text: body.input.at(-1).output }] }]);
  });

  test("a namespaced function call in the history keeps its namespace through the round trip", () => {
    const hub = parseRequest({
      model: "m",
      input: [
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "close_agent", namespace: "multi_agent_v1", arguments: '{"target":"a"}' },
        { type: "function_call_output", call_id: "call_1", output: "closed" },
      ],
      tools: [{ type: "namespace", name: "multi_agent_v1", description: "agents", tools: [{ type: "function", name: "close_agent", parameters: { type: "object" } }] }],
    });
    expect((hub.messages[0]!.content[0] as ToolCallPart).namespace).toBe("multi_agent_v1");
    const body = buildRequest(hub, OPENAI).body as any;
    expect(body.input[0]).toEqual({ type: "function_call", id: "fc_1", call_id: "call_1", name: "close_agent", namespace: "multi_agent_v1", arguments: '{"target":"a"}' });
    expect(body.tools).toEqual([
      { type: "namespace", name: "multi_agent_v1", description: "agents", tools: [{ type: "function", name: "close_agent", strict: false, parameters: { type: "object" } }] },
    ]);
  });
});

describe("regression cases", () => {
  test("B40: with store:false an id-only reasoning item is dropped (kind codex), encrypted reasoning requested", async () => {
    const c = await regressionCase("B40");
    const hub = parseRequest(c.request);
    const built = buildRequest(hub, { model: "gpt-x", kind: c.upstream.kind, family: "openai", stream: true });
    expectUpstream(built.body, c.expect.upstream_request);
    expect(built.warnings.map((w) => w.code)).toContain("dropped_reasoning");
  });

  test("B40 variant: an id-only reasoning item is kept when store is not false; one with encrypted_content always", () => {
    const req = {
      model: "m",
      input: [
        { role: "user", content: "hi" },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "reasoning", id: "rs_2", summary: [{ type: "summary_text", text: "s" }], encrypted_content: "gAAA" },
      ],
    };
    const stored = buildRequest(parseRequest(req), { ...OPENAI, kind: "openai-responses" }).body as any;
    expect(stored.input.slice(1)).toEqual([
      { type: "reasoning", id: "rs_1", summary: [] },
      { type: "reasoning", id: "rs_2", summary: [{ type: "summary_text", text: "s" }], encrypted_content: "gAAA" },
    ]);
    const codex = buildRequest(parseRequest(req), CODEX).body as any;
    expect(codex.input.map((i: any) => i.id ?? i.role)).toEqual(["user", "rs_2"]);
  });

  test("B41: assertNoPreviousResponse is a 400 invalid_request_error naming previous_response_id", async () => {
    const c = await regressionCase("B41");
    const hub = parseRequest(c.request);
    expect(hub.previousResponseId).toBe("resp_unknown");
    let thrown: unknown;
    try {
      assertNoPreviousResponse(hub);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FormatError);
    const err = (thrown as FormatError).error;
    expect(err.status).toBe(400);
    expect(err.param).toBe(c.expect.error.param);
    expect(openaiResponses.errorBody(err)).toMatchObject({ error: { type: "invalid_request_error", param: "previous_response_id" } });
    expect(() => assertNoPreviousResponse(parseRequest({ model: "m", input: "x" }))).not.toThrow();
    // a Responses target keeps it
    expect((buildRequest(hub, OPENAI).body as any).previous_response_id).toBe("resp_unknown");
  });

  test("B31: Chat tool history to a Responses upstream", async () => {
    const c = await regressionCase("B31");
    const hub = openaiChat.parseRequest!(c.request);
    const built = buildRequest(hub, OPENAI);
    expectUpstream(built.body, c.expect.upstream_request);
    const body = built.body as any;
    expect(body.input[0]).toEqual({ type: "message", role: "system", content: [{ type: "input_text", text: "be brief" }] });
    expect(body.tools[0]).toEqual({ type: "function", name: "get_weather", strict: false, parameters: c.request.tools[0].function.parameters });
  });

  test("B37: Anthropic max_tokens becomes max_output_tokens", async () => {
    const c = await regressionCase("B37");
    const hub = anthropicMessages.parseRequest!(c.request);
    const built = buildRequest(hub, OPENAI);
    expectUpstream(built.body, c.expect.upstream_request);
    expect((built.body as any).input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }]);
  });

  test("Claude Code's real body builds for a Responses upstream: system → instructions, stop sequences warned, foreign signatures dropped", async () => {
    for (const file of ["claude-code-default.json", "claude-code-tool-use-2.json"]) {
      const body = await clientRequest(file);
      const hub = anthropicMessages.parseRequest!(body);
      const built = buildRequest(hub, OPENAI);
      const out = built.body as any;
      expect(typeof out.instructions).toBe("string");
      expect(out.instructions.length).toBeGreaterThan(1000);
      expect(out.max_output_tokens).toBe(body.max_tokens);
      expect(out.max_tokens).toBeUndefined();
      expect(out.tools.every((t: any) => t.type === "function" && typeof t.name === "string" && t.function === undefined)).toBe(true);
      // Every tool but Claude Code's DeferredToolPlaceholder (tool-kinds.ts withoutDeferPlaceholder), none deferred (no tool_search tool).
      expect(out.tools.map((t: any) => t.name)).toEqual(body.tools.map((t: any) => t.name).filter((n: string) => n !== "DeferredToolPlaceholder"));
      expect(out.tools.some((t: any) => "defer_loading" in t)).toBe(false);
      for (const item of out.input) {
        if (item.type === "message") expect(["user", "assistant", "system", "developer"]).toContain(item.role);
      }
      expect(JSON.stringify(out)).not.toContain("cache_control");
    }
    const tu = anthropicMessages.parseRequest!(await clientRequest("claude-code-tool-use-2.json"));
    const out = buildRequest(tu, OPENAI).body as any;
    const call = out.input.find((i: any) => i.type === "function_call");
    const output = out.input.find((i: any) => i.type === "function_call_output");
    expect(call.call_id).toBe(output.call_id);
    expect(typeof output.output).toBe("string");
  });
});

describe("tidyRequest (native Responses body, no hub round trip)", () => {
  test("B40 on the raw client body for kind codex", async () => {
    const c = await regressionCase("B40");
    const built = openaiResponses.tidyRequest!(c.request, CODEX);
    expectUpstream(built.body, c.expect.upstream_request);
    expect(built.warnings.map((w) => w.code)).toEqual(["dropped_reasoning"]);
    expect(c.request.input.length).toBe(4); // the client's object is not mutated
  });

  test("codex-tool-use-2: the ids the Codex CLI sends (msg_, fc_, fco_) kept, only instructions added, everything else unchanged", async () => {
    const body = await clientRequest("codex-tool-use-2.json");
    const built = openaiResponses.tidyRequest!(body, CODEX);
    const out = built.body as any;
    expect(out.input).toEqual(body.input);
    expect(out.input.at(-1).id).toStartWith("fco_");
    expect({ ...out, input: undefined }).toEqual({ ...body, input: undefined, instructions: "" });
    expect(built.warnings).toEqual([]);
  });

  test("kind codex: the backend's rules on a raw body (string input, system role, refused fields, previous_response_id, cache key)", () => {
    const body = { model: "x", input: "hi", temperature: 0.2, max_output_tokens: 50, previous_response_id: "resp_1", store: true, user: "u" };
    const built = openaiResponses.tidyRequest!(body, { ...CODEX, promptCacheKey: "sess-1" });
    expect(built.body).toEqual({
      model: "gpt-5-codex",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      instructions: "",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      prompt_cache_key: "sess-1",
    });
    expect(built.warnings.map((w) => w.code)).toEqual(["dropped_field", "dropped_field", "dropped_field", "dropped_field"]);
    const sys = { role: "system", content: "policy" };
    const withSystem = { model: "x", input: [sys, { role: "user", content: "q" }], prompt_cache_key: "own" };
    const out = openaiResponses.tidyRequest!(withSystem, { ...CODEX, promptCacheKey: "sess-1" }).body as any;
    expect(out.input.map((i: any) => i.role)).toEqual(["developer", "user"]);
    expect(out.prompt_cache_key).toBe("own");
    expect(sys.role).toBe("system"); // the client's items are not mutated
  });

  test("kind codex through the hub: a Chat-shaped request gets the same rules", () => {
    const hub = openaiChat.parseRequest!({ model: "m", temperature: 0.5, max_tokens: 100, messages: [{ role: "system", content: "Be kind." }, { role: "user", content: "hi" }] });
    const built = buildRequest(hub, { ...CODEX, promptCacheKey: "k" });
    const out = built.body as any;
    expect(out.instructions).toBe("");
    expect(out.input[0]).toEqual({ type: "message", role: "developer", content: [{ type: "input_text", text: "Be kind." }] });
    expect(out.temperature).toBeUndefined();
    expect(out.max_output_tokens).toBeUndefined();
    expect(out.prompt_cache_key).toBe("k");
    expect(out.store).toBe(false);
    expect(out.stream).toBe(true);
  });

  test("kind codex: a Gemini call signature's reasoning item (sy|gemini-call|…) is dropped, the warning naming gemini as its issuer; the call is kept", () => {
    const call = { type: "function_call", id: "fc_1", call_id: "call_a", name: "f", arguments: "{}" };
    const body = { model: "x", input: [{ role: "user", content: "q" }, { type: "reasoning", summary: [], encrypted_content: "sy|gemini-call|call_a|CiMB" }, call] };
    const built = openaiResponses.tidyRequest!(body, CODEX);
    expect((built.body as any).input).toEqual([{ role: "user", content: "q" }, call]);
    expect(built.warnings).toEqual([{ code: "stripped_signature", message: "Reasoning state issued by 'gemini' cannot be sent to a 'openai' upstream; it was dropped." }]);
  });

  test("kind openai keeps store as sent and id-only reasoning when store is not false", () => {
    const body = { model: "x", input: [{ type: "reasoning", id: "rs_1", summary: [] }, { role: "user", content: "hi", id: "item-7" }] };
    const out = openaiResponses.tidyRequest!(body, OPENAI).body as any;
    expect(out.model).toBe("gpt-x");
    expect(out.store).toBeUndefined();
    expect(out.input).toEqual([{ type: "reasoning", id: "rs_1", summary: [] }, { role: "user", content: "hi" }]);
  });
});

describe("buildRequest details", () => {
  const base = (over: Partial<HubRequest>): HubRequest => ({
    model: "m",
    system: [],
    messages: [],
    tools: [],
    stream: true,
    source: { format: "anthropic-messages", extra: {} },
    ...over,
  });

  test("system blocks → instructions; developer turns stay in input at their position", () => {
    const body = buildRequest(
      base({
        system: [{ type: "text", text: "A" }, { type: "text", text: "B" }],
        messages: [
          { role: "user", content: [{ type: "text", text: "q1" }] },
          { role: "developer", content: [{ type: "text", text: "rule" }] },
          { role: "user", content: [{ type: "text", text: "q2" }] },
        ],
      }),
      OPENAI,
    ).body as any;
    expect(body.instructions).toBe("A\n\nB");
    expect(body.input.map((i: any) => [i.role, i.content[0].text])).toEqual([
      ["user", "q1"],
      ["developer", "rule"],
      ["user", "q2"],
    ]);
  });

  test("stop sequences, top_k and n>1 are not sent; top_k and n each with a warning, stop sequences without one (the gateway emulates them on the reply: pipeline/cut-at-stop-sequence.ts); token limit below 16 is raised", () => {
    const built = buildRequest(base({ stopSequences: ["</a>"], topK: 5, n: 2, maxOutputTokens: 8, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }] }), OPENAI);
    const body = built.body as any;
    expect(body.stop).toBeUndefined();
    expect(body.stop_sequences).toBeUndefined();
    expect(body.top_k).toBeUndefined();
    expect(body.n).toBeUndefined();
    expect(body.max_output_tokens).toBe(16);
    expect(built.warnings.length).toBe(3);
    expect(built.warnings.every((w) => w.code === "dropped_field" || w.code === "changed_field")).toBe(true);
    expect(built.warnings.some((w) => /stop/i.test(w.message))).toBe(false);
  });

  test("another format's fields without a Responses slot are named in a warning, never dropped silently", () => {
    const chat = openaiChat.parseRequest!({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      seed: 7,
      logprobs: true,
      frequency_penalty: 0.5,
    });
    const built = buildRequest(chat, OPENAI);
    const body = built.body as any;
    expect([body.seed, body.logprobs, body.frequency_penalty]).toEqual([undefined, undefined, undefined]);
    // logprobs has a Responses slot (test/formats/logprobs.test.ts): `include`, not a dropped field
    expect(body.include).toEqual(["message.output_text.logprobs"]);
    expect(built.warnings).toContainEqual({ code: "dropped_field", message: "Fields with no Responses equivalent were dropped: seed, frequency_penalty." });
    // per-item fields another format keeps for itself (`$…`) are not client fields: never named
    const anth = anthropicMessages.parseRequest!({ model: "m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "x", citations: [] }] }] });
    expect(JSON.stringify(buildRequest(anth, OPENAI).warnings)).not.toContain("$");
  });

  test("an error tool result says so in its output (Responses has no error flag; REFERENCE §5.7), text-only and with media", () => {
    const call = { type: "tool_call" as const, id: "call_1", name: "f", arguments: "{}" };
    const result = (content: any[]) => ({ type: "tool_result" as const, callId: "call_1", content, isError: true });
    const built = buildRequest(
      base({
        messages: [
          { role: "assistant", content: [call, { ...call, id: "call_2" }, { ...call, id: "call_3" }] },
          {
            role: "user",
            content: [
              result([{ type: "text", text: "file not found" }]),
              { ...result([]), callId: "call_2" },
              { ...result([{ type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVB" } }]), callId: "call_3" },
            ],
          },
        ],
      }),
      OPENAI,
    );
    const outputs = (built.body as any).input.filter((i: any) => i.type === "function_call_output").map((i: any) => i.output);
    expect(outputs).toEqual([
      "Error: file not found",
      "Error",
      [{ type: "input_text", text: "Error" }, { type: "input_image", image_url: "data:image/png;base64,iVB", detail: "auto" }],
    ]);
    const ok = buildRequest(base({ messages: [{ role: "assistant", content: [call] }, { role: "user", content: [{ ...result([{ type: "text", text: "fine" }]), isError: false }] }] }), OPENAI);
    expect((ok.body as any).input[1].output).toBe("fine");
  });

  test("thinking: OpenAI state → reasoning item with encrypted_content; Anthropic signature and redacted thinking dropped with warnings", () => {
    const built = buildRequest(
      base({
        messages: [
          { role: "user", content: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            content: [
              { type: "thinking", text: "claude thought", signature: { family: "anthropic", value: "EqQB" } },
              { type: "redacted_thinking", data: { family: "anthropic", value: "xx" } },
              { type: "thinking", text: "gpt thought", summary: ["gpt thought"], itemId: "rs_9", signature: { family: "openai", value: "gAAAenc" } },
              { type: "text", text: "answer" },
            ],
          },
        ],
      }),
      OPENAI,
    );
    const body = built.body as any;
    expect(body.input.slice(1)).toEqual([
      { type: "reasoning", id: "rs_9", summary: [{ type: "summary_text", text: "gpt thought" }], encrypted_content: "gAAAenc" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer" }] },
    ]);
    expect(built.warnings.map((w) => w.code)).toEqual(["stripped_signature", "stripped_signature"]);
    expect(JSON.stringify(body)).not.toContain("EqQB");
  });

  test("tool results: text-only → string output; with an image → parts; over-long call ids map the same way in call and output", () => {
    const longId = "toolu_" + "x".repeat(80);
    const body = buildRequest(
      base({
        messages: [
          { role: "assistant", content: [{ type: "tool_call", id: longId, name: "shot", arguments: "" }, { type: "tool_call", id: "t2", name: "cat", arguments: '{"f":"a"}' }] },
          {
            role: "user",
            content: [
              { type: "tool_result", callId: longId, content: [{ type: "text", text: "here" }, { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } }] },
              { type: "tool_result", callId: "t2", content: [{ type: "text", text: "line1" }, { type: "text", text: "line2" }], isError: true },
              { type: "text", text: "thanks" },
            ],
          },
        ],
      }),
      OPENAI,
    ).body as any;
    const [call1, call2, out1, out2, msg] = body.input;
    expect(call1.call_id.length).toBeLessThanOrEqual(64);
    expect(out1.call_id).toBe(call1.call_id);
    expect(call1.arguments).toBe("{}");
    expect(call2).toEqual({ type: "function_call", call_id: "t2", name: "cat", arguments: '{"f":"a"}' });
    expect(out1.output).toEqual([
      { type: "input_text", text: "here" },
      { type: "input_image", image_url: "data:image/png;base64,iVBOR", detail: "auto" },
    ]);
    expect(out2).toEqual({ type: "function_call_output", call_id: "t2", output: "Error: line1\nline2" }); // is_error said in the text (no flag)
    expect(msg).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "thanks" }] });
  });

  test("kind codex forces store:false and asks for encrypted reasoning; effort from a thinking budget; tool_choice and response format", () => {
    const body = buildRequest(
      base({
        store: true,
        reasoning: { enabled: true, budgetTokens: 8000 },
        toolChoice: { type: "tool", name: "f" },
        tools: [{ kind: "function", name: "f", parameters: { type: "object" } }],
        responseFormat: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true },
        messages: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      }),
      CODEX,
    ).body as any;
    expect(body.store).toBe(false);
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
    expect(body.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(body.tool_choice).toEqual({ type: "function", name: "f" });
    expect(body.text).toEqual({ format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } });
  });

  test("reasoning turned on by another format's client asks for encrypted reasoning (so it comes back signed); off, or a Responses client's own body, does not", () => {
    const user = [{ role: "user" as const, content: [{ type: "text" as const, text: "x" }] }];
    const include = (over: Partial<HubRequest>) => (buildRequest(base({ messages: user, ...over }), OPENAI).body as any).include;
    // Anthropic thinking budget, Chat reasoning_effort, Gemini thinkingConfig
    expect(include({ reasoning: { enabled: true, budgetTokens: 2000 } })).toEqual(["reasoning.encrypted_content"]);
    expect(include({ reasoning: { effort: "medium" }, source: { format: "openai-chat", extra: {} } })).toEqual(["reasoning.encrypted_content"]);
    expect(include({ reasoning: { budgetTokens: 1024, includeThoughts: true }, source: { format: "gemini", extra: {} } })).toEqual(["reasoning.encrypted_content"]);
    // the client's own include entries are kept
    expect(include({ reasoning: { effort: "low" }, logprobs: true, source: { format: "openai-chat", extra: {} } })).toEqual(["message.output_text.logprobs", "reasoning.encrypted_content"]);
    // no reasoning, reasoning off, effort none: nothing asked
    expect(include({})).toBeUndefined();
    expect(include({ reasoning: { enabled: false } })).toBeUndefined();
    expect(include({ reasoning: { effort: "none" }, source: { format: "openai-chat", extra: {} } })).toBeUndefined();
    // a Responses client's request goes as it wrote it
    expect(include({ reasoning: { effort: "low" }, source: { format: "openai-responses", extra: {} } })).toBeUndefined();
  });

  test("provider tools of another format are dropped with a warning; Responses ones are kept", () => {
    const built = buildRequest(
      base({
        tools: [
          { kind: "provider", format: "anthropic-messages", raw: { type: "web_search_20250305", name: "web_search" }, name: "web_search" },
          { kind: "provider", format: "openai-responses", raw: { type: "web_search", external_web_access: false } },
        ],
      }),
      OPENAI,
    );
    expect((built.body as any).tools).toEqual([{ type: "web_search", external_web_access: false }]);
    expect(built.warnings.map((w) => w.code)).toEqual(["dropped_tool"]);
  });

  test("custom (freeform) tool calls round-trip as custom_tool_call / custom_tool_call_output", () => {
    const req = {
      model: "m",
      tools: [{ type: "custom", name: "apply_patch", description: "d" }],
      input: [
        { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
        { type: "custom_tool_call_output", call_id: "call_p", output: "Done!" },
      ],
    };
    const hub = parseRequest(req);
    expect(JSON.parse((hub.messages[0]!.content[0] as ToolCallPart).arguments)).toEqual({ input: "*** Begin Patch\n*** End Patch" });
    const body = buildRequest(hub, OPENAI).body as any;
    expect(body.input).toEqual([
      { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
      { type: "custom_tool_call_output", call_id: "call_p", output: "Done!" },
    ]);
    expect(body.tools).toEqual([{ type: "custom", name: "apply_patch", description: "d" }]);
  });

  test("unknown function-tool fields survive a Responses round trip", () => {
    const tool = { type: "function", name: "f", parameters: { type: "object" }, strict: true, output_schema: { type: "string" } };
    const body = buildRequest(parseRequest({ model: "m", input: "x", tools: [tool] }), OPENAI).body as any;
    expect(body.tools).toEqual([tool]);
  });
});

describe("parseRequest", () => {
  test("input string, instructions, images, files, refusal and phase", () => {
    const hub = parseRequest({
      model: "m",
      instructions: "Be terse.",
      input: [
        { type: "message", role: "user", content: [
          { type: "input_text", text: "look" },
          { type: "input_image", image_url: "data:image/png;base64,iVBOR", detail: "high" },
          { type: "input_image", image_url: "https://x/y.png" },
          { type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBER" },
        ] },
        { type: "message", role: "assistant", phase: "commentary", content: [{ type: "output_text", text: "hmm", annotations: [] }] },
        { type: "message", role: "assistant", phase: "final_answer", content: [{ type: "refusal", refusal: "no" }] },
      ],
      max_output_tokens: 500,
      reasoning: { effort: "low", summary: "detailed" },
      text: { format: { type: "json_object" }, verbosity: "low" },
      metadata: { a: "b" },
    });
    expect(hub.system).toEqual([{ type: "text", text: "Be terse." }]);
    expect(hub.messages[0]!.content).toEqual([
      { type: "text", text: "look" },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" }, detail: "high" },
      { type: "image", source: { kind: "url", url: "https://x/y.png" } },
      { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "JVBER" }, filename: "a.pdf" },
    ]);
    // consecutive assistant items form ONE assistant turn; phases kept per part
    expect(hub.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "hmm", phase: "commentary" },
        { type: "text", text: "no", phase: "final_answer", refusal: true }, // a refusal part, marked
      ],
    });
    expect(hub.maxOutputTokens).toBe(500);
    expect(hub.reasoning).toEqual({ effort: "low", summary: "detailed" });
    expect(hub.responseFormat).toEqual({ type: "json_object" });
    expect(hub.source.extra).toEqual({ metadata: { a: "b" } });
    expect(hub.verbosity).toBe("low");
    expect(parseRequest({ model: "m", input: "hello" }).messages).toEqual([{ role: "user", content: [{ type: "text", text: "hello" }] }]);
  });

  test("reasoning items: summary vs raw reasoning_text; encrypted_content is openai-family state", () => {
    const hub = parseRequest({
      model: "m",
      input: [
        { type: "reasoning", id: "rs_a", summary: [{ type: "summary_text", text: "one" }, { type: "summary_text", text: "two" }], encrypted_content: "enc" },
        { type: "reasoning", id: "rs_b", summary: [], content: [{ type: "reasoning_text", text: "raw thought" }] },
      ],
    });
    const [a, b] = hub.messages[0]!.content as ThinkingPart[];
    expect(a).toEqual({ type: "thinking", text: "one\n\ntwo", summary: ["one", "two"], itemId: "rs_a", signature: { family: "openai", value: "enc" } });
    expect(b).toEqual({ type: "thinking", text: "raw thought", raw: true, itemId: "rs_b" });
  });

  test("invalid bodies are a 400 naming the offending field", () => {
    const cases: Array<[unknown, string | undefined]> = [
      [[], undefined],
      [{ input: "x" }, "model"],
      [{ model: "m", input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
      [{ model: "m", input: [{ role: "robot", content: "x" }] }, "input[0].role"],
      [{ model: "m", tools: [{ type: "function" }] }, "tools[0].name"],
    ];
    for (const [body, param] of cases) {
      let err: unknown;
      try {
        parseRequest(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FormatError);
      expect((err as FormatError).error.status).toBe(400);
      expect((err as FormatError).error.param).toBe(param);
    }
  });
});
