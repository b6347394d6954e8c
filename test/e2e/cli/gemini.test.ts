/**
 * The real Gemini CLI (`gemini -p … --output-format json`, pinned in test/support/cli-install.ts)
 * through switchyard's Gemini endpoints (SPEC 2.1) to the fake upstream, on a native lane (a `gemini`
 * provider: the client's bytes pass through) and a translated one (an Anthropic-format provider): one
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

const YAML = `
${fakeProviders([["gem", "gemini"], ["anthc", "anthropic-compatible"]])}`;

const LANES: CliLane[] = [
  { name: "gemini (native)", model: "gem/gemini-e2e", upstreamModel: "gemini-e2e", format: "gemini", path: "/v1beta/models/gemini-e2e:" },
  ANTHROPIC_COMPATIBLE_LANE,
];

const suite = cliSuite([GEMINI_CLI], YAML);

function expectSuccess(r: GeminiRun, expectedText: string) {
  const story = () => r.describe(`--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`);
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
