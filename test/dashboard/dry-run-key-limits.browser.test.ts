/**
 * The Routing page's dry run as a client key over its limits (SPEC 9.4, 9.6; try18 D10): a key whose
 * 1d budget is used up, or whose rpm is spent this minute, is refused by the guard with 429; the dry
 * run as that key says so in the guard's own words — through `POST /admin/api/dry-run` ("The endpoint
 * would refuse this request (429): Client key "spent" has used its 1d budget …", the same reset time)
 * and on the page — instead of showing a route its requests never take. The dry run counts nothing:
 * dry runs before the real requests leave the key's rpm whole.
 *
 * The gateway's monotonic clock (which only the key counters' rates read) stands still, so the spent
 * minute cannot end while a loaded machine runs the test; budgets read the real wall clock.
 * Screenshots go to test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const SPENT = "sy-dryrun-limits-spent-00000001";
const QUICK = "sy-dryrun-limits-quick-00000001";
const YAML = `
providers:
  - id: oai
    kind: openai
    base_url: "{{FAKE}}/v1"
accounts:
  - id: oai-1
    provider: oai
    api_key: env:FAKE_KEY
keys:
  - name: spent
    key: ${SPENT}
    limits: { budgets: [{ window: 1d, tokens: 30 }] }
  - name: quick
    key: ${QUICK}
    limits: { rpm: 2 }
`;

const FROZEN = performance.timeOrigin + performance.now();
const suite = withGatewayAndBrowser(YAML, {
  clock: { now: () => Date.now(), monotonic: () => FROZEN, sleep: (ms: number) => Bun.sleep(ms) },
});

const REQUEST = { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] };

/** A real client request as the key with `secret`: its status and error message, if any. */
async function real(secret: string): Promise<{ status: number; message?: string; code?: string }> {
  const res = await fetch(`${suite.gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(REQUEST) });
  const body = (await res.json()) as { error?: { message: string; code?: string } };
  return { status: res.status, message: body.error?.message, code: body.error?.code };
}

/** The admin API's dry run with `extra` (key or headers): status and error fields, if any. */
async function dry(extra: Record<string, unknown>): Promise<{ status: number; message?: string; code?: string; refused?: number }> {
  const res = await fetch(`${suite.gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: REQUEST, endpoint: "chat", ...extra }) });
  const body = (await res.json()) as { error?: { message: string; code?: string; refused_status?: number } };
  return { status: res.status, message: body.error?.message, code: body.error?.code, refused: body.error?.refused_status };
}

/** A message with its wait ("in 23h 59m") taken out: the wait is worded from the second it is asked at. */
const withoutWait = (m: string | undefined) => m?.replace(/in \d+h \d+m|in \d+ min|in \d+ s|in about \d+ s/g, "in …");

test("a key over its 1d budget: the dry run answers the guard's 429 in its words, by name and by the secret in the headers", async () => {
  expect((await dry({ key: "spent" })).status).toBe(200);
  let last = await real(SPENT);
  for (let i = 0; i < 5 && last.status === 200; i++) last = await real(SPENT);
  expect(last.status).toBe(429);
  expect(last.code).toBe("key_budget_exceeded");
  expect(last.message).toMatch(/^Client key "spent" has used its 1d budget of 30 tokens \(\d+ tokens used\); the window resets in \S+ \S+ \(at \S+Z\)\.$/);
  for (const extra of [{ key: "spent" }, { headers: { authorization: `Bearer ${SPENT}` } }]) {
    const d = await dry(extra);
    expect({ status: d.status, code: d.code, refused: d.refused }).toEqual({ status: 429, code: "key_budget_exceeded", refused: 429 });
    // The same words and the same reset time as the real refusal.
    expect(withoutWait(d.message)).toBe(withoutWait(`The endpoint would refuse this request (429): ${last.message}`));
  }
  // `limits: false` (what setup asks): the key's allow-list and the route, not its counted limits.
  const routed = await fetch(`${suite.gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: REQUEST, endpoint: "chat", key: "spent", limits: false }) });
  expect(routed.status).toBe(200);
  expect(((await routed.json()) as { attempts: { target: string }[] }).attempts[0]?.target).toBe("oai/gpt-test");
}, 60_000);

test("a key over its rpm: the dry run answers 429 naming the limit, and dry runs themselves count no request", async () => {
  // Two dry runs first: were they counted, the key's 2 rpm would be spent before its first real request.
  for (let i = 0; i < 2; i++) expect((await dry({ key: "quick" })).status).toBe(200);
  expect((await real(QUICK)).status).toBe(200);
  expect((await real(QUICK)).status).toBe(200);
  const third = await real(QUICK);
  expect(third.status).toBe(429);
  expect(third.message).toStartWith('Client key "quick" is over its limit of 2 requests per minute (rpm); retry in ');
  const d = await dry({ key: "quick" });
  expect({ status: d.status, code: d.code, refused: d.refused }).toEqual({ status: 429, code: "key_rate_limit_exceeded", refused: 429 });
  expect(withoutWait(d.message)).toBe(withoutWait(`The endpoint would refuse this request (429): ${third.message}`));
}, 60_000);

test("the Routing page's dry run as the spent key shows the refusal, not a route", async () => {
  // Both keys over their limits, whatever ran before (the earlier tests spend them already).
  for (let i = 0; i < 5 && (await real(SPENT)).status === 200; i++);
  for (let i = 0; i < 5 && (await real(QUICK)).status === 200; i++);
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    const select = page.locator("#dr-key");
    await select.locator("option", { hasText: "spent (no tag)" }).waitFor({ state: "attached", timeout: 10_000 });
    await page.locator("#dr-model").fill("oai/gpt-test");
    await select.selectOption("spent");
    await page.getByRole("button", { name: "Route it" }).click();
    const refusal = page.getByText('The endpoint would refuse this request (429): Client key "spent" has used its 1d budget of 30 tokens');
    await refusal.waitFor({ timeout: 10_000 });
    expect(await refusal.innerText()).toMatch(/the window resets in \S+ \S+ \(at \S+Z\)\.$/);
    expect(await page.locator(".plan").count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "routing-dry-run-key-over-budget.png"), fullPage: true });
    // As the key whose rpm is spent.
    await select.selectOption("quick");
    await page.getByRole("button", { name: "Route it" }).click();
    await page.getByText('The endpoint would refuse this request (429): Client key "quick" is over its limit of 2 requests per minute (rpm)').waitFor({ timeout: 10_000 });
    // 429 answers of the admin API are expected here: Chromium logs each as a failed resource load.
    expect(w.errors.filter((e) => !e.includes("429"))).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
