/**
 * Alerts from two instances on one PostgreSQL (SPEC 9.7 with D-2: several instances "behave as one
 * gateway"): two real `switchyard start --database postgres://…` processes (A and B) post to one local
 * webhook receiver.
 * - A key budget used through both: each threshold the pair's use crosses shows on both instances'
 *   `/admin/api/events` (B learns A's use within about a second, and the other way round), and the
 *   receiver gets it once. Before, each instance compared only its own settled requests plus the
 *   others' use as last reported, so a threshold could be raised twice or never (a 100-token budget used
 *   to 108 raised 0.5 once and 0.9 never). Since 2026-12-07 one step past several thresholds raises
 *   the highest with the others as `passed`: an instance may see a crossing as passed by a higher one,
 *   so the test asks that every share is said once at the receiver, as its own alert or in another's
 *   `passed` (each instance claims the passed shares too, src/alerts/alert-claim.ts; until 2026-12-07,
 *   later, a share could come twice: as one instance's alert and in the other's `passed`).
 * - An account's quota window read from one instance's reply headers reaches both through the database;
 *   both raise the crossing, the receiver gets it once (it got it once per instance).
 * How "no second delivery" is known without a fixed wait: each instance delivers its alerts in order,
 * so after both have shown the crossings on their event streams, an account lock raised on each (a 402)
 * is a marker: once both markers have arrived, everything before them was delivered or claimed elsewhere.
 * - Each lock is raised on the other instance too once it learns it from the database (newuser12a G7:
 *   only the instance that saw the 402 raised it), with the same reason and advice: the receiver gets
 *   each lock once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTwoInstancesOnPostgres, type TwoInstancesOnPostgres } from "../support/two-instances-on-postgres.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import type { Instance } from "../support/instance.ts";
import type { WebhookReceiver } from "../support/webhook-receiver.ts";
import { openEvents, type EventStreamReader } from "../support/admin-events.ts";
import { until } from "../support/until.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ENV = { UP_KEY: "sk-upstream-account-secret", CLIENT: "sy-budget-client-key-0000000001", PLAIN: "sy-plain-client-key-00000000002" };

let a: Instance;
let b: Instance;
let hook: WebhookReceiver;
let started: TwoInstancesOnPostgres | undefined;

/** A Chat request through `inst`, with the budgeted key (`team`) unless `key` says otherwise. */
const chat = (inst: Instance, model: string, key = ENV.CLIENT) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });

/**
 * A Chat request with the budgeted key, sent again after `Retry-After` while it is a 429 that is not the
 * budget's (the other instance holds room for its own requests and lends none until it gives its spare
 * back, README "Running several instances"): what a client does. @returns the final status.
 */
async function served(inst: Instance, model: string): Promise<number> {
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await chat(inst, model);
    const body = await res.text();
    if (res.status !== 429 || body.includes("key_budget_exceeded") || Date.now() > end) return res.status;
    await Bun.sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
  }
}

beforeAll(async () => {
  started = await startTwoInstancesOnPostgres({
    database: "alerts",
    env: ENV,
    handle: (r) => {
      if (r.model === "gpt-401") return { status: 401, json: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } };
      if (r.model === "gpt-lock") return { status: 402, json: { error: { message: `Payment required for ${ENV.UP_KEY}`, type: "billing_error", code: "payment_required" } } };
      const reply = simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream);
      // The quota account's provider says 92 of 100 requests are used this hour.
      if (r.model === "gpt-quota") reply.headers = { "x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "8", "x-ratelimit-reset-requests": "1h" };
      return reply;
    },
    yaml: (upstreamUrl, hookUrl) => `providers:
  - { id: up, kind: openai, base_url: "${upstreamUrl}/v1" }
  - { id: q, kind: openai, base_url: "${upstreamUrl}/v1" }
  - { id: la, kind: openai, base_url: "${upstreamUrl}/v1" }
  - { id: lb, kind: openai, base_url: "${upstreamUrl}/v1" }
  - { id: lk, kind: openai, base_url: "${upstreamUrl}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
  - { id: q-1, provider: q, api_key: env:UP_KEY }
  - { id: la-1, provider: la, api_key: env:UP_KEY }
  - { id: lb-1, provider: lb, api_key: env:UP_KEY }
  - { id: lk-1, provider: lk, api_key: env:UP_KEY }
keys:
  - { name: team, key: env:CLIENT, limits: { budgets: [{ window: 1d, tokens: 100 }] } }
  - { name: plain, key: env:PLAIN }
settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.5, 0.9] }
`,
  });
  ({ a, b, hook } = started);
}, 180_000);

afterAll(() => started?.stop(), 60_000);

const adminHeaders = (inst: Instance) => ({ authorization: `Bearer ${inst.instance().adminToken}` });

describe("alerts from two instances on one PostgreSQL (SPEC 9.7, D-2)", () => {
  test("a key budget used through both and an account quota window: each crossing on both instances' event streams, delivered once", async () => {
    // Inside one 1d window (they end at midnight UTC): across it the key's use starts again from 0 and
    // its thresholds are crossed again (a second delivery of each, rightly, for the new window).
    await roomInWindow(86_400_000, 120_000);
    const streams: EventStreamReader[] = await Promise.all([a, b].map((i) => openEvents(i.url, "?types=alert", adminHeaders(i))));
    try {
      // 18 tokens per request, alternating A, B: 108 of 100 after six (A's own share of it 54, B's 54).
      for (let i = 0; i < 6; i++) expect(await served(i % 2 === 0 ? a : b, "up/gpt-budget")).toBe(200);
      // a crossing is its own alert, or passed by a higher one raised in the same step (an instance that
      // learns the other's use in one step past 0.9 and all of it raises the share 1 with 0.9 as passed)
      const budgetAlert = (t: number) => (e: { data: any }) => e.data.subject === "key:team" && (e.data.detail.threshold === t || (e.data.detail.passed ?? []).includes(t));
      for (const s of streams) {
        await s.waitFor(budgetAlert(0.5), 20_000);
        await s.waitFor(budgetAlert(0.9), 20_000);
        await s.waitFor(budgetAlert(1), 20_000); // used up (src/alerts/alerts.ts: the share 1, configured or not)
      }
      // The quota window read through A (92 % of requests used) is scanned by both every 5 s.
      expect((await chat(a, "q/gpt-quota", ENV.PLAIN)).status).toBe(200);
      const quotaAlert = (e: { data: any }) => e.data.subject === "account:q-1" && e.data.detail.threshold === 0.9;
      for (const s of streams) await s.waitFor(quotaAlert, 30_000);
      // Markers: a lock raised on A only and one on B only, delivered after everything above.
      expect((await chat(a, "la/gpt-lock", ENV.PLAIN)).status).toBeGreaterThanOrEqual(400);
      expect((await chat(b, "lb/gpt-lock", ENV.PLAIN)).status).toBeGreaterThanOrEqual(400);
      await until(() => ["account:la-1", "account:lb-1"].every((s) => hook.got.some((g) => g.event === "account_locked" && g.subject === s)), 30_000, "both instances' lock alerts at the receiver");
      // Each lock reaches the other instance through the database and is raised there too, as the
      // instance that set it raised it (G7: only the instance that saw the 402 raised it): both
      // instances' event streams (and dashboards, and logs) show both, the receiver still gets each once.
      const locked = (subject: string) => (e: { data: any }) => e.data.event === "account_locked" && e.data.subject === subject && e.data.detail.reason !== undefined;
      for (const s of streams) for (const subject of ["account:la-1", "account:lb-1"]) await s.waitFor(locked(subject), 20_000);
      await Bun.sleep(1500); // a second delivery, were there one, would come within the webhook's first try
    } finally {
      for (const s of streams) s.close();
    }
    const tally = (subject: string) => hook.got.filter((g) => g.subject === subject).map((g) => `${g.event} ${g.detail.window} ${g.detail.threshold}`).sort();
    // each alert delivered once (no threshold twice), the share 1 among them, and every share crossed
    // said once (as its own alert, or in `passed` of a higher one raised in the same step), not twice
    const team = tally("key:team");
    expect(new Set(team).size).toBe(team.length);
    expect(team).toContain("quota_threshold 1d 1");
    const said = hook.got.filter((g) => g.subject === "key:team").flatMap((g) => [g.detail.threshold, ...(g.detail.passed ?? [])]);
    expect(said.sort()).toEqual([0.5, 0.9, 1]);
    // the quota window read at 92 %: one alert, 0.9, with 0.5 passed
    expect(tally("account:q-1")).toEqual(["quota_threshold requests 0.9"]);
    expect(hook.got.find((g) => g.subject === "account:q-1")!.detail.passed).toEqual([0.5]);
    expect(hook.got.filter((g) => g.event === "account_locked")).toHaveLength(2);
    expect(JSON.stringify(hook.got)).not.toContain(ENV.UP_KEY);
    expect(JSON.stringify(hook.got)).not.toContain(ENV.CLIENT);
    expect(JSON.stringify(hook.got)).not.toContain(ENV.PLAIN);
  }, 240_000);

  test("an account locked again after an operator's unlock is a new alert: delivered again, whichever instance unlocked (newuser15 N11)", async () => {
    const lockAlerts = () => hook.got.filter((g) => g.event === "account_locked" && g.subject === "account:la-1").length;
    await until(() => lockAlerts() === 1, 20_000, "the first lock of la-1 at the receiver (the test before)");
    // Unlocked through B (the lock was raised and claimed through A), locked again through A by the next 402.
    const unlocked = await fetch(`${b.url}/admin/api/accounts/la-1/unlock`, { method: "POST", headers: adminHeaders(b) });
    expect(unlocked.status).toBe(200);
    expect(((await unlocked.json()) as { unlocked: unknown }).unlocked).not.toBeNull();
    // A learns the unlock through the database; a request there before that is refused as locked (no 402 seen)
    const end = Date.now() + 20_000;
    while (lockAlerts() < 2 && Date.now() < end) {
      await (await chat(a, "la/gpt-lock", ENV.PLAIN)).text();
      await Bun.sleep(300);
    }
    expect(lockAlerts()).toBe(2);
  }, 60_000);

  test("a lock ended by replacing the account's key in the file and reloading (its advice) is a new alert when the new key is refused too (review15 R1)", async () => {
    const lockAlerts = () => hook.got.filter((g) => g.event === "account_locked" && g.subject === "account:lk-1").length;
    expect((await chat(a, "lk/gpt-401", ENV.PLAIN)).status).toBeGreaterThanOrEqual(400);
    await until(() => lockAlerts() === 1, 20_000, "the first lock of lk-1 at the receiver");
    // the operator puts another key into A's file and reloads: the lock "until changed" ends there
    const { readFileSync, writeFileSync } = await import("node:fs");
    writeFileSync(a.configPath, readFileSync(a.configPath, "utf8").replace("{ id: lk-1, provider: lk, api_key: env:UP_KEY }", '{ id: lk-1, provider: lk, api_key: "sk-the-replacement-key-000000000001" }'));
    const reloaded = await fetch(`${a.url}/admin/api/config/reload`, { method: "POST", headers: adminHeaders(a) });
    expect(reloaded.status).toBe(200);
    await reloaded.text();
    const end = Date.now() + 20_000;
    while (lockAlerts() < 2 && Date.now() < end) {
      await (await chat(a, "lk/gpt-401", ENV.PLAIN)).text();
      await Bun.sleep(300);
    }
    expect(lockAlerts()).toBe(2);
    expect(JSON.stringify(hook.got)).not.toContain("sk-the-replacement-key");
  }, 60_000);
});
