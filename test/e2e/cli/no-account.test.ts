/**
 * A model whose provider has no account (the README's own `anthropic/claude-…` on a gateway without an
 * Anthropic account) can only be served after an operator adds one. The gateway's 503 says
 * `x-should-retry: false` and a Gemini client gets Google's 400 `FAILED_PRECONDITION` (SPEC 6.3 error
 * mapping; pipeline/unserved-errors.ts); before, a new user's tryout saw Claude Code retry in silence for
 * 182 s and Gemini CLI for 218 s before the message. Here both real CLIs, with their own retry policy
 * (Claude Code without CLAUDE_CODE_MAX_RETRIES), must exit non-zero within seconds, print the gateway's
 * "No account is configured for provider anthropic", and the gateway must have seen at most 2 requests
 * from each. The run's timeout is 60 s, so a regression fails instead of hanging for minutes.
 */
import { expect, test } from "bun:test";
import { CLAUDE_CODE, GEMINI_CLI } from "../../support/cli-install.ts";
import { gatewayRequestLogs, runClaude, runGemini, summarizeRequests, waitFor } from "../../support/cli-agents.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";

// A gateway with an account for a Gemini-format provider only: the built-in `anthropic` has none.
const YAML = `
${fakeProviders([["gem", "gemini"]])}`;
const MODEL = "anthropic/claude-sonnet-5-5";
const MESSAGE = "No account is configured for provider anthropic";
/** What a run may take: the CLI's start-up and one or two answered requests, no back-off. */
const QUICK_MS = 20_000;
const RUN_MS = 60_000;

const suite = cliSuite([CLAUDE_CODE, GEMINI_CLI], YAML);

/** The gateway's request log lines since `start`, once they stop growing for a moment. */
async function loggedSince(start: number): Promise<Array<Record<string, any>>> {
  let n = -1;
  await waitFor(() => {
    const now = gatewayRequestLogs(suite.gw.logs.slice(start)).length;
    const settled = now === n && now > 0;
    n = now;
    return settled;
  }, 1500);
  return gatewayRequestLogs(suite.gw.logs.slice(start));
}

test(
  `Claude Code (its own retries) on ${MODEL} without an account: exits at once with the gateway's message`,
  async () => {
    const logStart = suite.gw.logs.length;
    const r = await runClaude(suite.bins[0]!, { baseUrl: suite.gw.url, model: MODEL, prompt: "hi", trap: suite.trap, ownRetries: true, timeoutMs: RUN_MS });
    const logged = await loggedSince(logStart);
    const story = r.describe(`--- gateway log ---\n${suite.gw.logs.slice(logStart).join("\n")}\n--- upstream ---\n${summarizeRequests(suite.gw.fake)}`);
    expect(r.run.timedOut, story).toBe(false);
    expect(r.run.code, story).not.toBe(0);
    expect(r.run.ms, story).toBeLessThan(QUICK_MS);
    expect(`${r.run.stdout}\n${r.run.stderr}`, story).toContain(MESSAGE);
    expect(logged.length, story).toBeGreaterThanOrEqual(1);
    expect(logged.length, story).toBeLessThanOrEqual(2);
    for (const l of logged) expect({ model: l.model, status: l.status, code: l.code }, story).toEqual({ model: MODEL, status: 503, code: "no_account" });
    expect(suite.gw.fake.requests, story).toEqual([]);
    expect(r.outside, story).toEqual([]);
  },
  RUN_MS + 15_000,
);

test(
  `Gemini CLI on ${MODEL} without an account: exits at once with the gateway's message`,
  async () => {
    const logStart = suite.gw.logs.length;
    const r = await runGemini(suite.bins[1]!, { baseUrl: suite.gw.url, model: MODEL, prompt: "hi", trap: suite.trap, timeoutMs: RUN_MS });
    const logged = await loggedSince(logStart);
    const story = r.describe(`--- gateway log ---\n${suite.gw.logs.slice(logStart).join("\n")}\n--- upstream ---\n${summarizeRequests(suite.gw.fake)}`);
    expect(r.run.timedOut, story).toBe(false);
    expect(r.run.code, story).not.toBe(0);
    expect(r.run.ms, story).toBeLessThan(QUICK_MS);
    expect(`${r.run.stdout}\n${r.run.stderr}`, story).toContain(MESSAGE);
    expect(logged.length, story).toBeGreaterThanOrEqual(1);
    expect(logged.length, story).toBeLessThanOrEqual(2);
    // The log line says what the Gemini client got: the 400 of FAILED_PRECONDITION, code no_account.
    for (const l of logged) expect({ model: l.model, status: l.status, code: l.code }, story).toEqual({ model: MODEL, status: 400, code: "no_account" });
    expect(suite.gw.fake.requests, story).toEqual([]);
    expect(r.outside, story).toEqual([]);
  },
  RUN_MS + 15_000,
);
