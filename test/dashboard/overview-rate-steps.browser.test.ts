/**
 * The Overview's request-rate chart (10 s buckets over 30 minutes) draws each bucket's value across its
 * bucket, as the Requests, Tokens and Cost charts below it do (newuser12a G13): its errors line was
 * drawn from one bucket's time to the next, sloping up from an empty bucket to a busy one. Real
 * Chromium at three device pixels per CSS pixel (a bucket is ~19 device px of plot), the page's clock
 * held in the busy bucket, read from the chart's pixels: the errors line is flat across the busy
 * bucket and between zero and its level only the step's vertical edge stands.
 */
import { expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

/** POSTs an Anthropic Messages request (`body` merged in); the status. */
async function send(body: Record<string, unknown>): Promise<number> {
  const r = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "demo-anthropic/claude-demo", max_tokens: 20, messages: [{ role: "user", content: "hi" }], ...body }),
  });
  await r.text();
  return r.status;
}

/**
 * Where the canvas `selector` holds the colour `hex` (within a few levels per channel, opaque): the
 * topmost and lowest rows holding it, the leftmost and rightmost x of the topmost row (±1 row), and
 * how many columns hold it more than 8 rows (a line's width at 3 device px per CSS px, and some) from
 * either level (a step's vertical edge: its line's width; a line sloping across a bucket: the bucket's
 * width).
 */
async function colourSpans(page: Page, selector: string, hex: string): Promise<{ width: number; top: number; bottom: number; topLeft: number; topRight: number; midColumns: number }> {
  return page.evaluate(`(() => {
    const c = document.querySelector(${JSON.stringify(selector)});
    const { width, height } = c;
    const d = c.getContext("2d").getImageData(0, 0, width, height).data;
    const want = [${parseInt(hex.slice(1, 3), 16)}, ${parseInt(hex.slice(3, 5), 16)}, ${parseInt(hex.slice(5, 7), 16)}];
    const hits = [];
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      if (d[i + 3] > 240 && Math.abs(d[i] - want[0]) < 8 && Math.abs(d[i + 1] - want[1]) < 8 && Math.abs(d[i + 2] - want[2]) < 8) hits.push([x, y]);
    }
    const top = Math.min(...hits.map((h) => h[1]));
    const bottom = Math.max(...hits.map((h) => h[1]));
    const topXs = hits.filter((h) => h[1] <= top + 1).map((h) => h[0]);
    const mid = new Set(hits.filter((h) => h[1] > top + 8 && h[1] < bottom - 8).map((h) => h[0]));
    return { width, top, bottom, topLeft: Math.min(...topXs), topRight: Math.max(...topXs), midColumns: mid.size };
  })()`);
}

test("the request-rate chart draws errors as steps across their 10 s bucket, as the other charts do", async () => {
  // every request in one 10 s bucket: start early in one
  while (Date.now() % 10_000 > 4_000) await Bun.sleep(100);
  const at = Date.now();
  for (let i = 0; i < 4; i++) expect(await send({})).toBe(200);
  // refused (no messages): counted as requests and as errors
  for (let i = 0; i < 2; i++) expect(await send({ messages: [] })).toBe(400);
  const w = await suite.open({ deviceScaleFactor: 3 });
  try {
    // the page's time stays in the busy bucket (its timers run): that bucket is the chart's last one
    await w.page.clock.setFixedTime(at);
    await w.page.setViewportSize({ width: 1440, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard`);
    await w.page.locator('[data-rate-total="6"]').waitFor({ timeout: 10_000 });
    await w.settled();
    const canvas = ".rate-card .chart canvas";
    const errors = await colourSpans(w.page, canvas, "#dc2626");
    const bucketPx = (errors.width - 3 * 60) / 181; // at most this many device px of plot per bucket (30 min of 10 s buckets, and the current one)
    expect(bucketPx).toBeGreaterThan(15);
    // flat across the busy bucket's width
    expect(errors.topRight - errors.topLeft).toBeGreaterThan(0.6 * bucketPx);
    // between zero and the busy level only the step's vertical edge (2 CSS px), not a slope across a bucket
    expect(errors.midColumns).toBeLessThanOrEqual(10);
    expect(w.errors.filter((e) => !e.includes("400"))).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
