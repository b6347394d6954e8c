/**
 * The alerts of a key budget lowered through one instance, on two instances sharing PostgreSQL (SPEC 9.7
 * with D-2; src/alerts/budget-change-alerts.ts `learned`): the other instance raises them too as it
 * re-reads the changed key (within about a second), so both list them (`GET /admin/api/alerts`, what
 * the dashboard's Recent alerts shows), and the claim in the database has the webhook get each once;
 * when the instance delivering them (whichever claimed them first) stops while the webhook is down,
 * the other delivers them (each once) once the webhook is back, and the stop's log says how many
 * alerts it dropped.
 * Until 2026-12-06 (try22's tryout, P6) only the instance that took the change raised them: the other
 * never listed them, and they were never posted when that instance stopped first.
 *
 * Thresholds [0.5, 0.8, 0.95]; a stored key with a 1d budget of 1,000 tokens uses 850 through A in one
 * request (0.8 posted, with 0.5 as passed: one alert per step since 2026-12-07); lowered through A to 880
 * (0.95 of 880) and then to 800 (the share 1 of 800). A second key, lowered from 1,000 to 800 while the
 * receiver answers 503 (down): the share 1, with 0.95 as passed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTwoInstancesOnPostgres, type TwoInstancesOnPostgres } from "../support/two-instances-on-postgres.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import type { Instance } from "../support/instance.ts";
import type { WebhookReceiver } from "../support/webhook-receiver.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { until } from "../support/until.ts";

const ADMIN = "sy-test-changealerts-admin-000001";
const UP_ENV = { UP_KEY: "sk-upstream-changealerts-000001" };

let hook: WebhookReceiver;
/** While true the receiver answers 503 (down: each try fails and is retried). */
let down = false;
/** Tokens the next reply reports (half input, half output). */
let replyTokens = 850;
let a: Instance;
let b: Instance;
let started: TwoInstancesOnPostgres | undefined;

beforeAll(async () => {
  started = await startTwoInstancesOnPostgres({
    database: "changealerts",
    env: UP_ENV,
    hook: { answer: () => (down ? 503 : 204) },
    handle: (r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: replyTokens / 2, output: replyTokens / 2 } }, r.stream),
    yaml: (upstreamUrl, hookUrl) => `${keysRequiredConfig(upstreamUrl, ADMIN)}settings:
  alerts: { webhook: "${hookUrl}", quota_thresholds: [0.5, 0.8, 0.95] }
`,
  });
  ({ a, b, hook } = started);
}, 180_000);

afterAll(() => started?.stop(), 60_000);

const admin = async (inst: Instance, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${inst.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

/** A Chat request through `inst` with `secret` whose reply reports `tokens` tokens; a 429 asking for a retry within seconds is retried. */
async function chat(inst: Instance, secret: string, tokens: number): Promise<number> {
  replyTokens = tokens;
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${inst.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "up/gpt-changealerts", messages: [{ role: "user", content: "hi" }] }),
    });
    await res.text();
    if (res.status !== 429 || Date.now() > end) return res.status;
    await Bun.sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
  }
}

/** "threshold/limit" of each alert of key `name` the receiver got, sorted. */
const posted = (name: string) =>
  hook.got
    .filter((g) => g.subject === `key:${name}`)
    .map((g) => `${g.detail.threshold}/${g.detail.limit}`)
    .sort();
/**
 * "threshold/limit" of each alert of key `name` that `inst` lists (GET /admin/api/alerts), sorted: those
 * of the lowered budgets, not of the 1,000 tokens crossed by the request through A (in one run of five,
 * B listed none of those for a key created a moment before: not this test's subject, see the README's
 * "Not done yet").
 */
const listed = async (inst: Instance, name: string) =>
  ((await admin(inst, "GET", "/alerts")).body.alerts as any[])
    .filter((x) => x.subject === `key:${name}` && x.detail.limit !== 1000)
    .map((x) => `${x.detail.threshold}/${x.detail.limit}`)
    .sort();
/** The 1d budget's use of key `name` as `inst` shows it (GET /admin/api/keys). */
const used = async (inst: Instance, name: string) => ((await admin(inst, "GET", "/keys")).body.keys as any[]).find((k) => k.name === name)?.use?.budgets?.[0]?.used;
/** What `inst`'s /metrics counts of quota_threshold alerts under `result`. */
async function deliveries(inst: Instance, result: string): Promise<number> {
  const text = await (await fetch(`${inst.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`switchyard_alert_deliveries_total{event="quota_threshold",result="${result}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

/** The JSON lines `inst` wrote (stdout and stderr). */
function jsonLines(inst: Instance): any[] {
  const out: any[] = [];
  for (const l of [...inst.stdout, ...inst.stderr]) {
    try {
      out.push(JSON.parse(l));
    } catch {
      // not a JSON line
    }
  }
  return out;
}

/** Creates key `name` (1d budget of 1,000 tokens) through A and uses 850 of it there: 0.8 posted (0.5 passed with it); both instances show the use. */
async function spent850(name: string): Promise<string> {
  const made = await admin(a, "POST", "/keys", { name, limits: { budgets: [{ window: "1d", tokens: 1000 }] } });
  expect(made.status).toBe(201);
  expect(await chat(a, made.body.secret, 850)).toBe(200);
  await until(() => posted(name).length === 1, 30_000, `the 0.8 alert of ${name}'s 1,000-token budget`);
  for (const inst of [a, b]) await until(async () => (await used(inst, name)) === 850, 30_000, `${name}'s use (850) on both instances`);
  return made.body.secret;
}

const lower = async (name: string, tokens: number) => {
  const res = await admin(a, "PATCH", `/keys/${name}`, { limits: { budgets: [{ window: "1d", tokens }] } });
  expect(res.status).toBe(200);
};

describe("a budget lowered through one of two instances on one PostgreSQL: both raise the change's alerts", () => {
  test("the other instance lists them within seconds; the webhook gets each once", async () => {
    await spent850("dev1");
    await lower("dev1", 880); // 850 of 880: 0.966
    await until(async () => (await listed(b, "dev1")).includes("0.95/880"), 10_000, "the other instance listing the 0.95 alert of the budget lowered to 880");
    await lower("dev1", 800); // used up
    await until(async () => (await listed(b, "dev1")).includes("1/800"), 10_000, "the other instance listing the share 1 of the budget lowered to 800");
    for (const inst of [a, b]) expect(await listed(inst, "dev1")).toEqual(["0.95/880", "1/800"]);
    await until(() => posted("dev1").length >= 3, 15_000, "the change's alerts at the webhook");
    await Bun.sleep(2000); // a second delivery, were there one, would have come by now
    expect(posted("dev1")).toEqual(["0.8/1000", "0.95/880", "1/800"]);
  }, 150_000);

  test("the instance delivering them stops while the webhook is down: the other posts them once the webhook is back, each once; the stop logs what it dropped", async () => {
    await spent850("dev2");
    down = true;
    const retried = [await deliveries(a, "retried"), await deliveries(b, "retried")];
    const hits = hook.hits;
    await lower("dev2", 800); // 850 of 800: the share 1 (0.95 passed with it: one alert)
    await until(async () => (await listed(b, "dev2")).join() === "1/800", 10_000, "the other instance listing the change's alert");
    // Whichever instance claimed an alert first holds its lease and is retrying it; the other keeps it
    // and asks again every 5 s. Usually the one that took the change; the other, whose re-read can be
    // quicker than the change's own read of the window's use, sometimes. The holder of more is stopped.
    const more = async () => [(await deliveries(a, "retried")) - retried[0]!, (await deliveries(b, "retried")) - retried[1]!];
    await until(async () => (await more()).reduce((x, y) => x + y) >= 1, 15_000, "the instances retrying the change's alert");
    expect(hook.hits).toBeGreaterThanOrEqual(hits + 1);
    const [byA, byB] = await more();
    const [stopped, other] = byA! >= byB! ? [a, b] : [b, a];
    stopped.kill("SIGTERM");
    await stopped.exited;
    // it says what it dropped: at least the one it held or kept
    const stopLine = jsonLines(stopped).find((j) => j.dropped !== undefined && String(j.msg).startsWith("stopping:"));
    expect(stopLine).toMatchObject({ level: "warn", events: { quota_threshold: stopLine?.dropped } });
    expect(stopLine.dropped).toBeGreaterThanOrEqual(1);
    // one alert (the share 1) or more: the line says "it" or "them"
    expect(stopLine.msg).toMatch(/another instance sharing the database that raised (it|them) too delivers (it|them) \(1 other instance runs; this instance's leases are given up\); otherwise (it is|they are) lost/);
    down = false;
    await until(() => posted("dev2").length >= 2, 30_000, "the other instance posting the change's alert");
    await Bun.sleep(2000); // a second delivery, were there one, would have come by now
    expect(posted("dev2")).toEqual(["0.8/1000", "1/800"]);
    expect(await listed(other, "dev2")).toEqual(["1/800"]);
  }, 150_000);
});
