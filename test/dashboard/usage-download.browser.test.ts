/**
 * The Usage page's download (newuser12a G12): it had none (`GET /admin/api/usage` and `switchyard
 * usage --json` were the export). Real Chromium, signed in with a client key on a gateway that
 * requires one (the download is made from what the session already read): the CSV and JSON files hold
 * what the page shows for its range and grouping, and no secret. And its Tokens chart (G13): input
 * was drawn as bars and the other series as lines that sloped from an empty bucket up to a busy one;
 * now every series is a line of steps, flat across each bucket: read from the chart's pixels.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { openPage } from "../support/browser.ts";
import { csvCell } from "../../src/dashboard/client/usage-export.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { colourSpans } from "../support/chart-pixels.ts";
import { providersAtFake } from "../support/configs.ts";

const ADMIN_SECRET = "sy-usage-download-admin-key-0001";
const CLIENT_SECRET = "sy-usage-download-client-key-001";

const suite = withGatewayAndBrowser(`
server: { require_api_key: true, instance_name: "gw, one" }
${providersAtFake(["shop", "openai-compatible"])}
accounts:
  - { id: shop-1, provider: shop, api_key: "env:FAKE_KEY" }
keys:
  - { name: ops, key: env:ADMIN_SECRET, scopes: [admin] }
  - { name: ci, key: env:CLIENT_SECRET }
settings:
  pricing:
    # the fake's reply uses 11 tokens in and 7 out
    shop/dear: { input: 3000, output: 3000 }   # 18 × $0.003 = $0.054
    shop/mini: { input: 2, output: 3 }         # 11 × $2 + 7 × $3 per million = $0.000043
`, {
  env: { ADMIN_SECRET, CLIENT_SECRET },
  ready: async (gw) => {
    for (const model of ["shop/dear", "shop/mini", "shop/mini"]) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${CLIENT_SECRET}` }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
  },
});

test("csvCell quotes commas, quotes and line breaks, and keeps a formula-looking name as text", () => {
  expect(["plain", "a,b", 'say "hi"', "two\nlines", "=HYPERLINK(1)", "+1", "-2", "@x", 0.054, null].map(csvCell)).toEqual([
    "plain",
    '"a,b"',
    '"say ""hi"""',
    '"two\nlines"',
    "'=HYPERLINK(1)",
    "'+1",
    "'-2",
    "'@x",
    "0.054",
    "",
  ]);
});

test("Usage downloads the table it shows as CSV and the answer it drew as JSON, for its range and grouping, with no secret", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    // sign in with the admin key
    await w.page.fill("#key", ADMIN_SECRET);
    await w.page.click('button[type="submit"]');
    await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 10_000 });
    const download = async (kind: "csv" | "json") => {
      const [dl] = await Promise.all([w.page.waitForEvent("download"), w.page.locator(`button[data-download="${kind}"]`).click()]);
      return { name: dl.suggestedFilename(), text: readFileSync((await dl.path())!, "utf8") };
    };

    const csv = await download("csv");
    expect(csv.name).toMatch(/^switchyard-usage-24h-by-model-\d{4}-\d\d-\d\dT\d{4}Z\.csv$/);
    const lines = csv.text.split("\r\n");
    expect(lines[0]).toBe("model,requests,errors,refused,client_closed,fallbacks,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,spent_usd,subscription_use_usd,unpriced_requests,saved_tokens,avg_first_byte_ms,avg_total_ms");
    // the page's rows, in its order (most tokens first), figures unrounded
    expect(lines.slice(1, 3).map((l) => l.split(",").slice(0, 12))).toEqual([
      ["shop/mini", "2", "0", "0", "0", "0", "22", "14", "0", "0", "0", expect.stringMatching(/^0\.0000(86|859)/)] as never,
      ["shop/dear", "1", "0", "0", "0", "0", "11", "7", "0", "0", "0", expect.stringMatching(/^0\.054/)] as never,
    ]);
    expect(lines.slice(3)).toEqual([""]);

    // by instance, over 7 days: the file follows the page's choices; a name with a comma stays one cell
    await w.page.getByRole("button", { name: "by instance" }).click();
    await w.page.getByRole("button", { name: "7 days" }).click();
    await w.page.locator("table.usage tbody tr[data-group='gw, one']").waitFor({ timeout: 10_000 });
    const byInstance = await download("csv");
    expect(byInstance.name).toMatch(/^switchyard-usage-7d-by-instance-.*\.csv$/);
    expect(byInstance.text.split("\r\n")[0]).toStartWith("instance,requests,");
    expect(byInstance.text.split("\r\n")[1]).toStartWith('"gw, one",3,0,0,0,0,33,21,');

    const json = await download("json");
    expect(json.name).toMatch(/^switchyard-usage-7d-by-instance-.*\.json$/);
    const answer = JSON.parse(json.text);
    expect([answer.since, answer.by]).toEqual(["7d", "instance"]);
    expect(answer.rows.map((r: { group: string; requests: number }) => [r.group, r.requests])).toEqual([["gw, one", 3]]);
    expect(answer.series.buckets.reduce((n: number, b: { requests: number }) => n + b.requests, 0)).toBe(3);
    for (const text of [csv.text, byInstance.text, json.text]) {
      expect(text).not.toContain(ADMIN_SECRET);
      expect(text).not.toContain(CLIENT_SECRET);
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("the Tokens chart draws every series as steps across its bucket: no bars beside lines that slope from an empty bucket to a busy one", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    await w.page.fill("#key", ADMIN_SECRET);
    await w.page.click('button[type="submit"]');
    await w.page.locator("table.usage tbody tr").first().waitFor({ timeout: 10_000 });
    await w.settled();
    const canvas = ".grid-2 .card:first-child .chart canvas";
    // one day in 25 one-hour buckets (the last one now), every request in the last one: 33 tokens in, 21 out
    const input = await colourSpans(w.page, canvas, "#0891b2");
    const output = await colourSpans(w.page, canvas, "#7c3aed");
    const bucketPx = (input.width - 60) / 26; // at most this many px of plot per bucket (the value axis takes 56 or more)
    for (const s of [input, output]) {
      // flat across the busy bucket's width, up to the plot's right end
      expect(s.topRight - s.topLeft).toBeGreaterThan(0.6 * bucketPx);
      // between zero and the busy level only the step's vertical edge, not a slope across a bucket
      expect(s.midSpan).toBeLessThanOrEqual(4);
    }
    // both series step up at one time (the start of the busy bucket); input above output
    expect(Math.abs(input.topLeft - output.topLeft)).toBeLessThanOrEqual(3);
    expect(input.top).toBeLessThan(output.top);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
