/**
 * The real CLIs against a switchyard that requires client keys (`require_api_key: true`, G-1/G-2): the
 * key a user puts where the CLI expects its vendor key (Claude Code: ANTHROPIC_API_KEY as x-api-key;
 * Codex: the provider's env_key, sent as Bearer) is a switchyard key. A valid key gets the answer and
 * the upstream sees the account's key, not the client's; a wrong key gets a 401 the CLI reports, and
 * nothing reaches the upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CLAUDE_CODE, CODEX, ensureCli, INSTALL_HOOK_TIMEOUT_MS } from "../../support/cli-install.ts";
import { startTrapProxy, type TrapProxy } from "../../support/cli-run.ts";
import { CLI_TEST_TIMEOUT_MS, credentialOf, modelRequests, plainAnswer, runClaude, runCodex, summarizeRequests } from "../../support/cli-agents.ts";
import { startGateway, type TestGateway } from "../../support/gateway.ts";

const CLIENT_KEY = "sy-e2e-client-key-3f9a1c";

const YAML = `
server:
  require_api_key: true
providers:
  - id: anth
    kind: anthropic
    base_url: "{{FAKE}}"
  - id: resp
    kind: openai-responses
    base_url: "{{FAKE}}/v1"
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
keys:
  - name: e2e-laptop
    key: env:SY_E2E_CLIENT_KEY
`;

let claudeBin = "";
let codexBin = "";
let gw: TestGateway;
let trap: TrapProxy;

beforeAll(async () => {
  trap = startTrapProxy();
  claudeBin = await ensureCli(CLAUDE_CODE);
  codexBin = await ensureCli(CODEX);
  gw = await startGateway(YAML, { env: { SY_E2E_CLIENT_KEY: CLIENT_KEY } });
}, 2 * INSTALL_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await gw?.stop();
  trap?.stop();
});

describe("Claude Code with a switchyard client key", () => {
  test(
    "valid key in ANTHROPIC_API_KEY: answered; the upstream gets the account's key",
    async () => {
      gw.fake.reset();
      gw.fake.handle(plainAnswer("Keyed answer for Claude Code."));
      const r = await runClaude(claudeBin, { baseUrl: gw.url, model: "anth/claude-e2e", prompt: "say hi", trap, key: CLIENT_KEY });
      const story = r.describe(summarizeRequests(gw.fake));
      expect(r.run.code, story).toBe(0);
      expect(r.result, story).toContain("Keyed answer for Claude Code.");
      const reqs = modelRequests(gw.fake);
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
      gw.fake.reset();
      const r = await runClaude(claudeBin, { baseUrl: gw.url, model: "anth/claude-e2e", prompt: "say hi", trap, key: "sy-wrong-key" });
      const story = r.describe(summarizeRequests(gw.fake));
      expect(r.run.code, story).not.toBe(0);
      expect(r.run.timedOut, story).toBe(false);
      expect(`${r.result}\n${r.run.stdout}\n${r.run.stderr}`, story).toMatch(/\b401\b/);
      expect(modelRequests(gw.fake), story).toEqual([]);
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("Codex with a switchyard client key", () => {
  test(
    "valid key in the provider's env_key: answered; the upstream gets the account's key",
    async () => {
      gw.fake.reset();
      gw.fake.handle(plainAnswer("Keyed answer for Codex."));
      const r = await runCodex(codexBin, { baseUrlV1: `${gw.url}/v1`, model: "resp/gpt-e2e", prompt: "say hi", trap, key: CLIENT_KEY });
      const story = r.describe(summarizeRequests(gw.fake));
      expect(r.run.code, story).toBe(0);
      expect(r.run.stdout, story).toContain("Keyed answer for Codex.");
      const reqs = modelRequests(gw.fake);
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
      gw.fake.reset();
      const r = await runCodex(codexBin, { baseUrlV1: `${gw.url}/v1`, model: "resp/gpt-e2e", prompt: "say hi", trap, key: "sy-wrong-key" });
      const story = r.describe(summarizeRequests(gw.fake));
      expect(r.run.code, story).not.toBe(0);
      expect(r.run.timedOut, story).toBe(false);
      expect(`${r.run.stdout}\n${r.run.stderr}`, story).toMatch(/\b401\b/);
      expect(modelRequests(gw.fake), story).toEqual([]);
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
