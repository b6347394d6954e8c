/**
 * The real Codex CLI with `supports_websockets = true` (SPEC 2.5): it opens `/v1/responses` as a
 * WebSocket, and the gateway serves every turn over the socket — no fallback to HTTP, no reconnect
 * warning — on a native Responses provider and a translated (Anthropic-format) one: one plain answer
 * and one tool round trip each.
 */
import { describe, expect, test } from "bun:test";
import { CODEX } from "../../support/cli-install.ts";
import {
  ANTHROPIC_COMPATIBLE_LANE,
  CLI_TEST_TIMEOUT_MS,
  cutOffAnthropicReply,
  expectLane,
  finalTextFor,
  gatewayRequestLogs,
  modelRequests,
  plainAnswer,
  runCodex,
  summarizeRequests,
  TOOL_COMMAND,
  TOOL_MARKER,
  TOOL_PROMPT,
  toolResultsIn,
  toolRoundTrip,
  type CliLane,
  type CodexRun,
} from "../../support/cli-agents.ts";
import { conformance } from "../../support/conformance.ts";
import { CLI_STRICT, cliSuite } from "../../support/cli-suite.ts";
import { startGateway } from "../../support/gateway.ts";
import { fakeProviders } from "../../support/configs.ts";

const YAML = `
${fakeProviders([["resp", "openai-responses"], ["anthc", "anthropic-compatible"]])}`;

const LANES: CliLane[] = [
  { name: "openai-responses (native)", model: "resp/gpt-e2e", upstreamModel: "gpt-e2e", format: "openai-responses", path: "/v1/responses" },
  ANTHROPIC_COMPATIBLE_LANE,
];

const suite = cliSuite([CODEX], YAML);

/** Success, served over the socket: every model request the gateway logged came as a WebSocket frame, and Codex never fell back. */
function expectSocketSuccess(r: CodexRun, expectedText: string, logStart: number) {
  const story = () => r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}\n--- gateway log ---\n${suite.gw.logs.slice(logStart).join("\n")}`);
  expect(r.run.timedOut, story()).toBe(false);
  expect(r.run.code, story()).toBe(0);
  expect(r.lastMessage, story()).toContain(expectedText);
  expect(r.outside, story()).toEqual([]);
  const output = r.run.stdout + r.run.stderr;
  expect(output, story()).not.toMatch(/falling back|fallback to HTTP|reconnecting|stream disconnected|websocket/i);
  const logged = gatewayRequestLogs(suite.gw.logs.slice(logStart));
  expect(logged.length, story()).toBeGreaterThanOrEqual(1);
  for (const l of logged) expect(l.transport, story()).toBe("websocket");
}

for (const lane of LANES) {
  describe(`Codex over the Responses WebSocket → ${lane.name}`, () => {
    test(
      "plain answer",
      conformance(CODEX, `${lane.name} over WebSocket`, "plain answer", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        const text = `Socket answer over ${lane.name}.`;
        suite.gw.fake.handle(plainAnswer(text));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: lane.model, prompt: "say hi", trap: suite.trap, websockets: true });
        await expectLane(suite.gw, lane, r, logStart);
        expectSocketSuccess(r, text, logStart);
      }),
      CLI_TEST_TIMEOUT_MS,
    );

    test(
      "tool round trip (exec_command)",
      conformance(CODEX, `${lane.name} over WebSocket`, "tool round trip", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        suite.gw.fake.handle(toolRoundTrip({ lane: lane.name, toolName: "exec_command", args: { cmd: TOOL_COMMAND } }));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${suite.gw.url}/v1`, model: lane.model, prompt: TOOL_PROMPT, trap: suite.trap, websockets: true });
        await expectLane(suite.gw, lane, r, logStart);
        expectSocketSuccess(r, finalTextFor(lane.name), logStart);
        const reqs = modelRequests(suite.gw.fake);
        expect(reqs.length).toBeGreaterThanOrEqual(2);
        const results = toolResultsIn(reqs[1]!);
        expect(results.length).toBe(1);
        expect(results[0]!.text).toContain(TOOL_MARKER);
      }),
      CLI_TEST_TIMEOUT_MS,
    );
  });
}

describe("Codex over the Responses WebSocket: a reply cut off after the commit point", () => {
  test(
    "the CLI reports the stream error and exits non-zero, never the cut-off text as its answer",
    conformance(CODEX, "anthropic-compatible over WebSocket", "error after commit", async () => {
      const egw = await startGateway(YAML, { fakeOptions: { strict: CLI_STRICT } });
      try {
        egw.fake.handle(cutOffAnthropicReply("Partial answer"));
        const r = await runCodex(suite.bins[0], { baseUrlV1: `${egw.url}/v1`, model: "anthc/glm-e2e", prompt: "say hi", trap: suite.trap, websockets: true });
        const story = r.describe(`--- upstream requests ---\n${summarizeRequests(egw.fake)}\n--- gateway log ---\n${egw.logs.join("\n")}`);
        expect(r.run.code, story).not.toBe(0);
        expect(r.lastMessage, story).not.toContain("Partial answer");
        expect(r.run.stderr, story).toContain("The upstream stream ended before the reply was complete.");
        expect(r.outside, story).toEqual([]);
        const logged = gatewayRequestLogs(egw.logs);
        expect(logged.some((l) => l.transport === "websocket" && l.outcome === "upstream_error"), story).toBe(true);
      } finally {
        await egw.stop();
      }
    }),
    CLI_TEST_TIMEOUT_MS,
  );
});
