/**
 * The gateway's own refusals apart from failures (SPEC 9.4 Overview and Usage; try18 D11): a request a
 * key's rpm refuses (429, outcome `rejected`) is counted as refused, not as an error, by
 * `GET /admin/api/usage` (rows and series: `refused` beside `errors`), the Overview's Errors tile (its
 * figure the failures; "N refused" beside the share) and the Requests chart (a "refused" series), and
 * the Usage table (a Refused column beside Errors). An upstream failure stays an error.
 * Screenshots go to test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const TIGHT = "sy-refused-apart-tight-0000001";
const FREE = "sy-refused-apart-free-00000001";
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
  - { name: tight, key: ${TIGHT}, limits: { rpm: 1 } }
  - { name: free, key: ${FREE} }
`;

// The rpm minute of `tight` cannot end while the test runs (only the key counters read this clock).
const FROZEN = performance.timeOrigin + performance.now();
const statuses: number[] = [];
const suite = withGatewayAndBrowser(YAML, {
  clock: { now: () => Date.now(), monotonic: () => FROZEN, sleep: (ms: number) => Bun.sleep(ms) },
  ready: async (gw) => {
    const ask = async (secret: string) => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }) });
      await res.arrayBuffer();
      statuses.push(res.status);
    };
    await ask(TIGHT); // served
    await ask(TIGHT); // refused by its rpm: 429
    gw.fake.enqueue({ status: 400, json: { error: { message: "bad thing upstream", type: "invalid_request_error" } } });
    await ask(FREE); // failed upstream: an error
  },
});

test("the admin API counts the key's 429 as refused and the upstream failure as an error, in rows and series", async () => {
  expect(statuses).toEqual([200, 429, 400]);
  const answer = (await (await fetch(`${suite.gw.url}/admin/api/usage?since=1h&by=key`)).json()) as {
    rows: { group: string | null; requests: number; errors: number; refused: number }[];
    series: { buckets: { requests: number; errors: number; refused: number }[] };
  };
  const byKey = Object.fromEntries(answer.rows.map((r) => [r.group, [r.requests, r.errors, r.refused]]));
  expect(byKey).toEqual({ tight: [2, 0, 1], free: [1, 1, 0] });
  const sum = (f: (b: { requests: number; errors: number; refused: number }) => number) => answer.series.buckets.reduce((n, b) => n + f(b), 0);
  expect([sum((b) => b.requests), sum((b) => b.errors), sum((b) => b.refused)]).toEqual([3, 1, 1]);
});

test("Overview's Errors tile counts the failure and says the refusal beside it; the Requests chart has a refused series; Usage has a Refused column", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/overview`);
    const errorsTile = w.page.locator(".stat", { has: w.page.locator(".stat-label", { hasText: /^Errors$/ }) });
    await errorsTile.locator("[data-refused]").waitFor({ timeout: 30_000 });
    expect(await errorsTile.locator(".stat-value").innerText()).toBe("1");
    expect((await errorsTile.locator(".stat-sub").innerText()).replace(/\s+/g, " ")).toMatch(/^33(\.3)? ?% of requests · 1 refused$/);
    const chart = w.page.locator(".card", { hasText: "Requests per" });
    await chart.locator("canvas").first().waitFor({ timeout: 30_000 });
    expect(await chart.innerText()).toContain("refused");
    await w.page.screenshot({ path: join(SHOTS, "overview-refused-apart.png"), fullPage: true });

    await w.page.goto(`${suite.gw.url}/dashboard/usage?by=key`);
    const row = (name: string) => w.page.locator(`table.usage tbody tr[data-group="${name}"]`);
    await row("tight").waitFor({ timeout: 30_000 });
    const cell = async (name: string, label: string) => (await row(name).locator(`td[data-label="${label}"]`).innerText()).trim();
    expect([await cell("tight", "Errors"), await cell("tight", "Refused")]).toEqual(["0", "1"]);
    expect([await cell("free", "Errors"), await cell("free", "Refused")]).toEqual(["1", "0"]);
    await w.page.screenshot({ path: join(SHOTS, "usage-refused-column.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 120_000);
