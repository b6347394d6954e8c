/**
 * Key budgets of two instances on one PostgreSQL (SPEC 9.6 with D-2: limits count across instances;
 * README "Running several instances"), as a new user found them with two real `switchyard start
 * --database postgres://…` processes (A and B):
 * - A key served only through B: A's `/admin/api/keys` showed its budget use as 0 for good and A's event
 *   stream got none of its alerts (A read the others' use only of keys it served). Now A watches every
 *   key with limits: it shows B's use within about a second and raises the crossings too.
 * - A database outage: each instance counted in the embedded counters from zero, in a window that
 *   began at the outage, so a key at 108 % of its budget was served again, the alerts were raised again
 *   with that window's end, and the outage's use never reached the shared count (both said 108 / 100
 *   afterwards). Now an instance keeps counting its shares from what it last knew, in the real windows,
 *   and reports the outage's use when the database is back: both instances see it, counted once.
 * - A 429 named the window's end as 23:59:59Z or 00:00:00Z by turns: it names the window's end itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTwoInstancesOnPostgres, type TwoInstancesOnPostgres } from "../support/two-instances-on-postgres.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import type { Instance } from "../support/instance.ts";
import type { WebhookReceiver } from "../support/webhook-receiver.ts";
import type { TestPostgres } from "../support/postgres.ts";
import { openEvents } from "../support/admin-events.ts";
import { until as pollUntil } from "../support/until.ts";
import { windowEndText } from "../support/aligned-window.ts";

const ENV = {
  UP_KEY: "sk-upstream-account-secret",
  SPENT: "sy-budget-spent-key-000000000001",
  OUTAGE: "sy-budget-outage-key-00000000002",
  ONLY_B: "sy-budget-only-b-key-00000000003",
};
const DAY = 86_400_000;

let a: Instance;
let b: Instance;
let hook: WebhookReceiver;
let started: TwoInstancesOnPostgres | undefined;
let pg: TestPostgres;

/** Polls every 100 ms until `cond` holds; fails after `ms`. */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string) => pollUntil(cond, ms, what, 100);

/** A Chat request through `inst` with the client key `key` (18 tokens when served). */
const chat = (inst: Instance, key: string) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "up/gpt-budget", messages: [{ role: "user", content: "hi" }] }),
  });

/**
 * A request sent again after `Retry-After` while it is a 429 that is not the budget's (the other
 * instance holds room for its requests in flight, README "Running several instances"), as a client
 * does. @returns the final status and body.
 */
async function served(inst: Instance, key: string): Promise<{ status: number; body: string }> {
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await chat(inst, key);
    const body = await res.text();
    if (res.status !== 429 || body.includes("key_budget_exceeded") || Date.now() > end) return { status: res.status, body };
    await Bun.sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
  }
}

const adminHeaders = (inst: Instance) => ({ authorization: `Bearer ${inst.instance().adminToken}` });

/** The key's 1d budget use as `GET /admin/api/keys` on `inst` shows it. */
async function used(inst: Instance, name: string): Promise<number | undefined> {
  const res = await fetch(`${inst.url}/admin/api/keys`, { headers: adminHeaders(inst) });
  const keys = ((await res.json()) as any).keys as any[];
  return keys.find((k) => k.name === name)?.use?.budgets?.[0]?.used;
}

/** The key's 1d budget window as `GET /admin/api/keys` on `inst` shows it: its start and end (ms). */
async function window(inst: Instance, name: string): Promise<{ start: number; end: number }> {
  const res = await fetch(`${inst.url}/admin/api/keys`, { headers: adminHeaders(inst) });
  const use = (((await res.json()) as any).keys as any[]).find((k) => k.name === name)?.use?.budgets?.[0];
  return { start: use?.startedAt, end: use?.resetsAt };
}

const health = async (inst: Instance) => ((await (await fetch(`${inst.url}/health`)).json()) as any).db;


beforeAll(async () => {
  started = await startTwoInstancesOnPostgres({
    database: "budgets",
    env: ENV,
    handle: (r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream),
    yaml: (upstreamUrl, hookUrl) => `providers:
  - { id: up, kind: openai, base_url: "${upstreamUrl}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: spent, key: env:SPENT, limits: { budgets: [{ window: 1d, tokens: 100 }] } }
  - { name: outage, key: env:OUTAGE, limits: { budgets: [{ window: 1d, tokens: 1000 }] } }
  - { name: only-b, key: env:ONLY_B, limits: { budgets: [{ window: 1d, tokens: 50 }] } }
settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.5, 0.9] }
`,
  });
  ({ a, b, hook, pg } = started);
  // The first second's read of the keys' use is what the instance starts from (no alerts for it).
  await Bun.sleep(1500);
}, 180_000);

afterAll(() => started?.stop(), 60_000);

describe("key budgets of two instances on one PostgreSQL (SPEC 9.6, D-2)", () => {
  test("a key served only through B: A shows its budget use and raises its alerts", async () => {
    const events = await openEvents(a.url, "?types=alert", adminHeaders(a));
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await served(b, ENV.ONLY_B)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(await used(b, "only-b")).toBe(54);
      await until(async () => (await used(a, "only-b")) === 54, 10_000, "A to show only-b's use (54 of 50)");
      // 54 of 50 after 36: past 0.9 and all of it in one step, the share 1 with 0.9 as passed (one alert per step)
      for (const t of [0.5, 0.9]) await events.waitFor((e) => e.data.subject === "key:only-b" && (e.data.detail.threshold === t || (e.data.detail.passed ?? []).includes(t)), 10_000);
      const res = await chat(a, ENV.ONLY_B);
      expect(res.status).toBe(429);
      expect(await res.text()).toContain("54 tokens used");
    } finally {
      events.close();
    }
  }, 150_000);

  test("a database outage: a spent key stays refused in its real window, the outage's use reaches both instances once", async () => {
    // spent: 108 of 100 through both; outage: 36 of 1000. The first request opens spent's 1d window
    // (SPEC 2.3: windows open at the first use), whose end the 429s and alerts name.
    const opened = Date.now();
    const before: number[] = [];
    for (let i = 0; i < 7; i++) before.push((await served(i % 2 === 0 ? a : b, ENV.SPENT)).status);
    expect(before).toEqual([200, 200, 200, 200, 200, 200, 429]);
    const day = await window(a, "spent");
    expect(day.start).toBeGreaterThanOrEqual(opened - 50);
    expect(day.end).toBe(day.start + DAY);
    expect(await window(b, "spent")).toEqual(day);
    const dayEnd = windowEndText(day);
    for (const inst of [a, b]) expect((await served(inst, ENV.OUTAGE)).status).toBe(200);
    await until(async () => (await used(a, "spent")) === 108 && (await used(b, "spent")) === 108, 10_000, "both to know spent's 108");
    await until(async () => (await used(a, "outage")) === 36 && (await used(b, "outage")) === 36, 10_000, "both to know outage's 36");
    const refusal = await chat(a, ENV.SPENT);
    expect(refusal.status).toBe(429);
    expect(await refusal.text()).toContain(`(at ${dayEnd})`);

    await pg.stop();
    try {
      await until(async () => (await health(a)) === "unreachable" || (await health(b)) === "unreachable", 15_000, "an instance to notice the outage");
      // The spent key stays refused on both, naming the real window's end.
      for (const inst of [a, b, a, b, a, b]) {
        const res = await chat(inst, ENV.SPENT);
        const body = await res.text();
        expect([res.status, body.includes("key_budget_exceeded"), body.includes(`(at ${dayEnd})`), body.includes("108 tokens used")]).toEqual([429, true, true, true]);
      }
      // The other key is served on both: 5 × 18 = 90 tokens counted while the database is away.
      for (const inst of [a, a, a, b, b]) expect((await served(inst, ENV.OUTAGE)).status).toBe(200);
    } finally {
      await pg.start();
    }
    await until(async () => (await health(a)) === "ok" && (await health(b)) === "ok", 30_000, "both to reconnect");
    // The outage's use reaches the shared count: both see 36 + 90, spent still 108 (nothing twice).
    await until(async () => (await used(a, "outage")) === 126 && (await used(b, "outage")) === 126, 20_000, "both to show outage's 126 (36 before, 90 during the outage)");
    expect([await used(a, "spent"), await used(b, "spent")]).toEqual([108, 108]);
    for (const inst of [a, b]) expect((await chat(inst, ENV.SPENT)).status).toBe(429);
    // The spent key's alerts were delivered once each, for the real window (none again in the outage).
    await Bun.sleep(2000);
    // One alert per step: a request that passed 0.9 and the whole budget at once posts the share 1
    // with 0.9 in `passed`, one that passed 0.9 alone posts it. The two instances may see the use in
    // different steps; each claims the shares it passes too (src/alerts/alert-claim.ts), so no
    // threshold's alert comes twice and every share is said once, as an alert or in `passed` (until
    // 2026-12-07, later, 0.9 could come both as one's alert and in the other's `passed`).
    const spent = hook.got.filter((g) => g.subject === "key:spent");
    const end = new Date(Math.floor(day.end / 1000) * 1000).toISOString(); // an alert's resets_at is to the second
    expect(spent.map((g) => g.detail.resets_at)).toEqual(spent.map(() => end));
    const alerted = spent.map((g) => g.detail.threshold as number).sort();
    expect(alerted).toEqual([...new Set(alerted)]);
    expect(alerted).toContain(1);
    const said = spent.flatMap((g) => [g.detail.threshold as number, ...((g.detail.passed as number[] | undefined) ?? [])]);
    expect(said.sort()).toEqual([0.5, 0.9, 1]);
  }, 270_000);
});
