/**
 * The Overview's request-rate chart (10 s buckets over 30 minutes) draws each bucket's value across its
 * bucket, as the Requests, Tokens and Cost charts below it do (newuser12a G13): its errors line was
 * drawn from one bucket's time to the next, sloping up from an empty bucket to a busy one. Real
 * Chromium at three device pixels per CSS pixel (a bucket is ~19 device px of plot), the page's clock
 * held in the busy bucket, read from the chart's pixels: the errors line is flat across the busy
 * bucket and between zero and its level only the step's vertical edge stands.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { colourSpans } from "../support/chart-pixels.ts";

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

test("the request-rate chart draws errors as steps across their 10 s bucket, as the other charts do", async () => {
  // every request in one 10 s bucket: start early in one
  while (Date.now() % 10_000 > 4_000) await Bun.sleep(100);
  const at = Date.now();
  // four served, two refused (no messages: counted as requests and as errors), sent at once
  expect(await Promise.all([send({}), send({}), send({}), send({}), send({ messages: [] }), send({ messages: [] })])).toEqual([200, 200, 200, 200, 400, 400]);
  // 6 s of slack; a machine stalled longer would put them in the next bucket and fail below on pixels (review15 R4)
  expect(Math.floor(Date.now() / 10_000), "the requests left the 10 s bucket they started in (a stalled machine), not a chart fault").toBe(Math.floor(at / 10_000));
  const w = await suite.open({ deviceScaleFactor: 3 });
  try {
    // the page's time stays in the busy bucket (its timers run): that bucket is the chart's last one
    await w.page.clock.setFixedTime(at);
    await w.page.setViewportSize({ width: 1440, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard`);
    await w.page.locator('[data-rate-total="6"]').waitFor({ timeout: 10_000 });
    await w.settled();
    const canvas = ".rate-card .chart canvas";
    // the middle band leaves out 8 rows at either level: a 2 px line is 6 device px here
    const errors = await colourSpans(w.page, canvas, "#dc2626", 8);
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
