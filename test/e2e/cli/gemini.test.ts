/**
 * The real Gemini CLI (`gemini -p … --output-format json`, pinned in test/support/cli-install.ts)
 * through switchyard's Gemini endpoints (SPEC 2.1) to the fake upstream, on a native lane (a `gemini`
 * provider: the client's bytes pass through) and translated ones (an Anthropic-format provider, and
 * gpt-5 on OpenAI's own Chat API; the fake is strict, a body the API refuses fails the lane): one
 * plain answer and one tool round trip each (the fake asks for `run_shell_command` with
 * `echo switchyard-e2e`; the CLI runs it and sends the output back; the fake answers with a text that
 * quotes it). Scratch HOME, API-key auth, telemetry and usage statistics off.
 */
import { describe, expect, test } from "bun:test";
import { GEMINI_CLI } from "../../support/cli-install.ts";
import {
  ANTHROPIC_COMPATIBLE_LANE,
  CLI_TEST_TIMEOUT_MS,
  expectLane,
  finalTextFor,
  modelRequests,
  plainAnswer,
  runGemini,
  summarizeRequests,
  TOOL_COMMAND,
  TOOL_MARKER,
  TOOL_PROMPT,
  toolResultsIn,
  toolRoundTrip,
  type CliLane,
  type GeminiRun,
} from "../../support/cli-agents.ts";
import { conformance } from "../../support/conformance.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";
import { simpleReply } from "../../support/fake-upstream.ts";

const YAML = `
${fakeProviders([["gem", "gemini"], ["anthc", "anthropic-compatible"], ["chat", "openai-compatible"], ["oai", "openai"]])}`;

const LANES: CliLane[] = [
  { name: "gemini (native)", model: "gem/gemini-e2e", upstreamModel: "gemini-e2e", format: "gemini", path: "/v1beta/models/gemini-e2e:" },
  ANTHROPIC_COMPATIBLE_LANE,
  // OpenAI's own API (kind openai; the strict fake applies its rules, e.g. tool descriptions ≤ 1024 characters).
  { name: "openai (gpt-5)", model: "oai/gpt-5", upstreamModel: "gpt-5", format: "openai-chat", path: "/v1/chat/completions" },
];

const suite = cliSuite([GEMINI_CLI], YAML);

function expectSuccess(r: GeminiRun, expectedText: string) {
  const story = () => r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
  expect(suite.gw.fake.violations, story()).toEqual([]);
  expect(r.run.timedOut, story()).toBe(false);
  expect(r.run.code, story()).toBe(0);
  expect(r.response, story()).toContain(expectedText);
  expect(r.outside, story()).toEqual([]);
}

for (const lane of LANES) {
  describe(`Gemini CLI → switchyard → ${lane.name}`, () => {
    test(
      "plain answer",
      conformance(GEMINI_CLI, lane.name, "plain answer", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        const text = `Plain answer over ${lane.name}.`;
        suite.gw.fake.handle(plainAnswer(text));
        const r = await runGemini(suite.bins[0], { baseUrl: suite.gw.url, model: lane.model, prompt: "say hi", trap: suite.trap });
        expectSuccess(r, text);
        await expectLane(suite.gw, lane, r, logStart);
        // Usage reached the CLI through the Gemini shape (the fake reports 11 in, 7 out). The CLI keys
        // its stats by the reply's modelVersion: the model asked for when translated, the provider's
        // own on the native lane.
        const models = (r.json?.stats?.models ?? {}) as Record<string, { tokens?: unknown }>;
        expect(Object.keys(models), r.describe()).toEqual([lane.format === "gemini" ? "fake-model" : lane.model]);
        expect(Object.values(models)[0]?.tokens, r.describe()).toMatchObject({ prompt: 11, candidates: 7, total: 18 });
      }),
      CLI_TEST_TIMEOUT_MS,
    );

    test(
      "tool round trip (run_shell_command)",
      conformance(GEMINI_CLI, lane.name, "tool round trip", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        suite.gw.fake.handle(toolRoundTrip({ lane: lane.name, toolName: "run_shell_command", args: { command: TOOL_COMMAND } }));
        const r = await runGemini(suite.bins[0], { baseUrl: suite.gw.url, model: lane.model, prompt: TOOL_PROMPT, trap: suite.trap });
        expectSuccess(r, finalTextFor(lane.name));
        await expectLane(suite.gw, lane, r, logStart);
        const reqs = modelRequests(suite.gw.fake);
        const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
        expect(reqs.length, story).toBeGreaterThanOrEqual(2);
        expect(toolResultsIn(reqs[0]!), story).toEqual([]);
        const results = toolResultsIn(reqs.at(-1)!);
        expect(results.length, story).toBe(1);
        expect(results[0]!.text, story).toContain(TOOL_MARKER);
        expect(r.json?.stats?.tools?.byName?.run_shell_command?.success, story).toBe(1);
      }),
      CLI_TEST_TIMEOUT_MS,
    );
  });
}

/** An Anthropic stream: signed thinking, then a call of run_shell_command with TOOL_COMMAND. */
function thinkThenCall(model: string): string {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return (
    ev("message_start", { type: "message_start", message: { id: "msg_t1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }) +
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I should run the command." } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "ZTJlLXNpZw==" } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
    ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_e2e_1", name: "run_shell_command", input: {} } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: JSON.stringify({ command: TOOL_COMMAND }) } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
    ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } }) +
    ev("message_stop", { type: "message_stop" })
  );
}

describe("Gemini CLI → switchyard → anthropic-compatible, thinking on", () => {
  // Gemini CLI keeps no thought parts in its history; the provider's signed thinking rides on the
  // call's thoughtSignature (formats/gemini/thought-carry.ts), so the turn after the tool call keeps
  // thinking on and gives the provider its thinking back first (until 2026-12-07: thinking off,
  // dropped_thinking_config, on every turn after a tool call).
  test(
    "the turn after a tool call keeps thinking on, with the signed thinking first",
    async () => {
      suite.gw.fake.reset();
      const lane = ANTHROPIC_COMPATIBLE_LANE;
      suite.gw.fake.handle((req) => {
        if (req.format !== "anthropic-messages") return undefined;
        if (toolResultsIn(req).some((t) => t.text.includes(TOOL_MARKER))) return simpleReply(req.format, { text: finalTextFor(lane.name) }, req.stream);
        if (req.stream && req.body.tools?.some((t: { name?: string }) => t.name === "run_shell_command")) return { sse: thinkThenCall(lane.upstreamModel) };
        return simpleReply(req.format, { text: "ok" }, req.stream);
      });
      const settings = { modelConfigs: { customOverrides: [{ match: { model: lane.model }, modelConfig: { generateContentConfig: { thinkingConfig: { thinkingBudget: 4096, includeThoughts: true } } } }] } };
      const r = await runGemini(suite.bins[0], { baseUrl: suite.gw.url, model: lane.model, prompt: TOOL_PROMPT, trap: suite.trap, settings });
      expectSuccess(r, finalTextFor(lane.name));
      const reqs = modelRequests(suite.gw.fake);
      const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
      const first = reqs.find((q) => toolResultsIn(q).length === 0 && q.body.thinking);
      expect(first?.body.thinking?.type, story).toBe("enabled");
      const after = reqs.find((q) => toolResultsIn(q).some((t) => t.text.includes(TOOL_MARKER)));
      expect(after, story).toBeDefined();
      expect(after!.body.thinking?.type, story).toBe("enabled");
      const assistant = after!.body.messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content[0], story).toEqual({ type: "thinking", thinking: "I should run the command.", signature: "ZTJlLXNpZw==" });
      expect(assistant.content.at(-1).type, story).toBe("tool_use");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

/** A Chat stream (DeepSeek style): reasoning_content, then a call of run_shell_command with TOOL_COMMAND. */
function reasonThenCall(model: string): string {
  const c = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: "chatcmpl-t1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return (
    c({ role: "assistant", reasoning_content: "I should run " }) +
    c({ reasoning_content: "the command." }) +
    c({ tool_calls: [{ index: 0, id: "call_e2e_1", type: "function", function: { name: "run_shell_command", arguments: JSON.stringify({ command: TOOL_COMMAND }) } }] }) +
    c({}, "tool_calls") +
    "data: [DONE]\n\n"
  );
}

describe("Gemini CLI → switchyard → openai-compatible thinking model", () => {
  // The same for a Chat thinking model: its reasoning_content rides on the call and goes back on the
  // turn after it (until 2026-12-07 that turn had none).
  test(
    "the turn after a tool call sends the model's reasoning_content back",
    async () => {
      suite.gw.fake.reset();
      const model = "chat/deepseek-e2e";
      suite.gw.fake.handle((req) => {
        if (req.format !== "openai-chat") return undefined;
        if (toolResultsIn(req).some((t) => t.text.includes(TOOL_MARKER))) return simpleReply(req.format, { text: finalTextFor("openai-compatible") }, req.stream);
        if (req.stream && req.body.tools?.some((t: { function?: { name?: string } }) => t.function?.name === "run_shell_command")) return { sse: reasonThenCall("deepseek-e2e") };
        return simpleReply(req.format, { text: "ok" }, req.stream);
      });
      const r = await runGemini(suite.bins[0], { baseUrl: suite.gw.url, model, prompt: TOOL_PROMPT, trap: suite.trap });
      expectSuccess(r, finalTextFor("openai-compatible"));
      const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
      const after = modelRequests(suite.gw.fake).find((q) => toolResultsIn(q).some((t) => t.text.includes(TOOL_MARKER)));
      expect(after, story).toBeDefined();
      const assistant = after!.body.messages.find((m: { role: string; tool_calls?: unknown }) => m.role === "assistant" && m.tool_calls);
      expect(assistant?.reasoning_content, story).toBe("I should run the command.");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
