/**
 * The real Claude Code CLI (`claude -p … --output-format json`) through switchyard to the fake upstream,
 * on four lanes: the anthropic provider (native passthrough), an openai-compatible provider (Anthropic
 * Messages ↔ OpenAI Chat), a gemini provider (Anthropic Messages ↔ Gemini) and an openai provider
 * (gpt-4.1 on OpenAI's own Chat API). The fake is strict: a body the provider's API refuses fails the lane. Each lane: one plain
 * answer and one tool round trip (the fake asks for `Bash` with `echo switchyard-e2e`; Claude Code runs
 * it and sends the result; the fake answers with a text that quotes it).
 *
 * The CLI is installed by the beforeAll (npm, into .cache/e2e-clis/); without network that fails and
 * so do these tests. A first "direct" test runs the CLI straight against the fake, without the gateway:
 * when it fails, the CLI or the environment is broken, not switchyard.
 */
import { describe, expect, test } from "bun:test";
import { CLAUDE_CODE } from "../../support/cli-install.ts";
import {
  CLI_TEST_TIMEOUT_MS,
  gatewayRequestLogs,
  cutOffAnthropicReply,
  expectLane,
  credentialOf,
  finalTextFor,
  modelRequests,
  plainAnswer,
  runClaude,
  summarizeRequests,
  TOOL_COMMAND,
  TOOL_MARKER,
  toolResultsIn,
  toolRoundTrip,
  type CliLane,
  type ClaudeRun,
} from "../../support/cli-agents.ts";
import { startFakeUpstream, type FakeUpstream } from "../../support/fake-upstream.ts";
import { conformance } from "../../support/conformance.ts";
import { CLI_STRICT, cliSuite } from "../../support/cli-suite.ts";
import { startGateway } from "../../support/gateway.ts";
import { fakeProviders } from "../../support/configs.ts";

const YAML = `
${fakeProviders([["anth", "anthropic"], ["chat", "openai-compatible"], ["gem", "gemini"], ["oai", "openai"]])}aliases:
  e2e-alias: chat/glm-e2e
  claude-sonnet-4-5: gem/gemini-e2e
`;

const LANES: CliLane[] = [
  { name: "anthropic (native)", model: "anth/claude-e2e", upstreamModel: "claude-e2e", format: "anthropic-messages", path: "/v1/messages" },
  { name: "openai-compatible", model: "chat/glm-e2e", upstreamModel: "glm-e2e", format: "openai-chat", path: "/v1/chat/completions" },
  { name: "gemini", model: "gem/gemini-e2e", upstreamModel: "gemini-e2e", format: "gemini", path: "/v1beta/models/gemini-e2e:" },
  // OpenAI's own API (kind openai; the strict fake applies its rules, e.g. tool descriptions ≤ 1024 characters).
  { name: "openai (gpt-4.1)", model: "oai/gpt-4.1", upstreamModel: "gpt-4.1", format: "openai-chat", path: "/v1/chat/completions" },
];

const suite = cliSuite([CLAUDE_CODE], YAML);

/** Everything a user or the gateway's operator would notice about one run, checked with a full story on failure. */
function expectSuccess(r: ClaudeRun, fake: FakeUpstream, expectedText: string) {
  const story = () => r.describe(`--- upstream requests ---\n${summarizeRequests(fake)}`);
  expect(fake.violations, story()).toEqual([]);
  expect(r.run.timedOut, story()).toBe(false);
  expect(r.run.code, story()).toBe(0);
  expect(r.json?.is_error, story()).toBe(false);
  expect(r.result, story()).toContain(expectedText);
  expect(r.outside, story()).toEqual([]);
}

function expectToolRoundTrip(fake: FakeUpstream, r: ClaudeRun) {
  const reqs = modelRequests(fake);
  const story = r.describe(`--- upstream requests ---\n${summarizeRequests(fake)}`);
  expect(reqs.length, story).toBeGreaterThanOrEqual(2);
  // The first request had no tool result; the second carried the Bash output.
  expect(toolResultsIn(reqs[0]), story).toEqual([]);
  const results = toolResultsIn(reqs[1]);
  expect(results.length, story).toBe(1);
  expect(results[0].text, story).toContain(TOOL_MARKER);
  expect(r.json?.num_turns, story).toBeGreaterThanOrEqual(2);
}

/**
 * On OpenAI's own Chat API (descriptions ≤ 1024 characters): Claude Code's Agent tool description (over
 * 3,000 characters, its subagent types at the end) ends in a pointer and its rest is in the system
 * message; both requests of the round trip start with the same bytes up to the end of the system
 * message, tools the same (the prompt cache).
 */
function expectMovedDescriptions(fake: FakeUpstream, r: ClaudeRun) {
  const reqs = modelRequests(fake);
  const story = r.describe(`--- upstream requests ---\n${summarizeRequests(fake)}`);
  const agent = reqs[0]!.body.tools.find((t: any) => t.function.name === "Agent")?.function.description as string;
  expect(agent.endsWith(' (continued in the system message under "Tool Agent")'), story).toBe(true);
  const system = reqs[0]!.body.messages[0];
  expect(system.role, story).toBe("system");
  expect(system.content, story).toContain("\n\n## Tool Agent (description continued)\n\n");
  const upToSystem = (raw: string) => raw.slice(0, raw.indexOf(JSON.stringify(system.content)) + JSON.stringify(system.content).length);
  expect(upToSystem(reqs[1]!.raw), story).toBe(upToSystem(reqs[0]!.raw));
  expect(upToSystem(reqs[0]!.raw).length, story).toBeGreaterThan(JSON.stringify(system.content).length);
  expect(JSON.stringify(reqs[1]!.body.tools), story).toBe(JSON.stringify(reqs[0]!.body.tools));
}

describe("Claude Code straight to the fake (control, no gateway)", () => {
  test(
    "tool round trip",
    async () => {
      const fake = await startFakeUpstream({ strict: CLI_STRICT });
      try {
        fake.handle(toolRoundTrip({ lane: "direct", toolName: "Bash", args: { command: TOOL_COMMAND, description: "Print a marker" } }));
        const r = await runClaude(suite.bins[0], {
          baseUrl: fake.url,
          model: "claude-e2e",
          prompt: `Run \`${TOOL_COMMAND}\` with the Bash tool and tell me what it printed.`,
          allowedTools: ["Bash"],
          trap: suite.trap,
        });
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
  describe(`Claude Code → switchyard → ${lane.name}`, () => {
    test(
      "plain answer",
      conformance(CLAUDE_CODE, lane.name, "plain answer", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        const text = `Plain answer over ${lane.name}.`;
        suite.gw.fake.handle(plainAnswer(text));
        const r = await runClaude(suite.bins[0], { baseUrl: suite.gw.url, model: lane.model, prompt: "say hi", trap: suite.trap });
        expectSuccess(r, suite.gw.fake, text);
        await expectLane(suite.gw, lane, r, logStart);
      }),
      CLI_TEST_TIMEOUT_MS,
    );

    test(
      "tool round trip (Bash)",
      conformance(CLAUDE_CODE, lane.name, "tool round trip", async () => {
        suite.gw.fake.reset();
        const logStart = suite.gw.logs.length;
        suite.gw.fake.handle(toolRoundTrip({ lane: lane.name, toolName: "Bash", args: { command: TOOL_COMMAND, description: "Print a marker" } }));
        const r = await runClaude(suite.bins[0], {
          baseUrl: suite.gw.url,
          model: lane.model,
          prompt: `Run \`${TOOL_COMMAND}\` with the Bash tool and tell me what it printed.`,
          allowedTools: ["Bash"],
          trap: suite.trap,
        });
        expectSuccess(r, suite.gw.fake, finalTextFor(lane.name));
        await expectLane(suite.gw, lane, r, logStart);
        expectToolRoundTrip(suite.gw.fake, r);
        if (lane.upstreamModel === "gpt-4.1") expectMovedDescriptions(suite.gw.fake, r);
      }),
      CLI_TEST_TIMEOUT_MS,
    );
  });
}

describe("Claude Code client variants through switchyard", () => {
  test(
    "base URL ending in /v1 (Claude Code then posts /v1/v1/messages) with ANTHROPIC_AUTH_TOKEN as Bearer",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(toolRoundTrip({ lane: "v1 prefix", toolName: "Bash", args: { command: TOOL_COMMAND, description: "Print a marker" } }));
      const r = await runClaude(suite.bins[0], {
        baseUrl: `${suite.gw.url}/v1`,
        auth: "token",
        model: "anth/claude-e2e",
        prompt: `Run \`${TOOL_COMMAND}\` with the Bash tool and tell me what it printed.`,
        allowedTools: ["Bash"],
        trap: suite.trap,
      });
      expectSuccess(r, suite.gw.fake, finalTextFor("v1 prefix"));
      expectToolRoundTrip(suite.gw.fake, r);
      for (const q of modelRequests(suite.gw.fake)) {
        expect(q.path, r.describe(summarizeRequests(suite.gw.fake))).toBe("/v1/messages");
        expect(credentialOf(q)).toBe("sk-fake-upstream-secret");
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    "a model alias without a provider prefix (e2e-alias → chat/glm-e2e)",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(plainAnswer("Answer through an alias."));
      const r = await runClaude(suite.bins[0], { baseUrl: suite.gw.url, model: "e2e-alias", prompt: "say hi", trap: suite.trap });
      expectSuccess(r, suite.gw.fake, "Answer through an alias.");
      const reqs = modelRequests(suite.gw.fake);
      expect(reqs.length, r.describe(summarizeRequests(suite.gw.fake))).toBeGreaterThanOrEqual(1);
      for (const q of reqs) {
        expect(q.path, r.describe(summarizeRequests(suite.gw.fake))).toBe("/v1/chat/completions");
        expect(q.model).toBe("glm-e2e");
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    "Claude Code's own model name (claude-sonnet-4-5: thinking on, its full beta list) aliased to gemini, tool round trip",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(toolRoundTrip({ lane: "sonnet alias", toolName: "Bash", args: { command: TOOL_COMMAND, description: "Print a marker" } }));
      const r = await runClaude(suite.bins[0], {
        baseUrl: suite.gw.url,
        model: "claude-sonnet-4-5",
        prompt: `Run \`${TOOL_COMMAND}\` with the Bash tool and tell me what it printed.`,
        allowedTools: ["Bash"],
        trap: suite.trap,
      });
      expectSuccess(r, suite.gw.fake, finalTextFor("sonnet alias"));
      expectToolRoundTrip(suite.gw.fake, r);
      for (const q of modelRequests(suite.gw.fake)) {
        expect(q.format, r.describe(summarizeRequests(suite.gw.fake))).toBe("gemini");
        expect(q.model).toBe("gemini-e2e");
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("Claude Code: a reply cut off after the commit point", () => {
  test(
    "the CLI reports an error, never the cut-off text as its answer",
    conformance(CLAUDE_CODE, "anthropic (native)", "error after commit", async () => {
      // A gateway of its own: the failed attempts put its account on a cooldown.
      const egw = await startGateway(YAML, { fakeOptions: { strict: CLI_STRICT } });
      try {
        egw.fake.handle(cutOffAnthropicReply("Partial answer"));
        const r = await runClaude(suite.bins[0], { baseUrl: egw.url, model: "anth/claude-e2e", prompt: "say hi", trap: suite.trap });
        const story = r.describe(`--- upstream requests ---\n${summarizeRequests(egw.fake)}`);
        expect(r.run.code, story).not.toBe(0);
        expect(r.json?.is_error, story).toBe(true);
        expect(r.result, story).not.toBe("Partial answer");
        expect(r.outside, story).toEqual([]);
        // The streamed attempt was committed and ended in the in-band error (SPEC 6.4).
        const logged = gatewayRequestLogs(egw.logs);
        expect(logged.some((l) => l.outcome === "upstream_error" && l.status === 200), story).toBe(true);
      } finally {
        await egw.stop();
      }
    }),
    CLI_TEST_TIMEOUT_MS,
  );
});
