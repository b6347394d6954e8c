/**
 * From a team tryout (two instances on one PostgreSQL, README "Running several instances"): a key
 * budget used up through instance A, then several requests of the key at once on instance B (which had
 * served none of them). README "Alerts": each threshold "is raised once per budget window and budget
 * amount", and B's alert list (`GET /admin/api/alerts`, the Overview's Recent alerts, its log) shows "the
 * alerts that instance raised". Seen: B raised the used-up alert (share 1, `passed` [0.5, 0.9]) once per
 * request refused at that moment (10 of 10 in the tryout: ten identical Recent-alert lines and ten
 * `alert quota_threshold key:…` log lines; 5, 9, 9 in this test); the webhook still got it once (the
 * database claim). Fixed 2026-12-07 at both ends: src/limits/shared-counters.ts `admit` no longer drops
 * the budget window a request has just opened on B when it looks at the key's other limits (each
 * request opened and confirmed its own window, each learning A's use from 0: the same step 0 → 108 per
 * request; test/limits/shared-first-read-once.test.ts), and src/alerts/alerts.ts remembers the
 * thresholds it said per key, window and amount (test/alerts/budget-alert-once.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTwoInstancesOnPostgres, type TwoInstancesOnPostgres } from "../support/two-instances-on-postgres.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import type { Instance } from "../support/instance.ts";
import { roomInWindow } from "../support/aligned-window.ts";

const ENV = { UP_KEY: "sk-upstream-account-secret", CLIENT: "sy-budget-client-key-0000000001" };

let a: Instance;
let b: Instance;
let started: TwoInstancesOnPostgres | undefined;

const chat = (inst: Instance) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ENV.CLIENT}` },
    body: JSON.stringify({ model: "up/gpt-budget", messages: [{ role: "user", content: "hi" }] }),
  }).then(async (r) => (await r.text(), r.status));

beforeAll(async () => {
  started = await startTwoInstancesOnPostgres({
    database: "alert_repeat",
    env: ENV,
    handle: (r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream),
    yaml: (upstreamUrl, hookUrl) => `providers:
  - { id: up, kind: openai, base_url: "${upstreamUrl}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: team, key: env:CLIENT, limits: { budgets: [{ window: 1d, tokens: 100 }] } }
settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.5, 0.9] }
`,
  });
  ({ a, b } = started);
}, 180_000);

afterAll(() => started?.stop(), 60_000);

describe("a key budget used up on A, then requests at once on B", () => {
  test("B raises the used-up alert once, not once per refused request", async () => {
    await roomInWindow(86_400_000, 120_000);
    // B's first report (a second after its start) reads the key's use as known, not as crossed (the
    // alerts are raised where the use happened): A's use must come after it for B to raise anything
    // (0 alerts on B in one run of a loaded machine without this wait).
    await Bun.sleep(2_500);
    // 18 tokens a request: six on A, one after another, use the 100-token budget up (108).
    const onA: number[] = [];
    for (let i = 0; i < 6; i++) onA.push(await chat(a));
    expect(onA).toEqual([200, 200, 200, 200, 200, 200]);
    // At once, ten on B, which has served none: all refused (the budget is used up).
    const onB = await Promise.all(Array.from({ length: 10 }, () => chat(b)));
    expect(onB.every((s) => s === 429)).toBe(true);
    await Bun.sleep(4000);
    const res = await fetch(`${b.url}/admin/api/alerts`, { headers: { authorization: `Bearer ${b.instance().adminToken}` } });
    const body: any = await res.json();
    const list: any[] = body.alerts ?? body;
    const usedUp = list.filter((x) => x.subject === "key:team" && x.detail?.threshold === 1);
    // One window, one amount: the share 1 is raised once on B (seen: once per refused request).
    expect(usedUp.length).toBe(1);
    // And no lower share twice either (as its own alert or in `passed`).
    for (const t of [0.5, 0.9]) {
      const said = list.filter((x) => x.subject === "key:team" && (x.detail?.threshold === t || (x.detail?.passed ?? []).includes(t)));
      expect(said.length).toBeLessThanOrEqual(1);
    }
  }, 200_000 /* roomInWindow waits up to 120 s in the two minutes before midnight UTC */);
});
