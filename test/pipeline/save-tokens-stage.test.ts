/**
 * The save-tokens stage (SPEC R-6, S-1, S-2) on real client captures translated for each kind of
 * target: tool results are found in every provider format's body and shortened; Anthropic-format
 * providers with prompt caching, the `X-Switchyard-Token-Saver: off` header and the setting skip it;
 * error results are left alone; a body with nothing to shorten is not touched (native passthrough keeps
 * the client's bytes); the same history compresses to the same bytes every turn; a marked conversation
 * goes as written where the markers reach the provider (anthropic-compatible) and is shortened by the
 * pure function elsewhere, so a moving marker or a later `is_error` result with the same text never
 * changes what an earlier turn sent (S-4).
 */
import { describe, expect, spyOn, test } from "bun:test";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { codecFor } from "../../formats/index.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { clearSaverCache, saveTokens, skipReason } from "../../pipeline/save-tokens.ts";
import { compressToolResult } from "../../pipeline/savers/index.ts";
import { translate, type Translated } from "../../pipeline/translate.ts";
import { guardedContext } from "../support/context.ts";
import { clientRequest } from "../support/fixtures.ts";
import { provider, target } from "./routing-helpers.ts";
import { sample, serverLog } from "./save-tokens-fixtures/samples.ts";

const ON = { compressToolResults: true };
const REMINDER = "\n\n<system-reminder>\n<total_tokens>14999968 tokens left</total_tokens>\n</system-reminder>";
const CODEX_HEADER = "Chunk ID: 26f61c\nWall time: 3.0120 seconds\nProcess exited with code 1\nOriginal token count: 30412\nOutput:\n";
const ENDPOINT = { "anthropic-messages": "messages", "openai-chat": "chat", "openai-responses": "responses" } as const;

function ctxFor(format: WireFormat, body: Record<string, unknown>, headers: Record<string, string> = {}): RequestContext {
  return guardedContext(ENDPOINT[format as keyof typeof ENDPOINT], body, { headers });
}

/** translate → save-tokens for a target of `kind`, as the attempt loop does. */
function send(ctx: RequestContext, kind: ProviderKind, model: string, settings = ON): Translated {
  const t = translate(ctx, target(provider(`p-${kind}`, kind), model), "strip_with_warning");
  if ("kind" in t) throw new Error(t.message);
  saveTokens(ctx, target(provider(`p-${kind}`, kind), model), t, settings);
  return t;
}

const bodyText = (t: Translated) => (typeof t.body === "string" ? t.body : new TextDecoder().decode(t.body));
const bodyOf = (t: Translated) => JSON.parse(bodyText(t));

/**
 * Claude Code's real turn 2, its Bash result replaced by `content` (and `is_error`). Claude Code marks
 * that result with `cache_control`, which keeps it as written for a provider that receives the markers
 * (S-4); without `marked` the marker is taken off (a client that caches only its system prompt).
 */
async function claudeTurn(content: string, isError = false, marked = false) {
  const body = await clientRequest("claude-code-tool-use-2.json");
  const last = body.messages[body.messages.length - 1];
  last.content[0].content = content;
  last.content[0].is_error = isError;
  if (!marked) delete last.content[0].cache_control;
  return body;
}

/** Codex's real turn 2, its exec output replaced by `output`. */
async function codexTurn(output: string) {
  const body = await clientRequest("codex-tool-use-2.json");
  body.input[body.input.length - 1].output = output;
  return body;
}

const DIFF = sample("git-diff.txt");
const diffOut = compressToolResult(DIFF + REMINDER)!.text;

describe("tool results found and shortened in every provider format", () => {
  test("Claude Code → openai-compatible (Chat through the hub): the tool message is shortened, the reminder kept", async () => {
    const ctx = ctxFor("anthropic-messages", await claudeTurn(DIFF + REMINDER));
    const t = send(ctx, "openai-compatible", "glm-5");
    const tool = bodyOf(t).messages.find((m: any) => m.role === "tool");
    expect(tool.content).toBe(diffOut);
    expect(tool.content.endsWith(REMINDER)).toBe(true);
    expect(ctx.trace.tokenSaver).toEqual({
      results: 1,
      charsBefore: DIFF.length + REMINDER.length,
      charsAfter: diffOut.length,
      tokensSaved: Math.round((DIFF.length + REMINDER.length - diffOut.length) / 4),
      rules: { diff: 1 },
    });
  });

  test("Claude Code → anthropic-compatible (tidied): the tool_result block is shortened", async () => {
    const ctx = ctxFor("anthropic-messages", await claudeTurn(DIFF + REMINDER));
    const t = send(ctx, "anthropic-compatible", "glm-5");
    expect(t.mode).toBe("tidy");
    const msgs = bodyOf(t).messages;
    expect(msgs[msgs.length - 1].content[0].content).toBe(diffOut);
  });

  test("Claude Code → gemini: functionResponse.response.result is shortened", async () => {
    const ctx = ctxFor("anthropic-messages", await claudeTurn(DIFF + REMINDER));
    const t = send(ctx, "gemini", "gemini-3-pro");
    const parts = bodyOf(t).contents.flatMap((c: any) => c.parts);
    expect(parts.find((p: any) => p.functionResponse).functionResponse.response.result).toBe(diffOut);
  });

  test("Gemini CLI → openai-compatible: its `functionResponse.response.output` shell result is shortened, the wrapper kept (newuser13 J3)", () => {
    const wrapped = `<untrusted_context>\nOutput: ${serverLog(1000).replace(/\n$/, "")}\nProcess Group PGID: 48213\n</untrusted_context>`;
    const body = {
      contents: [
        { role: "user", parts: [{ text: "run the server and show me the log" }] },
        { role: "model", parts: [{ functionCall: { name: "run_shell_command", args: { command: "cat server.log" } } }] },
        { role: "user", parts: [{ functionResponse: { id: "run_shell_command-1", name: "run_shell_command", response: { output: wrapped } } }] },
      ],
    };
    const ctx = guardedContext("gemini", body, { path: "/v1beta/models/glm-5:generateContent" });
    const t = send(ctx, "openai-compatible", "glm-5");
    const tool = bodyOf(t).messages.find((m: any) => m.role === "tool").content as string;
    expect(tool).toBe(compressToolResult(wrapped)!.text);
    expect(tool.startsWith("<untrusted_context>\nOutput: ")).toBe(true);
    expect(tool.endsWith("\nProcess Group PGID: 48213\n</untrusted_context>")).toBe(true);
    expect(tool.length).toBeLessThan(wrapped.length / 10);
  });

  test("Codex → openai-responses (native passthrough): the output is shortened, Codex's header kept; body re-serialised", async () => {
    const output = CODEX_HEADER + serverLog(1000);
    const ctx = ctxFor("openai-responses", await codexTurn(output));
    const t = send(ctx, "openai-responses", "gpt-5-codex");
    expect(t.mode).toBe("native");
    const out = bodyOf(t).input.at(-1).output;
    expect(out.startsWith(CODEX_HEADER)).toBe(true);
    expect(out).toContain("… 997 similar lines elided");
    expect(out).toContain("ERROR db: giving up after 1000 attempts");
    expect(ctx.trace.tokenSaver).toMatchObject({ results: 1, rules: { log: 1 } });
    expect((ctx.trace.tokenSaver as any).tokensSaved).toBeGreaterThan(20_000);
    // Everything else is the client's body, key order included.
    const sent = bodyOf(t);
    const client = JSON.parse(new TextDecoder().decode(ctx.rawBody));
    client.input.at(-1).output = out;
    expect(bodyText(t)).toBe(JSON.stringify(client));
    expect(Object.keys(sent)).toEqual(Object.keys(client));
  });

  test("Codex → codex and → openai-compatible (Chat): shortened too", async () => {
    const output = CODEX_HEADER + serverLog(1000);
    const ctx = ctxFor("openai-responses", await codexTurn(output));
    expect(bodyOf(send(ctx, "codex", "gpt-5-codex")).input.at(-1).output).toContain("… 997 similar lines elided");
    const chat = bodyOf(send(ctx, "openai-compatible", "kimi-k3"));
    expect(chat.messages.find((m: any) => m.role === "tool").content).toContain("… 997 similar lines elided");
  });
});

describe("S-2: skipped where the prompt cache needs byte-identical history, or when asked", () => {
  for (const kind of ["anthropic", "claude-code"] as const) {
    test(`Claude Code → ${kind}: the client's bytes go out untouched`, async () => {
      const ctx = ctxFor("anthropic-messages", await claudeTurn(serverLog(1000) + REMINDER));
      const t = send(ctx, kind, "claude-sonnet-4-5");
      expect(t.mode).toBe("native");
      expect(t.body).toBe(ctx.rawBody);
      expect(ctx.trace.tokenSaver).toEqual({ skipped: "prompt_cache" });
    });
  }

  test("X-Switchyard-Token-Saver: off leaves an openai-compatible target's body alone", async () => {
    const body = await claudeTurn(DIFF + REMINDER);
    const ctx = ctxFor("anthropic-messages", body, { "X-Switchyard-Token-Saver": "off" });
    const t = send(ctx, "openai-compatible", "glm-5");
    expect(bodyOf(t).messages.find((m: any) => m.role === "tool").content).toBe(DIFF + REMINDER);
    expect(ctx.trace.tokenSaver).toEqual({ skipped: "header" });
  });

  test("settings.token_savers.compress_tool_results: false leaves it alone and records nothing", async () => {
    const ctx = ctxFor("anthropic-messages", await claudeTurn(DIFF + REMINDER));
    const t = send(ctx, "openai-compatible", "glm-5", { compressToolResults: false });
    expect(bodyOf(t).messages.find((m: any) => m.role === "tool").content).toBe(DIFF + REMINDER);
    expect(ctx.trace.tokenSaver).toBeUndefined();
  });

  test("skipReason: the header value is read case-insensitively; anthropic-compatible is not cache-sensitive", () => {
    const h = (v?: string) => new Headers(v === undefined ? {} : { "x-switchyard-token-saver": v });
    expect(skipReason("openai", h("OFF"), ON)).toBe("header");
    expect(skipReason("openai", h("on"), ON)).toBeUndefined();
    expect(skipReason("anthropic-compatible", h(), ON)).toBeUndefined();
    expect(skipReason("claude-code", h(), ON)).toBe("prompt_cache");
    expect(skipReason("openai", h(), undefined)).toBe("disabled");
  });

  test("the trace describes the attempt that was served: a fallback to anthropic clears earlier savings", async () => {
    const ctx = ctxFor("anthropic-messages", await claudeTurn(DIFF + REMINDER));
    send(ctx, "openai-compatible", "glm-5");
    expect(ctx.trace.tokenSaver).toMatchObject({ results: 1 });
    send(ctx, "anthropic", "claude-sonnet-4-5");
    expect(ctx.trace.tokenSaver).toEqual({ skipped: "prompt_cache" });
  });
});

describe("left alone", () => {
  test("an is_error result from Claude Code stays whole in Chat, Responses and Gemini bodies", async () => {
    const log = serverLog(1000);
    const ctx = ctxFor("anthropic-messages", await claudeTurn(log, true));
    const chat = bodyOf(send(ctx, "openai-compatible", "glm-5"));
    expect(chat.messages.find((m: any) => m.role === "tool").content).toBe(`Error: ${log}`);
    const resp = bodyOf(send(ctx, "openai-responses", "gpt-5"));
    expect(resp.input.find((i: any) => i.type === "function_call_output").output).toBe(`Error: ${log}`); // no flag in Responses: said in the text
    const gem = bodyOf(send(ctx, "gemini", "gemini-3-pro"));
    expect(gem.contents.flatMap((c: any) => c.parts).find((p: any) => p.functionResponse).functionResponse.response).toEqual({ error: log });
    expect(ctx.trace.tokenSaver).toBeUndefined();
  });

  test("no tool result of 500+ characters: the upstream body is not parsed, not re-serialised; passthrough keeps the bytes", async () => {
    const parse = spyOn(JSON, "parse");
    try {
      const anth = ctxFor("anthropic-messages", await clientRequest("claude-code-tool-use-2.json"));
      const codex = ctxFor("openai-responses", await clientRequest("codex-tool-use-2.json"));
      parse.mockClear();
      const chat = translate(anth, target(provider("p", "openai-compatible"), "glm-5"), "strip_with_warning") as Translated;
      const before = chat.body;
      saveTokens(anth, target(provider("p", "openai-compatible"), "glm-5"), chat, ON);
      const native = translate(codex, target(provider("r", "openai-responses"), "gpt-5-codex"), "strip_with_warning") as Translated;
      saveTokens(codex, target(provider("r", "openai-responses"), "gpt-5-codex"), native, ON);
      // Neither body was parsed (translate's tool memo, formats/write-body-json.ts, reads
      // back a tool list's own text the first time it sees one: not a body).
      const textOf = (b: string | Uint8Array) => (typeof b === "string" ? b : new TextDecoder().decode(b));
      const bodies = [textOf(chat.body), textOf(native.body)];
      expect(parse.mock.calls.filter(([text]) => bodies.includes(text as string))).toEqual([]);
      expect(chat.body).toBe(before);
      expect(native.body).toBe(codex.rawBody);
      expect(anth.trace.tokenSaver).toBeUndefined();
    } finally {
      parse.mockRestore();
    }
  });

  test("a long result that no rule recognises passes unchanged (and the body is not rewritten)", async () => {
    const prose = "The migration finished. ".repeat(60);
    const ctx = ctxFor("openai-responses", await codexTurn(prose));
    const t = send(ctx, "openai-responses", "gpt-5-codex");
    expect(t.body).toBe(ctx.rawBody);
  });

  test("the no-op path: Claude Code's 100 KB first turn (no long tool result) leaves the upstream body the same string", async () => {
    // What it costs is measured by scripts/bench, not asserted here (no timing assertions in tests).
    const body = await clientRequest("claude-code-default.json");
    const ctx = ctxFor("anthropic-messages", body);
    const t = translate(ctx, target(provider("p", "openai-compatible"), "glm-5"), "strip_with_warning") as Translated;
    const before = t.body;
    saveTokens(ctx, target(provider("p", "openai-compatible"), "glm-5"), t, ON);
    expect(t.body).toBe(before);
    expect(ctx.trace.tokenSaver).toBeUndefined();
  });
});

describe("determinism: the same history compresses to the same bytes every turn", () => {
  test("turn 3 repeats turn 2's compressed messages byte for byte (stable prefix for OpenAI-style caches)", async () => {
    const turn2 = await claudeTurn(sample("rg.txt"));
    const turn3 = structuredClone(turn2);
    turn3.messages.push(
      { role: "assistant", content: [{ type: "text", text: "Found them." }, { type: "tool_use", id: "toolu_fake_2", name: "Bash", input: { command: "git status" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake_2", content: sample("git-status.txt") + REMINDER }] },
    );
    clearSaverCache();
    const a = bodyOf(send(ctxFor("anthropic-messages", turn2), "openai-compatible", "glm-5"));
    // Each turn compresses from scratch: the cache must not be what makes the bytes equal.
    clearSaverCache();
    const ctx3 = ctxFor("anthropic-messages", turn3);
    const b = bodyOf(send(ctx3, "openai-compatible", "glm-5"));
    expect(JSON.stringify(b.messages.slice(0, a.messages.length))).toBe(JSON.stringify(a.messages));
    expect(ctx3.trace.tokenSaver).toMatchObject({ results: 2, rules: { search: 1, git_status: 1 } });
    // And a fresh process (empty cache) produces the same bytes.
    clearSaverCache();
    const again = bodyOf(send(ctxFor("anthropic-messages", structuredClone(turn3)), "openai-compatible", "glm-5"));
    expect(JSON.stringify(again)).toBe(JSON.stringify(b));
  });
});

describe("format accessors (FormatCodec.toolResults)", () => {
  test("Anthropic: string and block content, is_error", () => {
    const body = {
      messages: [
        { role: "user", content: "hi" },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: "one" },
            { type: "tool_result", tool_use_id: "b", is_error: true, content: [{ type: "text", text: "two" }, { type: "image", source: {} }, { type: "text", text: "three" }] },
          ],
        },
      ],
    };
    const slots = codecFor("anthropic-messages").toolResults!(body);
    expect(slots.map((s) => [s.text, s.result, s.isError])).toEqual([["one", 0, false], ["two", 1, true], ["three", 1, true]]);
    slots[2].set("3");
    expect((body.messages[1].content as any)[1].content[2].text).toBe("3");
  });

  test("Chat: tool messages (string or text parts); an `Error:` text counts as an error", () => {
    const body = { messages: [{ role: "user", content: "x" }, { role: "tool", tool_call_id: "c1", content: "ok" }, { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "Error: boom" }] }] };
    const slots = codecFor("openai-chat").toolResults!(body);
    expect(slots.map((s) => [s.text, s.isError])).toEqual([["ok", false], ["Error: boom", true]]);
    slots[0].set("OK");
    expect(body.messages[1].content).toBe("OK");
  });

  test("Responses: function and custom tool outputs, parts, the legacy {content, success} object", () => {
    const body = {
      input: [
        { type: "function_call_output", call_id: "a", output: "s" },
        { type: "custom_tool_call_output", call_id: "b", output: [{ type: "input_text", text: "p" }] },
        { type: "function_call_output", call_id: "c", output: { content: "legacy", success: false } },
        { type: "message", role: "user", content: "not a result" },
      ],
    };
    const slots = codecFor("openai-responses").toolResults!(body);
    expect(slots.map((s) => [s.text, s.isError])).toEqual([["s", false], ["p", false], ["legacy", true]]);
  });

  test("Gemini: response.result, response.error; a structured response is not a text slot", () => {
    const body = { contents: [{ role: "user", parts: [{ functionResponse: { name: "a", response: { result: "r" } } }, { functionResponse: { name: "b", response: { error: "e" } } }, { functionResponse: { name: "c", response: { rows: 3 } } }] }] };
    const slots = codecFor("gemini").toolResults!(body);
    expect(slots.map((s) => [s.text, s.isError])).toEqual([["r", false], ["e", true]]);
  });
});

describe("S-4: cache_control markers count where they reach the provider; elsewhere the pure function decides", () => {
  test("Claude Code's real turn (its marker on the tool result): anthropic-compatible gets it whole; Chat, Responses and Gemini upstreams, which never see the marker, get it shortened", async () => {
    const body = await claudeTurn(DIFF + REMINDER, false, true);
    const ctx = ctxFor("anthropic-messages", body);
    const anth = bodyOf(send(ctx, "anthropic-compatible", "glm-5"));
    expect(anth.messages.at(-1).content[0].content).toBe(DIFF + REMINDER);
    expect(anth.messages.at(-1).content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(ctx.trace.tokenSaver).toEqual({ skipped: "cache_marker" });
    const chat = send(ctx, "openai-compatible", "glm-5");
    expect(bodyText(chat)).not.toContain("cache_control");
    expect(bodyOf(chat).messages.find((m: any) => m.role === "tool").content).toBe(diffOut);
    expect(ctx.trace.tokenSaver).toMatchObject({ results: 1, rules: { diff: 1 } });
    expect(bodyOf(send(ctx, "openai-responses", "gpt-5")).input.find((i: any) => i.type === "function_call_output").output).toBe(diffOut);
    const gem = bodyOf(send(ctx, "gemini", "gemini-3-pro"));
    expect(gem.contents.flatMap((c: any) => c.parts).find((p: any) => p.functionResponse).functionResponse.response.result).toBe(diffOut);
  });

  /**
   * An Anthropic Messages client that marks the previous turn's last message (tryout7): turn 1's tool
   * result sits after the marker, turn 2's marker is on it. Returns both turns' client bodies.
   */
  async function previousTurnMarked() {
    const turn1 = await claudeTurn(serverLog(400));
    turn1.messages.at(-3).content.at(-1).cache_control = { type: "ephemeral" };
    const turn2 = structuredClone(turn1);
    delete turn2.messages.at(-3).content.at(-1).cache_control;
    turn2.messages.at(-1).content.at(-1).cache_control = { type: "ephemeral" };
    turn2.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_fake_2", name: "Bash", input: { command: "rg -n session" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake_2", content: sample("rg.txt") }] },
    );
    return [turn1, turn2];
  }

  test("a marker moving past a shortened result (openai-compatible): turn 1's upstream messages are a byte-identical prefix of turn 2's (tryout7)", async () => {
    const [turn1, turn2] = await previousTurnMarked();
    const a = bodyOf(send(ctxFor("anthropic-messages", turn1), "openai-compatible", "glm-5"));
    const ctx2 = ctxFor("anthropic-messages", turn2);
    const b = bodyOf(send(ctx2, "openai-compatible", "glm-5"));
    expect(a.messages.find((m: any) => m.role === "tool").content).toBe(compressToolResult(serverLog(400))!.text);
    expect(JSON.stringify(b.messages.slice(0, a.messages.length))).toBe(JSON.stringify(a.messages));
    // Turn 2's saving is its own: the log again (the same bytes as in turn 1) and the new search results.
    expect(ctx2.trace.tokenSaver).toMatchObject({ results: 2, rules: { log: 1, search: 1 } });
  });

  test("the same moving marker to anthropic-compatible, which receives the markers: every result as written in both turns", async () => {
    const [turn1, turn2] = await previousTurnMarked();
    const ctx1 = ctxFor("anthropic-messages", turn1);
    const a = bodyOf(send(ctx1, "anthropic-compatible", "glm-5"));
    const b = bodyOf(send(ctxFor("anthropic-messages", turn2), "anthropic-compatible", "glm-5"));
    expect(a.messages.at(-1).content[0].content).toBe(serverLog(400));
    expect(ctx1.trace.tokenSaver).toEqual({ skipped: "cache_marker" });
    expect(b.messages.at(-1).content[0].content).toBe(sample("rg.txt"));
    // Turn 2 differs from turn 1 only by where the client put its marker.
    const unmark = (m: any[]) => JSON.stringify(m).replaceAll(',"cache_control":{"type":"ephemeral"}', "");
    expect(unmark(b.messages.slice(0, a.messages.length))).toBe(unmark(a.messages));
  });

  test("markers in system protect no message; a client that marks none is shortened on anthropic-compatible too", async () => {
    const body = await claudeTurn(DIFF + REMINDER);
    body.system = [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }];
    const ctx = ctxFor("anthropic-messages", body);
    expect(bodyOf(send(ctx, "anthropic-compatible", "glm-5")).messages.at(-1).content[0].content).toBe(diffOut);
  });

  test("a Chat client's marker on a content part (OpenRouter style): kept as written for anthropic-compatible, shortened for openai-compatible (whose tidy pass drops the marker)", async () => {
    const body = {
      model: "glm-5",
      messages: [
        { role: "user", content: "what changed?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "git_diff", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: DIFF },
        { role: "user", content: [{ type: "text", text: "summarise", cache_control: { type: "ephemeral" } }] },
      ],
    };
    const ctx = ctxFor("openai-chat", structuredClone(body));
    const anth = bodyOf(send(ctx, "anthropic-compatible", "glm-5"));
    expect(anth.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === "tool_result").content).toBe(DIFF);
    expect(ctx.trace.tokenSaver).toEqual({ skipped: "cache_marker" });
    const chat = send(ctx, "openai-compatible", "glm-5");
    expect(bodyText(chat)).not.toContain("cache_control");
    expect(bodyOf(chat).messages[2].content).toBe(compressToolResult(DIFF)!.text);
  });
});

describe("a result is judged by itself: a later result cannot change how an earlier one is sent", () => {
  for (const [kind, model] of [["openai-compatible", "glm-5"], ["openai-responses", "gpt-5"], ["gemini", "gemini-3-pro"], ["anthropic-compatible", "glm-5"]] as const) {
    test(`${kind}: a later is_error result with the same text leaves turn 1 a byte-identical prefix of turn 2, and stays whole itself (tryout7)`, async () => {
      const log = serverLog(400);
      const turn1 = await claudeTurn(log);
      const turn2 = structuredClone(turn1);
      turn2.messages.push(
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_fake_2", name: "Bash", input: { command: "bun test --bail" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_fake_2", is_error: true, content: log }] },
      );
      const key = kind === "openai-responses" ? "input" : kind === "gemini" ? "contents" : "messages";
      const a = bodyOf(send(ctxFor("anthropic-messages", turn1), kind, model))[key];
      const ctx2 = ctxFor("anthropic-messages", turn2);
      const b = bodyOf(send(ctx2, kind, model))[key];
      expect(JSON.stringify(a)).toContain(JSON.stringify(compressToolResult(log)!.text));
      expect(JSON.stringify(b.slice(0, a.length))).toBe(JSON.stringify(a));
      // The error result itself goes whole (as the format carries an error).
      expect(JSON.stringify(b)).toContain(JSON.stringify(kind === "openai-compatible" || kind === "openai-responses" ? `Error: ${log}` : log));
      expect(ctx2.trace.tokenSaver).toMatchObject({ results: 1, rules: { log: 1 } });
    });
  }
});
