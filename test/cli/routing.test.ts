/**
 * `switchyard accounts status` as printed (src/cli/routing.ts formatAccountsStatus): the account
 * line a user reads, with the success rate as a percentage (the admin API's `successRate` is a
 * fraction with as many digits as a float has).
 */
import { describe, expect, test } from "bun:test";
import type { AccountsStatus, AccountStatus } from "../../src/accounts/status.ts";
import { ACCOUNTS_STATUS_LEGEND, formatAccountsStatus, formatRoutePlan } from "../../src/cli/routing.ts";

function account(id: string, successRate: number, latencyMs?: number, succeeded = 1, failed = 0): AccountStatus {
  return {
    id,
    providerId: "oai",
    providerKind: "openai",
    source: "config",
    credential: "api_key",
    priority: 1,
    disabled: false,
    eligible: true,
    reasons: [],
    cooldowns: [],
    removedModels: [],
    quota: [],
    slots: { inUse: 0, limit: 4, waiting: 0 },
    bindings: 2,
    health: { successRate, succeeded, failed, ...(latencyMs !== undefined ? { latencyMs } : {}), halfLifeMs: 300_000, seen: true },
    circuit: { state: "closed", consecutive5xx: 0 },
    models: [],
  } as AccountStatus;
}

describe("accounts status", () => {
  test("the success rate is a whole percentage with the attempts it counts (a weighted share: 5 of 7 may read 60 %)", () => {
    const s = { now: 0, strategy: "scored", accounts: [account("fresh", 1, 12), account("flaky", 0.6, undefined, 5, 2)] } as AccountsStatus;
    const lines = formatAccountsStatus(s).split("\n");
    expect(lines).toContain("fresh (oai, openai; api_key; priority 1): eligible; slots 0/4; success 100 % (1 of 1 attempt), latency 12 ms; bindings 2");
    expect(lines).toContain("flaky (oai, openai; api_key; priority 1): eligible; slots 0/4; success 60 % (5 of 7 attempts); bindings 2");
    // whose figures they are: with several instances on one store, this instance's (newuser12a, G9)
    expect(lines.at(-1)).toBe(ACCOUNTS_STATUS_LEGEND);
    expect(ACCOUNTS_STATUS_LEGEND).toContain("success and latency are this instance's own requests since it started");
    expect(ACCOUNTS_STATUS_LEGEND).toContain("recent ones weighing most");
    expect(ACCOUNTS_STATUS_LEGEND).toContain("it does not change while an account is idle");
    expect(ACCOUNTS_STATUS_LEGEND).toContain("cooldowns, locks, quarantines and circuits are every instance's on a shared store");
  });

  test("an account with no request yet has no success rate to show (its 1 is no measure, as the dashboard's '–' says), not 100 %", () => {
    const unseen = { ...account("new", 1), health: { successRate: 1, succeeded: 0, failed: 0, halfLifeMs: 300_000, seen: false } } as AccountStatus;
    const lines = formatAccountsStatus({ now: 0, strategy: "scored", accounts: [unseen] } as AccountsStatus).split("\n");
    expect(lines).toContain("new (oai, openai; api_key; priority 1): eligible; slots 0/4; success – (no request yet); bindings 2");
  });

  test("an older running instance's health without succeeded/failed: the rate without the count, not \"(undefined of NaN attempts)\"", () => {
    const older = { ...account("old", 0.5), health: { successRate: 0.5, halfLifeMs: 300_000, seen: true } } as unknown as AccountStatus;
    const lines = formatAccountsStatus({ now: 0, strategy: "scored", accounts: [older] } as AccountsStatus).split("\n");
    expect(lines).toContain("old (oai, openai; api_key; priority 1): eligible; slots 0/4; success 50 %; bindings 2");
  });

  test("a cooldown names the model it is for; the account stays eligible for its other models (SPEC 6.2 loop 2)", () => {
    const until = Date.parse("2026-12-04T14:00:30Z");
    const a = {
      ...account("b1", 1),
      cooldowns: [{ model: "claude-x", reason: "upstream 503", until, level: 0 }],
      models: [
        { model: "claude-other", eligible: true },
        { model: "claude-x", eligible: false, reason: "cooling down (upstream 503) until 2026-12-04T14:00:30.000Z", until },
      ],
    } as AccountStatus;
    const lines = formatAccountsStatus({ now: until - 30_000, strategy: "scored", accounts: [a] } as AccountsStatus).split("\n");
    expect(lines).toContain("b1 (oai, openai; api_key; priority 1): eligible; slots 0/4; success 100 % (1 of 1 attempt); bindings 2");
    expect(lines).toContain("  cooldown claude-x: upstream 503 until 2026-12-04T14:00:30.000Z");
    expect(lines).toContain("  model claude-other: eligible");
    expect(lines).toContain("  model claude-x: out: cooling down (upstream 503) until 2026-12-04T14:00:30.000Z");
    const whole = { ...a, cooldowns: [{ model: "*", reason: "credential refresh failed temporarily (network)", until, level: 0 }] } as AccountStatus;
    expect(formatAccountsStatus({ now: 0, strategy: "scored", accounts: [whole] } as AccountsStatus).split("\n")).toContain(
      "  cooldown (every model): credential refresh failed temporarily (network) until 2026-12-04T14:00:30.000Z",
    );
  });

  test("a circuit reads open 'until' its end, and half-open 'since' then, when the next request probes it (newuser13 J4: 'half-open until' a past time)", () => {
    const end = Date.parse("2026-12-05T08:15:16.461Z");
    const open = { ...account("o1", 0.5, undefined, 1, 1), circuit: { state: "open", openUntil: end, consecutive5xx: 10 } } as AccountStatus;
    const half = { ...account("h1", 0.5, undefined, 1, 1), circuit: { state: "half-open", openUntil: end, consecutive5xx: 10 } } as AccountStatus;
    const lines = formatAccountsStatus({ now: end + 120_000, strategy: "scored", accounts: [open, half] } as AccountsStatus).split("\n");
    expect(lines).toContain("o1 (oai, openai; api_key; priority 1): eligible; slots 0/4; success 50 % (1 of 2 attempts); bindings 2; circuit open until 2026-12-05T08:15:16.461Z");
    expect(lines).toContain("h1 (oai, openai; api_key; priority 1): eligible; slots 0/4; success 50 % (1 of 2 attempts); bindings 2; circuit half-open since 2026-12-05T08:15:16.461Z: the next request to the provider probes it");
  });

  test("models out for the account's own reason (its provider's circuit) are one line, the reason said once", () => {
    const until = Date.parse("2026-12-05T02:00:00Z");
    const why = "provider oai circuit open (consecutive upstream 5xx) until 2026-12-05T02:00:00.000Z";
    const a = {
      ...account("c1", 1),
      eligible: false,
      reasons: [why],
      circuit: { state: "open", openUntil: until, consecutive5xx: 10 },
      models: [
        { model: "gpt-a", eligible: false, reason: why, until },
        { model: "gpt-b", eligible: false, reason: why, until },
        { model: "gpt-c", eligible: false, reason: "cooling down (upstream 429) until 2026-12-05T01:59:00.000Z", until: until - 60_000 },
      ],
    } as AccountStatus;
    expect(formatAccountsStatus({ now: until - 60_000, strategy: "scored", accounts: [a] } as AccountsStatus).split("\n").slice(2)).toEqual([
      "c1 (oai, openai; api_key; priority 1): NOT eligible; slots 0/4; success 100 % (1 of 1 attempt); bindings 2; circuit open until 2026-12-05T02:00:00.000Z",
      `  - ${why}`,
      "  models gpt-a, gpt-b: out for the account's reason above",
      "  model gpt-c: out: cooling down (upstream 429) until 2026-12-05T01:59:00.000Z",
      "",
      ACCOUNTS_STATUS_LEGEND,
    ]);
  });

  test("without accounts it says how to add one", () => {
    expect(formatAccountsStatus({ now: 0, strategy: "scored", accounts: [] } as unknown as AccountsStatus).split("\n")).toEqual([
      "account strategy: scored; 0 account(s)",
      "no accounts yet: add API keys under accounts: in the config file, log in with switchyard login claude-code|codex, or adopt a CLI's login with switchyard import claude-code|codex",
    ]);
  });

  test("a provider configured without an account is named with the 503 its requests get (dash16's tryout: it was on no page)", () => {
    const error = "No account is configured for provider gemini: add an account under `accounts:` in the config file (`provider: gemini` with its `api_key`).";
    const s = { now: 0, strategy: "scored", accounts: [], providersWithoutAccounts: [{ id: "gemini", kind: "gemini", error }] } as unknown as AccountsStatus;
    expect(formatAccountsStatus(s).split("\n").slice(2)).toEqual(["", `provider gemini (gemini): no account, so its requests get 503 no_account: ${error}`]);
  });

  test("a built-in provider without an account is named with what sends to it: the routes naming it, the requests refused (review17 R5)", () => {
    const error = "No account is configured for provider gemini: add an account under `accounts:` in the config file (`provider: gemini` with its `api_key`), or set GEMINI_API_KEY before starting switchyard without a config file.";
    const at = Date.UTC(2026, 11, 5, 22, 40);
    const s = {
      now: 0,
      strategy: "scored",
      accounts: [],
      providersWithoutAccounts: [
        { id: "gemini", kind: "gemini", error, builtin: { routes: ["alias fast"], requests: 3, lastAt: at, lastStatus: 404 } },
        { id: "openai", kind: "openai", error: "E", builtin: { routes: [], requests: 1, lastAt: at, lastStatus: 503 } },
        { id: "cx", kind: "codex", error: "F", builtin: { routes: ["combo coding"], requests: 0 } },
      ],
    } as unknown as AccountsStatus;
    expect(formatAccountsStatus(s).split("\n").slice(2)).toEqual([
      "",
      `provider gemini (gemini): no account, so its requests get 503 no_account: ${error}`,
      "  built-in provider named by alias fast; 3 requests refused for want of its account since this instance started, the last at 2026-12-05T22:40:00.000Z (404: a bare model name taken for this provider's)",
      "",
      "provider openai (openai): no account, so its requests get 503 no_account: E",
      "  built-in provider; 1 request refused for want of its account since this instance started, the last at 2026-12-05T22:40:00.000Z (503)",
      "",
      "provider cx (codex): no account, so its requests get 503 no_account: F",
      "  built-in provider named by combo coding",
    ]);
  });
});

describe("route (dry run) as printed", () => {
  test("a target pinned to an account names the account once in the attempt order (newuser13 J13: `chat/qwen-fake @ chat-main @ chat-main`)", () => {
    const plan = {
      requestedModel: "pinned",
      clientFormat: "openai-chat",
      via: "combo",
      combo: "pinned",
      affinity: "none",
      accountStrategy: "scored",
      candidates: ["chat/qwen-fake @ chat-main", "gem/gemini-fake"],
      decisions: [],
      targets: [
        { target: "chat/qwen-fake @ chat-main", verdict: "in", accounts: [{ accountId: "chat-main", verdict: "in", reason: "pinned by the combo" }] },
        { target: "gem/gemini-fake", verdict: "in", accounts: [{ accountId: "gem-1", verdict: "in", reason: "first eligible account" }] },
      ],
      attempts: [
        { target: "chat/qwen-fake", accountId: "chat-main" },
        { target: "gem/gemini-fake", accountId: "gem-1" },
      ],
    } as unknown as Parameters<typeof formatRoutePlan>[0];
    expect(formatRoutePlan(plan).split("\n").at(-1)).toBe("attempt order: chat/qwen-fake @ chat-main → gem/gemini-fake @ gem-1");
  });

  test("attempts past settings.max_attempts are not in the attempt order: a line says they are not reached and why", () => {
    const beyond = "not reached: a request makes at most 1 attempt (settings.max_attempts)";
    const plan = {
      requestedModel: "duo",
      clientFormat: "openai-chat",
      via: "combo",
      combo: "duo",
      affinity: "none",
      candidates: ["chat/qwen-fake", "gem/gemini-fake"],
      decisions: [],
      targets: [],
      attempts: [
        { target: "chat/qwen-fake", accountId: "chat-main" },
        { target: "gem/gemini-fake", accountId: "gem-1", notReached: beyond },
        { target: "gem/gemini-fake", accountId: "gem-2", notReached: beyond },
      ],
    } as unknown as Parameters<typeof formatRoutePlan>[0];
    expect(formatRoutePlan(plan).split("\n").slice(-2)).toEqual(["attempt order: chat/qwen-fake @ chat-main", `${beyond}: gem/gemini-fake @ gem-1, gem/gemini-fake @ gem-2`]);
  });

  test("attempts a non-streamed call that never answers would leave out stay in the attempt order: a line says when they are not reached", () => {
    const ifHang = "not reached if chat/qwen-fake @ chat-main never answers: a non-streamed call waits reply_timeout_ms (600000 ms), not less than the pre-commit deadline (60000 ms, settings.precommit_deadline_ms)";
    const plan = {
      requestedModel: "duo",
      clientFormat: "openai-chat",
      via: "combo",
      combo: "duo",
      affinity: "none",
      candidates: ["chat/qwen-fake", "gem/gemini-fake"],
      decisions: [],
      targets: [],
      attempts: [
        { target: "chat/qwen-fake", accountId: "chat-main" },
        { target: "gem/gemini-fake", accountId: "gem-1", notReachedIf: ifHang },
      ],
    } as unknown as Parameters<typeof formatRoutePlan>[0];
    expect(formatRoutePlan(plan).split("\n").slice(-2)).toEqual(["attempt order: chat/qwen-fake @ chat-main → gem/gemini-fake @ gem-1", `${ifHang}: gem/gemini-fake @ gem-1`]);
  });
});
