/**
 * Gemini CLI's utility models after `switchyard setup gemini --model NAME` (newuser14 K1). Gemini CLI
 * 0.61.0 asks its own utility models whatever `-m` / `model.name` says: the session summary
 * (`summarizer-default`, model alias `flash-lite` → `gemini-3.1-flash-lite` / `gemini-3.5-flash-lite`),
 * the next-speaker check and loop detection (`gemini-3-flash-preview`), chat compression, … On a gateway
 * whose Gemini provider is not the built-in `gemini` one those bare ids got a 404 each, and Gemini CLI's
 * retry loop (a 404 asks its fallback handler, which resets the attempt count) sent 1,339 of them in 5 s.
 *
 * Here the real Gemini CLI runs in a scratch HOME that `switchyard setup gemini --model anthc/claude-e2e`
 * wrote (telemetry off added): two prompts in one session (`--resume latest` for the second: a session
 * with more than one user message is summarized), then `gemini --list-sessions`, which summarizes the
 * previous session with `summarizer-default`. Every request the gateway got must be for the model setup
 * named, none answered 404, and the summary request reached the provider.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync, mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { GEMINI_CLI } from "../../support/cli-install.ts";
import { baseEnv, CLI_RUN_TIMEOUT_MS, gatewayRequestLogs, geminiSettings, modelRequests, plainAnswer, summarizeRequests, waitFor } from "../../support/cli-agents.ts";
import { describeRun, runCli } from "../../support/cli-run.ts";
import { cliSuite } from "../../support/cli-suite.ts";
import { fakeProviders } from "../../support/configs.ts";

const MAIN = resolve(import.meta.dir, "../../../src/main.ts");
const MODEL = "anthc/claude-e2e";

// A Gemini-format provider that is not the built-in `gemini` one (bare gemini-… ids are guessed to
// provider `gemini`, which has no account here), and the Anthropic-format provider setup names.
const suite = cliSuite([GEMINI_CLI], `\n${fakeProviders([["gem", "gemini"], ["anthc", "anthropic-compatible"]])}`);

describe("Gemini CLI after switchyard setup gemini --model", () => {
  test(
    "a session, its resumption and --list-sessions (the session summary) ask only the model setup named: no 404",
    async () => {
      const home = mkdtempSync(join(tmpdir(), "sy-e2e-gemini-utility-"));
      const work = join(home, "work");
      mkdirSync(work);
      try {
        // async: the gateway answers setup's questions from this process
        const setup = await runCli(["bun", MAIN, "setup", "gemini", "--model", MODEL, "--data-dir", suite.gw.dataDir], {
          cwd: home,
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
          timeoutMs: CLI_RUN_TIMEOUT_MS,
        });
        expect(setup.code, describeRun(setup)).toBe(0);
        // telemetry, usage statistics, update checks and IDE integration off, as every CLI test runs
        const settingsPath = join(home, ".gemini", "settings.json");
        const { security: _auth, ...quiet } = geminiSettings();
        writeFileSync(settingsPath, JSON.stringify({ ...JSON.parse(readFileSync(settingsPath, "utf8")), ...quiet }, null, 2));

        suite.gw.fake.reset();
        suite.gw.fake.handle(plainAnswer("A plain answer."));
        const logStart = suite.gw.logs.length;
        const env = {
          ...baseEnv(home, suite.trap),
          GOOGLE_GEMINI_BASE_URL: suite.gw.url,
          GEMINI_API_KEY: "placeholder",
          GEMINI_CLI_NO_RELAUNCH: "true",
          GEMINI_CLI_TRUST_WORKSPACE: "true",
        };
        const gemini = (args: string[]) => runCli([suite.bins[0]!, ...args], { cwd: work, env, timeoutMs: CLI_RUN_TIMEOUT_MS });
        // Gemini CLI did not always keep the session of a `-p` run: once, in a fresh clone's full CI run,
        // `--list-sessions` answered "No previous sessions found for this project." (nothing to summarize;
        // alone the test passed 5 of 5). Then the three runs go again, at most three times; every request of
        // every run still counts below.
        const runs: Awaited<ReturnType<typeof gemini>>[] = [];
        for (let attempt = 1; attempt <= 3; attempt++) {
          runs.push(await gemini(["-p", "first question", "--output-format", "json", "--yolo"]));
          runs.push(await gemini(["-p", "second question", "--resume", "latest", "--output-format", "json", "--yolo"]));
          const listed = await gemini(["--list-sessions"]);
          runs.push(listed);
          if (!listed.stdout.includes("No previous sessions found")) break;
        }
        const story = () => `${runs.map((r) => describeRun(r)).join("\n")}\n--- upstream requests ---\n${summarizeRequests(suite.gw.fake)}`;
        for (const r of runs) expect(r.code, story()).toBe(0);
        await waitFor(() => gatewayRequestLogs(suite.gw.logs.slice(logStart)).length >= modelRequests(suite.gw.fake).length);
        const logs = gatewayRequestLogs(suite.gw.logs.slice(logStart));
        const asked = logs.map((l) => `${l.model} ${l.status}`);
        // Every request named the model setup wrote and was answered; none was a 404 for a gemini-… id.
        expect(asked.filter((a) => !a.startsWith(`${MODEL} `)), story()).toEqual([]);
        expect(logs.filter((l) => l.status !== 200).length, story()).toBe(0);
        // The session summary (summarizer-default) was one of them and reached the provider.
        const summaries = modelRequests(suite.gw.fake).filter((r) => r.raw.includes("Summarize the user"));
        expect(summaries.length, story()).toBeGreaterThanOrEqual(1);
        expect(summaries.every((r) => r.model === "claude-e2e"), story()).toBe(true);
        expect(runs.flatMap(() => suite.trap.attempts), story()).toEqual([]);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
    4 * CLI_RUN_TIMEOUT_MS,
  );
});
