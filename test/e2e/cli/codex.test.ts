/**
 * The real Codex CLI (`codex exec --skip-git-repo-check …`) through switchyard to the fake upstream, on
 * three lanes: an openai-responses provider (native passthrough), an anthropic-compatible provider
 * (Responses ↔ Anthropic Messages) and an openai-compatible provider (Responses ↔ OpenAI Chat). Each
 * lane: one plain answer and one tool round trip (the fake asks for `exec_command` with
 * `echo switchyard-e2e`; Codex runs it in its sandbox and sends the output; the fake answers with a text
 * that quotes it). Then, on the two translated lanes, Codex applies a real patch: it declares its
 * freeform `apply_patch` tool (for model gpt-5.5, an alias of the lane's model here), the provider
 * sees a function tool with one `input` string, the fake calls it with a patch, Codex applies it to
 * files in its working directory and sends the result back through the provider's tool-result shape.
 * And a call of a function in a Codex `namespace` tool (multi_agent_v1's close_agent, declared to the
 * translated providers as `multi_agent_v1__close_agent`) reaches Codex's own handler.
 *
 * The CLI is installed by the beforeAll (npm, into .cache/e2e-clis/); without network that fails and so
 * do these tests. A first "direct" test runs the CLI straight against the fake, without the gateway:
 * when it fails, the CLI or the environment is broken, not switchyard.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CODEX } from "../../support/cli-install.ts";
import {
  ANTHROPIC_COMPATIBLE_LANE,
  CLI_TEST_TIMEOUT_MS,
  expectLane,
  finalTextFor,
  modelRequests,
  plainAnswer,
  runCodex,
  summarizeRequests,
  TOOL_COMMAND,
  TOOL_MARKER,
  TOOL_PROMPT,
  toolResultsIn,
  toolNamesIn,
  toolRoundTrip,
  type CliLane,
  type CodexRun,
} from "../../support/cli-agents.ts";
import { simpleReply, startFakeUpstream, type FakeHandler, type FakeUpstream } from "../../support/fake-upstream.ts";
import { conformance } from "../../support/conformance.ts";
import { CLI_STRICT, cliSuite } from "../../support/cli-suite.ts";
import { startGateway } from "../../support/gateway.ts";
import { fakeProviders } from "../../support/configs.ts";

const YAML = `
${fakeProviders([["resp", "openai-responses"], ["anthc", "anthropic-compatible"], ["chat", "openai-compatible"]])}`;

const LANES: CliLane[] = [
  { name: "openai-responses (native)", model: "resp/gpt-e2e", upstreamModel: "gpt-e2e", format: "openai-responses", path: "/v1/responses" },
  ANTHROPIC_COMPATIBLE_LANE,
  { name: "openai-compatible", model: "chat/qwen-e2e", upstreamModel: "qwen-e2e", format: "openai-chat", path: "/v1/chat/completions" },
];

const suite = cliSuite([CODEX], YAML);

function expectSuccess(r: CodexRun, fake: FakeUpstream, expectedText: string) {
  const story = () => r.describe(`--- upstream requests ---\n${summarizeRequests(fake)}`);
  expect(fake.violations, story()).toEqual([]);
  expect(r.run.timedOut, story()).toBe(false);
  expect(r.run.code, story()).toBe(0);
  // What the user sees: the final message on stdout (and the same in --output-last-message).
  expect(r.run.stdout, story()).toContain(expectedText);
  expect(r.lastMessage, story()).toContain(expectedText);
  expect(r.outside, story()).toEqual([]);
}

function expectToolRoundTrip(fake: FakeUpstream, r: CodexRun) {
  const reqs = modelRequests(fake);
  const story = r.describe(`--- upstream requests ---\n${summarizeRequests(fake)}`);
  expect(reqs.length, story).toBeGreaterThanOrEqual(2);
  expect(toolResultsIn(reqs[0]), story).toEqual([]);
  const results = toolResultsIn(reqs[1]);
  expect(results.length, story).toBe(1);
  expect(results[0].text, story).toContain(TOOL_MARKER);
  // Codex shows the command it ran and its output on stderr.
  expect(r.run.stderr, story).toContain(TOOL_COMMAND);
}

describe("Codex straight to the fake (control, no gateway)", () => {
  test(
    "tool round trip",
    async () => {
      const fake = await startFakeUpstream({ strict: CLI_STRICT });
      try {
        fake.handle(toolRoundTrip({ lane: "direct", toolName: "exec_command", args: { cmd: TOOL_COMMAND } }));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${fake.url}/v1`, model: "gpt-e2e", prompt: TOOL_PROMPT, trap: suite.trap });
        expectSuccess(r, fake, finalTextFor("direct"));
        expectToolRoundTrip(fake, r);
      } finally {
        await fake.stop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

for (const lane of LANES) {
  describe(`Codex → switchyard → ${lane.name}`, () => {
    test(
      "plain answer",
      conformance(CODEX, lane.name, "plain answer", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        const text = `Plain answer over ${lane.name}.`;
        suite.gw.fake.handle(plainAnswer(text));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: lane.model, prompt: "say hi", trap: suite.trap });
        expectSuccess(r, suite.gw.fake, text);
        await expectLane(suite.gw, lane, r, logStart);
      }),
      CLI_TEST_TIMEOUT_MS,
    );

    test(
      "tool round trip (exec_command)",
      conformance(CODEX, lane.name, "tool round trip", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        suite.gw.fake.handle(toolRoundTrip({ lane: lane.name, toolName: "exec_command", args: { cmd: TOOL_COMMAND } }));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: lane.model, prompt: TOOL_PROMPT, trap: suite.trap });
        expectSuccess(r, suite.gw.fake, finalTextFor(lane.name));
        await expectLane(suite.gw, lane, r, logStart);
        expectToolRoundTrip(suite.gw.fake, r);
      }),
      CLI_TEST_TIMEOUT_MS,
    );
  });
}

/** The patch the fake asks Codex to apply: one edit of an existing file, one new file. */
const PATCH = "*** Begin Patch\n*** Update File: greet.txt\n@@\n-hello\n+hello from switchyard\n*** Add File: added.txt\n+made by apply_patch through a translated provider\n*** End Patch\n";

/**
 * While no tool result came back, answer a request that offers `apply_patch` with a call of it
 * carrying PATCH (as a function call with one `input` argument: the translated providers' shape);
 * once a result came back, a final text quoting it.
 */
function patchRoundTrip(lane: string): FakeHandler {
  return (req) => {
    if (!req.format) return undefined;
    const results = toolResultsIn(req);
    if (results.length > 0) return simpleReply(req.format, { text: `Patched over ${lane}: ${results[0].text.split("\n")[0]}` }, req.stream);
    if (toolNamesIn(req).includes("apply_patch")) {
      return simpleReply(req.format, { toolCalls: [{ id: req.format === "anthropic-messages" ? "toolu_patch_1" : "call_patch_1", name: "apply_patch", arguments: { input: PATCH } }] }, req.stream);
    }
    return simpleReply(req.format, { text: "ok" }, req.stream);
  };
}

for (const lane of [
  { name: "openai-compatible", target: "chat/qwen-e2e", format: "openai-chat" },
  { name: "anthropic-compatible", target: "anthc/glm-e2e", format: "anthropic-messages" },
] as const) {
  describe(`Codex applies a patch through switchyard → ${lane.name} (freeform apply_patch translated)`, () => {
    test(
      "the file on disk is changed exactly as the patch says",
      async () => {
        // Codex 0.171.0 declares the freeform apply_patch tool for the model names its bundled catalogue
        // gives it (gpt-5.5 among them): an alias of that name sends the conversation to the lane.
        const lgw = await startGateway(`${YAML}aliases:\n  gpt-5.5: ${lane.target}\n`, { fakeOptions: { strict: CLI_STRICT } });
        try {
          lgw.fake.handle(patchRoundTrip(lane.name));
          let greet = "";
          let added = "";
          const r = await runCodex(suite.bins[0], {
            baseUrlV1: `${lgw.url}/v1`,
            model: "gpt-5.5",
            prompt: "Change the greeting in greet.txt and add added.txt.",
            trap: suite.trap,
            // The scratch work directory is the sandbox; Codex's own sandbox needs user namespaces.
            extraArgs: ["--dangerously-bypass-approvals-and-sandbox"],
            setupWork: (work) => writeFileSync(join(work, "greet.txt"), "hello\n"),
            inspectWork: (work) => {
              greet = readFileSync(join(work, "greet.txt"), "utf8");
              try {
                added = readFileSync(join(work, "added.txt"), "utf8");
              } catch {
                added = "(missing)";
              }
            },
          });
          const story = r.describe(`--- upstream requests ---\n${summarizeRequests(lgw.fake)}`);
          expect(lgw.fake.violations, story).toEqual([]);
          expect(r.run.code, story).toBe(0);
          expect(greet, story).toBe("hello from switchyard\n");
          expect(added, story).toBe("made by apply_patch through a translated provider\n");
          const reqs = modelRequests(lgw.fake).filter((q) => toolNamesIn(q).includes("apply_patch"));
          expect(reqs.length, story).toBeGreaterThanOrEqual(2);
          expect(reqs.every((q) => q.format === lane.format), story).toBe(true);
          // The second turn carries Codex's tool output back to the provider as its own tool result.
          const results = toolResultsIn(reqs[1]);
          expect(results.length, story).toBe(1);
          expect(results[0].text, story).toContain("Success");
          expect(r.lastMessage, story).toContain(`Patched over ${lane.name}`);
        } finally {
          await lgw.stop();
        }
      },
      CLI_TEST_TIMEOUT_MS,
    );
  });
}

/** The names of the tool calls in a Chat or Anthropic request's history. */
function calledIn(req: { format?: string; body: any }): string[] {
  const msgs: any[] = req.body?.messages ?? [];
  if (req.format === "openai-chat") return msgs.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.function.name));
  return msgs.flatMap((m) => (Array.isArray(m.content) ? m.content : []).filter((b: any) => b.type === "tool_use").map((b: any) => b.name));
}

for (const lane of LANES.filter((l) => l.format !== "openai-responses")) {
  test(
    `Codex → switchyard → ${lane.name}: a call of a namespace tool (multi_agent_v1 close_agent) reaches Codex's own handler; the provider sees it by namespace + name`,
    async () => {
      // Codex 0.171 runs a namespaced function only when the call carries its namespace: straight from a
      // Responses server, `close_agent` or `multi_agent_v1__close_agent` without one is "unsupported call".
      suite.gw.fake.reset();
      const FLAT = "multi_agent_v1__close_agent";
      suite.gw.fake.handle((req) => {
        if (!req.format) return undefined;
        if (toolResultsIn(req).length > 0) return simpleReply(req.format, { text: `Closed over ${lane.name}.` }, req.stream);
        if (!toolNamesIn(req).includes(FLAT)) return simpleReply(req.format, { text: "ok" }, req.stream);
        return simpleReply(req.format, { toolCalls: [{ id: req.format === "anthropic-messages" ? "toolu_ns_1" : "call_ns_1", name: FLAT, arguments: { target: "agent-x" } }] }, req.stream);
      });
      const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: lane.model, prompt: "Close agent x.", trap: suite.trap });
      const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
      expect(r.run.code, story).toBe(0);
      const reqs = modelRequests(suite.gw.fake).filter((q) => toolNamesIn(q).includes(FLAT));
      expect(reqs.length, story).toBe(2);
      expect(toolNamesIn(reqs[0]), story).not.toContain("close_agent");
      // Codex ran close_agent (its handler refuses the made-up id) and sent the call back in history.
      const results = toolResultsIn(reqs[1]);
      expect(results.map((t) => t.text), story).toEqual([expect.stringContaining("invalid agent id agent-x")]);
      expect(calledIn(reqs[1]), story).toEqual([FLAT]);
      expect(r.lastMessage, story).toContain(`Closed over ${lane.name}.`);
    },
    CLI_TEST_TIMEOUT_MS,
  );
}

/** An Anthropic stream with thinking on: a signed thinking block, then a call of `tool` with `args`. */
function signedThinkingThenToolUse(model: string, tool: string, args: unknown, thinking: string, signature: string): string {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return (
    ev("message_start", { type: "message_start", message: { id: "msg_th1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }) +
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
    ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_th1", name: tool, input: {} } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: JSON.stringify(args) } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
    ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 20 } }) +
    ev("message_stop", { type: "message_stop" })
  );
}

describe("Codex with reasoning on, through switchyard → anthropic-compatible: signed thinking across a tool loop", () => {
  const THINKING = "The user wants the marker printed; run echo. ✓";
  const SIGNATURE = "EqSignedThinking+/==";
  for (const websockets of [false, true]) {
    test(
      `${websockets ? "over the Responses WebSocket" : "over HTTP"}: the second turn carries the thinking block whole and keeps thinking on`,
      async () => {
        suite.gw.fake.reset();
        suite.gw.fake.handle((req) => {
          if (!req.format) return undefined;
          if (toolResultsIn(req).some((t) => t.text.includes(TOOL_MARKER))) return simpleReply(req.format, { text: finalTextFor("thinking") }, req.stream);
          if (req.format === "anthropic-messages" && req.stream && toolNamesIn(req).includes("exec_command"))
            return { sse: signedThinkingThenToolUse(req.model ?? "m", "exec_command", { cmd: TOOL_COMMAND }, THINKING, SIGNATURE) };
          return simpleReply(req.format, { text: "ok" }, req.stream);
        });
        const r = await runCodex(suite.bins[0], {
          baseUrlV1: `${suite.gw.url}/v1`,
          model: ANTHROPIC_COMPATIBLE_LANE.model,
          prompt: TOOL_PROMPT,
          trap: suite.trap,
          websockets,
          extraArgs: ["-c", 'model_reasoning_effort="high"'],
        });
        const story = r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
        expect(r.run.code, story).toBe(0);
        expect(r.lastMessage, story).toContain(finalTextFor("thinking"));
        const reqs = modelRequests(suite.gw.fake).filter((q) => toolNamesIn(q).includes("exec_command"));
        expect(reqs.length, story).toBe(2);
        expect(reqs[0].body.thinking?.type, story).toBe("enabled");
        // Codex kept the reasoning item (encrypted_content tagged for Anthropic) and sent it back.
        const assistant = (reqs[1].body.messages as any[]).find((m) => m.role === "assistant");
        expect(assistant?.content?.[0], story).toEqual({ type: "thinking", thinking: THINKING, signature: SIGNATURE });
        expect(assistant?.content?.[1]?.type, story).toBe("tool_use");
        expect(reqs[1].body.thinking?.type, story).toBe("enabled");
        expect(r.outside, story).toEqual([]);
      },
      CLI_TEST_TIMEOUT_MS,
    );
  }
});
