/**
 * A client key whose budget is used up (SPEC 9.6, 2.4: 429 naming the budget and when its window
 * resets), as the real CLIs show it to their user. Claude Code prints the gateway's message. Codex
 * prints no 429's message: any 429 but the Codex backend's `usage_limit_reached` becomes its own
 * "exceeded retry limit, last status: 429 Too Many Requests", and over its WebSocket it first waits out
 * the `retry-after` the error frame carries (a day, for a 1d budget: the run hung until its timeout).
 * The gateway's budget refusal in the Responses format is that error (formats/openai-responses/errors.ts),
 * so Codex says "You've hit your usage limit. Try again at <the reset, local time>." at once, over HTTP
 * and over the WebSocket. Nothing reaches the upstream in either.
 */
import { describe, expect, test } from "bun:test";
import { CLAUDE_CODE, CODEX } from "../../support/cli-install.ts";
import { CLI_TEST_TIMEOUT_MS, modelRequests, plainAnswer, runClaude, runCodex, summarizeRequests } from "../../support/cli-agents.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";

const KEY = "sy-e2e-over-budget-key-77a1";
const YAML = `
server:
  require_api_key: true
${fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]])}keys:
  - { name: spent, key: ${KEY}, limits: { budgets: [{ window: 1d, tokens: 20 }] } }
`;
const suite = cliSuite([CLAUDE_CODE, CODEX], YAML);

/** Spends the key's budget (18 tokens a reply, 20 allowed) until the gateway refuses it; returns the refusal's body. */
async function spendBudget(): Promise<any> {
  suite.gw.fake.handle(plainAnswer("spent"));
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "resp/gpt-e2e", input: "hi" }) });
    const body = await res.json();
    if (res.status === 429) return body;
  }
  throw new Error("the budget was never refused");
}

/** The reset Codex names, "Dec 6th, 2026 4:52 AM" or "4:52 AM" (its local clock, which is this process's). */
function codexTime(resetsAtSeconds: number): RegExp {
  const d = new Date(resetsAtSeconds * 1000);
  const hour = d.getHours() % 12 || 12;
  const hm = `${hour}:${String(d.getMinutes()).padStart(2, "0")} ${d.getHours() < 12 ? "AM" : "PM"}`;
  return new RegExp(`You.ve hit your usage limit\\. Try again at (\\w+ \\d+\\w\\w, \\d{4} )?${hm}\\.`);
}

describe("a client key over its budget, as the CLIs show it", () => {
  let refusal: any;

  test("the refusal in the Responses format: 429 usage_limit_reached with the reset, the gateway's message and code", async () => {
    refusal = await spendBudget();
    expect(refusal.error).toMatchObject({ type: "usage_limit_reached", code: "key_budget_exceeded" });
    expect(refusal.error.message).toMatch(/^Client key "spent" has used its 1d budget of 20 tokens \(\d+ tokens used\); the window resets in \S+ \S+ \(at (\S+Z)\)\.$/);
    const at = refusal.error.message.match(/\(at (\S+Z)\)/)[1];
    expect(refusal.error.resets_at).toBe(Date.parse(at) / 1000);
  });

  for (const websockets of [false, true]) {
    test(
      `Codex (${websockets ? "Responses WebSocket" : "HTTP"}): "You've hit your usage limit. Try again at" the reset, at once; nothing goes upstream`,
      async () => {
        refusal ??= await spendBudget();
        suite.gw.fake.reset();
        const r = await runCodex(suite.bins[1], { baseUrlV1: `${suite.gw.url}/v1`, model: "resp/gpt-e2e", prompt: "say hi", trap: suite.trap, key: KEY, websockets });
        const story = r.describe(summarizeRequests(suite.gw.fake));
        expect(r.run.timedOut, story).toBe(false);
        expect(r.run.code, story).not.toBe(0);
        expect(r.run.stderr, story).toMatch(codexTime(refusal.error.resets_at));
        expect(r.run.stderr, story).not.toContain("exceeded retry limit");
        expect(modelRequests(suite.gw.fake), story).toEqual([]);
        expect(r.outside, story).toEqual([]);
      },
      CLI_TEST_TIMEOUT_MS,
    );
  }

  test(
    "Claude Code: the gateway's message, naming the budget and when its window resets",
    async () => {
      refusal ??= await spendBudget();
      suite.gw.fake.reset();
      const r = await runClaude(suite.bins[0], { baseUrl: suite.gw.url, model: "anth/claude-e2e", prompt: "say hi", trap: suite.trap, key: KEY });
      const story = r.describe(summarizeRequests(suite.gw.fake));
      expect(r.run.code, story).not.toBe(0);
      expect(r.result, story).toMatch(/429.*Client key "spent" has used its 1d budget of 20 tokens \(\d+ tokens used\); the window resets in \S+ \S+ \(at \S+Z\)\./);
      expect(modelRequests(suite.gw.fake), story).toEqual([]);
      expect(r.outside, story).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
