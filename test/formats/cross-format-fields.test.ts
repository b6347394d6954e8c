/**
 * Request and reply fields that cross formats (README "Not done yet", 2026-12-02): empty stop
 * sequences, usage a provider did not report, temperature with top_p for Claude, disabled thinking for
 * OpenAI models, Responses `allowed_tools` / `text.verbosity` for Chat, Chat logprobs. Each case
 * parses a client body with its format's codec and builds the provider body (or encodes the reply)
 * with the target's, as the pipeline does.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { translateBody } from "../support/translate-body.ts";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";

const translate = translateBody;

const chatBody = (over: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...over });

describe("an empty stop sequence is not sent", () => {
  test("Chat stop: \"\" reaches no provider as [\"\"]", () => {
    for (const [to, kind, field] of [
      ["openai-chat", "openai-compatible", "stop"],
      ["anthropic-messages", "anthropic", "stop_sequences"],
      ["gemini", "gemini", "generationConfig"],
    ] as const) {
      const built = translate("openai-chat", chatBody({ stop: "" }), to, kind);
      const sent = field === "generationConfig" ? (built.body.generationConfig as Record<string, unknown> | undefined)?.stopSequences : built.body[field];
      expect(sent, `${to}`).toBeUndefined();
      expect(built.warnings.map((w) => w.message), `${to}`).toContain("An empty stop sequence was not sent.");
    }
  });

  test("the other stop sequences are kept in order; Anthropic also drops whitespace-only ones", () => {
    const chat = translate("openai-chat", chatBody({ stop: ["a", "", "\n", "b"] }), "openai-chat", "openai");
    expect(chat.body.stop).toEqual(["a", "\n", "b"]);
    const claude = translate("openai-chat", chatBody({ stop: ["a", "", "\n", "b"] }), "anthropic-messages", "anthropic");
    expect(claude.body.stop_sequences).toEqual(["a", "b"]);
    expect(claude.warnings.map((w) => w.message)).toContain("A stop sequence of only whitespace was not sent (Anthropic refuses it).");
    const plain = translate("openai-chat", chatBody({ stop: ["</a>"] }), "anthropic-messages", "anthropic");
    expect(plain.body.stop_sequences).toEqual(["</a>"]);
    expect(plain.warnings).toEqual([]);
  });

  test("a third-party Chat server (tidy pass, no hub) gets no empty stop either", () => {
    const tidy = (stop: unknown) => codecFor("openai-chat").tidyRequest!(chatBody({ stop }), { model: "x", kind: "openai-compatible", family: "provider:x", stream: false });
    expect("stop" in tidy("").body).toBe(false);
    expect(tidy(["", "b"]).body.stop).toEqual(["b"]);
    expect(tidy("b").body.stop).toBe("b");
    expect(tidy("").warnings.map((w) => w.message)).toEqual(["An empty stop sequence was not sent."]);
  });
});

describe("a Gemini client gets only the usage the provider reported", () => {
  const events = (usage?: Record<string, number>) => {
    let out = "";
    const enc = codecFor("gemini").createEncoder!({ model: "gemini-x" }, (t) => (out += t));
    enc.event({ type: "message_start" });
    enc.event({ type: "block_start", index: 0, block: { type: "text" } });
    enc.event({ type: "block_delta", index: 0, delta: { type: "text", text: "ok" } });
    enc.event({ type: "block_stop", index: 0 });
    enc.event({ type: "finish", reason: "end_turn" });
    if (usage) enc.event({ type: "usage", usage });
    enc.end();
    return out.split("\n\n").filter((c) => c.startsWith("data: ")).map((c) => JSON.parse(c.slice(6)));
  };

  test("stream: no usageMetadata when none was reported, not zeros", () => {
    const last = events().at(-1);
    expect(last.candidates[0].finishReason).toBe("STOP");
    expect("usageMetadata" in last).toBe(false);
  });

  test("stream: an input count alone gives the prompt count, no invented candidates or total", () => {
    expect(events({ inputTokens: 7 }).at(-1).usageMetadata).toEqual({ promptTokenCount: 7 });
    expect(events({ inputTokens: 7, outputTokens: 2 }).at(-1).usageMetadata).toEqual({ promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 });
  });

  test("JSON reply: no usageMetadata when none was reported", () => {
    const body: any = codecFor("gemini").encodeResponse!({ content: [{ type: "text", text: "ok" }], stopReason: "end_turn", usage: {} }, { model: "gemini-x" });
    expect("usageMetadata" in body).toBe(false);
    expect(body.modelVersion).toBe("gemini-x");
    const known: any = codecFor("gemini").encodeResponse!({ content: [], stopReason: "end_turn", usage: { outputTokens: 3 } }, { model: "gemini-x" });
    expect(known.usageMetadata).toEqual({ candidatesTokenCount: 3 });
  });
});

describe("temperature with top_p for Claude", () => {
  const both = chatBody({ temperature: 0.5, top_p: 0.9 });
  test("models from Opus 4.1 / Sonnet 4.5 on get temperature only, with a warning", () => {
    for (const model of ["claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5", "claude-opus-4-6", "anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929"]) {
      const built = translate("openai-chat", both, "anthropic-messages", "anthropic", model);
      expect(built.body.temperature, model).toBe(0.5);
      expect("top_p" in built.body, model).toBe(false);
      expect(built.warnings.map((w) => w.message), model).toContain(`${model} accepts temperature or top_p, not both; top_p was dropped and temperature kept`);
    }
  });

  test("older Claude models and other models of Anthropic-compatible servers keep both; one alone is never touched", () => {
    for (const model of ["claude-3-7-sonnet-20250219", "claude-sonnet-4-20250514", "claude-opus-4-20250514", "claude-3-5-haiku-latest", "claude-x", "glm-4.6"]) {
      const built = translate("openai-chat", both, "anthropic-messages", "anthropic-compatible", model);
      expect([built.body.temperature, built.body.top_p], model).toEqual([0.5, 0.9]);
    }
    const alone = translate("openai-chat", chatBody({ top_p: 0.9 }), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(alone.body.top_p).toBe(0.9);
    expect(alone.warnings).toEqual([]);
  });
});

describe("sampling parameters for Claude from Opus 4.7 on", () => {
  const all = chatBody({ temperature: 0.5, top_p: 0.9, top_k: 40 });
  test("none of temperature, top_p, top_k is sent, with one warning naming those the client sent", () => {
    for (const model of ["claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5", "claude-opus-5-1", "anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7@20260416"]) {
      const built = translate("openai-chat", all, "anthropic-messages", "anthropic", model);
      expect(["temperature", "top_p", "top_k"].filter((k) => k in built.body), model).toEqual([]);
      expect(built.warnings.map((w) => w.message), model).toContain(`${model} refuses temperature, top_p and top_k; temperature, top_p, top_k dropped`);
    }
    const one = translate("openai-chat", chatBody({ temperature: 0 }), "anthropic-messages", "anthropic", "claude-opus-4-7");
    expect("temperature" in one.body).toBe(false);
    expect(one.warnings.map((w) => w.message)).toEqual(["claude-opus-4-7 refuses temperature, top_p and top_k; temperature dropped"]);
    expect(translate("openai-chat", chatBody(), "anthropic-messages", "anthropic", "claude-opus-4-7").warnings).toEqual([]);
  });

  test("Opus 4.6 and the 4.5 line keep their rules (temperature kept, top_p dropped from the pair, top_k sent)", () => {
    for (const model of ["claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-5-20250929"]) {
      const built = translate("openai-chat", all, "anthropic-messages", "anthropic", model);
      expect([built.body.temperature, built.body.top_p, built.body.top_k], model).toEqual([0.5, undefined, 40]);
    }
  });
});

describe("thinking for Claude from Opus 4.7 on: adaptive only, its effort in output_config", () => {
  const geminiBody = (thinkingBudget: number) => ({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget } } });
  const messagesBody = (budget_tokens: number) => ({ model: "m", max_tokens: 64000, messages: [{ role: "user", content: "hi" }], thinking: { type: "enabled", budget_tokens } });

  test("a Chat client's reasoning_effort reaches it as adaptive thinking with that effort: no budget, max_tokens not raised, no warning", () => {
    for (const model of ["claude-opus-4-7", "claude-sonnet-5", "anthropic.claude-opus-4-7-v1:0"]) {
      const built = translate("openai-chat", chatBody({ reasoning_effort: "high", max_completion_tokens: 1000 }), "anthropic-messages", "anthropic", model);
      expect(built.body.thinking, model).toEqual({ type: "adaptive" });
      expect(built.body.output_config, model).toEqual({ effort: "high" });
      expect(built.body.max_tokens, model).toBe(1000);
      expect(built.warnings, model).toEqual([]);
    }
    const minimal = translate("openai-chat", chatBody({ reasoning_effort: "minimal" }), "anthropic-messages", "anthropic", "claude-opus-4-7");
    expect([minimal.body.thinking, minimal.body.output_config]).toEqual([{ type: "adaptive" }, { effort: "low" }]);
  });

  test("a budget (Gemini thinkingBudget, an Anthropic client's budget_tokens) becomes the effort it reaches, warned", () => {
    for (const [budget, effort] of [[1024, "low"], [8192, "medium"], [16384, "high"], [31999, "xhigh"], [40000, "max"]] as const) {
      const fromGemini = translate("gemini", geminiBody(budget), "anthropic-messages", "anthropic", "claude-opus-4-7");
      expect([fromGemini.body.thinking, fromGemini.body.output_config], `gemini ${budget}`).toEqual([{ type: "adaptive" }, { effort }]);
      expect(fromGemini.warnings.map((w) => w.message), `gemini ${budget}`).toEqual([`claude-opus-4-7 takes no thinking budget; adaptive thinking was sent with effort ${effort} for budget_tokens ${budget}`]);
    }
    const fromClaude = translate("anthropic-messages", messagesBody(31999), "anthropic-messages", "anthropic", "claude-opus-4-7");
    expect(fromClaude.body.thinking).toEqual({ type: "adaptive" });
    expect(fromClaude.body.output_config).toEqual({ effort: "xhigh" });
    expect(fromClaude.body.max_tokens).toBe(64000);
    expect(fromClaude.warnings.map((w) => w.code)).toEqual(["dropped_thinking_config"]);
  });

  test("Opus 4.6 and older keep budgeted thinking as before", () => {
    const chat = translate("openai-chat", chatBody({ reasoning_effort: "high" }), "anthropic-messages", "anthropic", "claude-opus-4-6");
    expect(chat.body.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });
    expect(chat.body.output_config).toBeUndefined();
    const claude = translate("anthropic-messages", messagesBody(31999), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(claude.body.thinking).toEqual({ type: "enabled", budget_tokens: 31999 });
    expect(claude.warnings).toEqual([]);
  });
});

describe("an allowed_tools subset for Gemini and Anthropic targets", () => {
  const tools = ["a", "b", "c"].map((name) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } }));
  const allowed = (mode: string) => chatBody({ tools, tool_choice: { type: "allowed_tools", allowed_tools: { mode, tools: [{ type: "function", function: { name: "a" } }, { type: "function", function: { name: "c" } }] } } });
  const declared = (body: Record<string, unknown>) => ((body.tools as any[])[0].functionDeclarations as any[]).map((d) => d.name);

  test("Gemini: mode auto → VALIDATED with the names, mode required → ANY with the names; every function stays declared, no warning", () => {
    const auto = translate("openai-chat", allowed("auto"), "gemini", "gemini");
    expect(auto.body.toolConfig).toEqual({ functionCallingConfig: { mode: "VALIDATED", allowedFunctionNames: ["a", "c"] } });
    expect(declared(auto.body)).toEqual(["a", "b", "c"]);
    expect(auto.warnings).toEqual([]);
    const req = translate("openai-chat", allowed("required"), "gemini", "gemini");
    expect(req.body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a", "c"] } });
    expect(declared(req.body)).toEqual(["a", "b", "c"]);
  });

  test("a Gemini client's VALIDATED / ANY with several names reaches Chat and Responses as allowed_tools", () => {
    const gemBody = (mode: string) => ({
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      tools: [{ functionDeclarations: ["a", "b", "c"].map((name) => ({ name, parameters: { type: "object", properties: {} } })) }],
      toolConfig: { functionCallingConfig: { mode, allowedFunctionNames: ["a", "c"] } },
    });
    const chat = translate("gemini", { model: "m", ...gemBody("VALIDATED") }, "openai-chat", "openai");
    expect(chat.body.tool_choice).toEqual({ type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "a" } }, { type: "function", function: { name: "c" } }] } });
    const resp = translate("gemini", { model: "m", ...gemBody("ANY") }, "openai-responses", "openai-responses");
    expect(resp.body.tool_choice).toEqual({ type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "a" }, { type: "function", name: "c" }] });
    const back = translate("gemini", { model: "m", ...gemBody("VALIDATED") }, "gemini", "gemini");
    expect(back.body.toolConfig).toEqual({ functionCallingConfig: { mode: "VALIDATED", allowedFunctionNames: ["a", "c"] } });
  });

  test("Anthropic has no subset: the mode is sent, every tool stays declared (prompt cache), with a warning", () => {
    for (const [mode, type] of [["auto", "auto"], ["required", "any"]] as const) {
      const built = translate("openai-chat", allowed(mode), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
      expect(built.body.tool_choice).toEqual({ type });
      expect((built.body.tools as any[]).map((t) => t.name)).toEqual(["a", "b", "c"]);
      expect(built.warnings.map((w) => w.message)).toContain(`tool_choice allowed_tools has no Anthropic equivalent; ${type} was sent and every declared tool stays callable`);
    }
  });
});

describe("Anthropic thinking disabled for OpenAI models", () => {
  const off = { model: "claude-x", max_tokens: 100, thinking: { type: "disabled" }, messages: [{ role: "user", content: "hi" }] };
  const effortOf = (to: "openai-chat" | "openai-responses", model: string) => {
    const built = translate("anthropic-messages", off, to, to === "openai-chat" ? "openai" : "openai-responses", model);
    const effort = to === "openai-chat" ? built.body.reasoning_effort : (built.body.reasoning as { effort?: string } | undefined)?.effort;
    return { effort, warnings: built.warnings.filter((w) => w.code === "changed_field").map((w) => w.message), body: built.body };
  };

  test("gpt-5.1 and later: effort none (Chat reasoning_effort, Responses reasoning.effort, no summary)", () => {
    for (const to of ["openai-chat", "openai-responses"] as const) {
      for (const model of ["gpt-5.1", "gpt-5.2-mini", "openai/gpt-5.1"]) {
        const r = effortOf(to, model);
        expect(r.effort, `${to} ${model}`).toBe("none");
        expect(r.warnings, `${to} ${model}`).toEqual([]);
      }
      if (to === "openai-responses") expect(effortOf(to, "gpt-5.1").body.reasoning).toEqual({ effort: "none" });
    }
  });

  test("models that cannot switch reasoning off get their least effort with a warning; others get no field", () => {
    expect(effortOf("openai-chat", "gpt-5-mini")).toMatchObject({ effort: "minimal", warnings: ["gpt-5-mini cannot switch reasoning off (models before gpt-5.1 have no effort none); reasoning effort minimal was sent"] });
    expect(effortOf("openai-responses", "o4-mini")).toMatchObject({ effort: "low", warnings: ["o4-mini cannot switch reasoning off; reasoning effort low was sent"] });
    expect(effortOf("openai-responses", "gpt-5.1-codex").effort).toBe("low");
    expect(effortOf("openai-chat", "gpt-5-pro")).toMatchObject({ effort: undefined, warnings: ["gpt-5-pro only reasons at high effort; reasoning could not be switched off"] });
    for (const to of ["openai-chat", "openai-responses"] as const) {
      const r = effortOf(to, "gpt-4.1");
      expect([r.effort, r.warnings, "reasoning" in r.body, "reasoning_effort" in r.body]).toEqual([undefined, [], false, false]);
    }
  });

  test("an effort the client named is still sent as named", () => {
    const built = translate("anthropic-messages", { ...off, thinking: { type: "enabled", budget_tokens: 20000 }, max_tokens: 30000 }, "openai-chat", "openai", "gpt-5.1");
    expect(built.body.reasoning_effort).toBe("high");
  });
});

describe("Responses allowed_tools and text.verbosity for Chat targets (and back)", () => {
  const fn = (name: string) => ({ type: "function", name, parameters: { type: "object", properties: {} } });
  const respBody = (over: Record<string, unknown> = {}) => ({
    model: "m",
    input: "hi",
    tools: [fn("a"), fn("b"), fn("c")],
    tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "a" }, { type: "function", name: "b" }] },
    text: { verbosity: "low" },
    ...over,
  });

  test("OpenAI Chat gets tool_choice allowed_tools and verbosity, with no warning", () => {
    const built = translate("openai-responses", respBody(), "openai-chat", "openai", "gpt-5.1");
    expect(built.body.tool_choice).toEqual({
      type: "allowed_tools",
      allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "a" } }, { type: "function", function: { name: "b" } }] },
    });
    expect(built.body.verbosity).toBe("low");
    expect((built.body.tools as unknown[]).length).toBe(3);
    expect(built.warnings).toEqual([]);
  });

  test("a third-party Chat server gets only the allowed tools with the mode; verbosity only for a gpt-5 model", () => {
    const built = translate("openai-responses", respBody(), "openai-chat", "openai-compatible", "glm-4.6");
    expect(built.body.tool_choice).toBe("required");
    expect((built.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(["a", "b"]);
    expect("verbosity" in built.body).toBe(false);
    expect(built.warnings.map((w) => w.message)).toEqual([
      `tool_choice allowed_tools is not sent to a third-party Chat server: only the 2 allowed tool(s) were declared, with tool_choice "required".`,
      "verbosity is sent to OpenAI's gpt-5 models only; glm-4.6 did not get it.",
    ]);
    expect(translate("openai-responses", respBody(), "openai-chat", "openai-compatible", "openai/gpt-5-mini").body.verbosity).toBe("low");
  });

  test("a Chat client's allowed_tools and verbosity reach a Responses target; Gemini gets ANY with the names", () => {
    const chat = chatBody({
      tools: ["a", "b"].map((name) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } })),
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "b" } }] } },
      verbosity: "high",
    });
    // a gpt-5 model: OpenAI's others take verbosity medium only (openai-common/models.ts openAiTakesVerbosity)
    const resp = translate("openai-chat", chat, "openai-responses", "openai-responses", "gpt-5.1");
    expect(resp.body.tool_choice).toEqual({ type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "b" }] });
    expect(resp.body.text).toEqual({ verbosity: "high" });
    expect(resp.warnings).toEqual([]);
    const gem = translate("openai-responses", respBody(), "gemini", "gemini");
    expect(gem.body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["a", "b"] } });
  });

  test("a Responses body round-trips through the hub unchanged; allowed_tools naming a hosted tool still does", () => {
    const body = respBody({ text: { format: { type: "text" }, verbosity: "medium" } });
    const same = translate("openai-responses", body, "openai-responses", "openai-responses");
    expect(same.body.tool_choice).toEqual(body.tool_choice);
    expect(same.body.text).toEqual(body.text);
    const hosted = { type: "allowed_tools", mode: "auto", tools: [{ type: "web_search" }] };
    expect(translate("openai-responses", respBody({ tool_choice: hosted }), "openai-responses", "openai-responses").body.tool_choice).toEqual(hosted);
  });
});

describe("the Response object a Responses client gets echoes its allowed_tools and verbosity", () => {
  test("tool_choice and text as the client sent them", async () => {
    const { responseEcho } = await import("../../formats/openai-responses/response.ts");
    const body = {
      model: "m",
      input: "hi",
      tools: [{ type: "function", name: "a", parameters: { type: "object", properties: {} } }],
      tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "a" }] },
      text: { verbosity: "high" },
    };
    const echo = responseEcho(codecFor("openai-responses").parseRequest!(body));
    expect(echo.tool_choice).toEqual(body.tool_choice);
    expect(echo.text).toEqual({ verbosity: "high", format: { type: "text" } });
  });
});
