/**
 * The real CLIs against a switchyard that requires client keys (`require_api_key: true`, G-1/G-2): the
 * key a user puts where the CLI expects its vendor key (Claude Code: ANTHROPIC_API_KEY as x-api-key;
 * Codex: the provider's env_key, sent as Bearer) is a switchyard key. A valid key gets the answer and
 * the upstream sees the account's key, not the client's; a wrong key gets a 401 the CLI reports, and
 * nothing reaches the upstream.
 */
import { describe, expect, test } from "bun:test";
import { CLAUDE_CODE, CODEX } from "../../support/cli-install.ts";
import { CLI_TEST_TIMEOUT_MS, credentialOf, modelRequests, plainAnswer, runClaude, runCodex, summarizeRequests } from "../../support/cli-agents.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";

const CLIENT_KEY = "sy-e2e-client-key-3f9a1c";

const YAML = `
server:
  require_api_key: true
${fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]])}keys:
  - name: e2e-laptop
    key: env:SY_E2E_CLIENT_KEY
`;

const suite = cliSuite([CLAUDE_CODE, CODEX], YAML, { env: { SY_E2E_CLIENT_KEY: CLIENT_KEY } });

describe("Claude Code with a switchyard client key", () => {
  test(
    "valid key in ANTHROPIC_API_KEY: answered; the upstream gets the account's key",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(plainAnswer("Keyed answer for Claude Code."));
      const r = await runClaude(suite.bins[0], { baseUrl: suite.gw.url, model: "anth/claude-e2e", prompt: "say hi", trap: suite.trap, key: CLIENT_KEY });
      const story = r.describe(summarizeRequests(suite.gw.fake));
      expect(r.run.code, story).toBe(0);
      expect(r.result, story).toContain("Keyed answer for Claude Code.");
      const reqs = modelRequests(suite.gw.fake);
      expect(reqs.length, story).toBeGreaterThanOrEqual(1);
      for (const q of reqs) {
        expect(credentialOf(q), story).toBe("sk-fake-upstream-secret");
        expect(JSON.stringify(q.headers), story).not.toContain(CLIENT_KEY);
      }
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    "wrong key: Claude Code fails and shows the 401; nothing goes upstream",
    async () => {
      suite.gw.fake.reset();
      const r = await runClaude(suite.bins[0], { baseUrl: suite.gw.url, model: "anth/claude-e2e", prompt: "say hi", trap: suite.trap, key: "sy-wrong-key" });
      const story = r.describe(summarizeRequests(suite.gw.fake));
      expect(r.run.code, story).not.toBe(0);
      expect(r.run.timedOut, story).toBe(false);
      expect(`${r.result}\n${r.run.stdout}\n${r.run.stderr}`, story).toMatch(/\b401\b/);
      expect(modelRequests(suite.gw.fake), story).toEqual([]);
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("Codex with a switchyard client key", () => {
  test(
    "valid key in the provider's env_key: answered; the upstream gets the account's key",
    async () => {
      suite.gw.fake.reset();
      suite.gw.fake.handle(plainAnswer("Keyed answer for Codex."));
      const r = await runCodex(suite.bins[1], { baseUrlV1: `${suite.gw.url}/v1`, model: "resp/gpt-e2e", prompt: "say hi", trap: suite.trap, key: CLIENT_KEY });
      const story = r.describe(summarizeRequests(suite.gw.fake));
      expect(r.run.code, story).toBe(0);
      expect(r.run.stdout, story).toContain("Keyed answer for Codex.");
      const reqs = modelRequests(suite.gw.fake);
      expect(reqs.length, story).toBeGreaterThanOrEqual(1);
      for (const q of reqs) {
        expect(credentialOf(q), story).toBe("sk-fake-upstream-secret");
        expect(JSON.stringify(q.headers), story).not.toContain(CLIENT_KEY);
      }
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    "wrong key: Codex fails and shows the 401; nothing goes upstream",
    async () => {
      suite.gw.fake.reset();
      const r = await runCodex(suite.bins[1], { baseUrlV1: `${suite.gw.url}/v1`, model: "resp/gpt-e2e", prompt: "say hi", trap: suite.trap, key: "sy-wrong-key" });
      const story = r.describe(summarizeRequests(suite.gw.fake));
      expect(r.run.code, story).not.toBe(0);
      expect(r.run.timedOut, story).toBe(false);
      expect(`${r.run.stdout}\n${r.run.stderr}`, story).toMatch(/\b401\b/);
      expect(modelRequests(suite.gw.fake), story).toEqual([]);
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
