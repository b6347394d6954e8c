/**
 * The Overview's tiles add up the usage rows, and no chart on the page is per model, so the page asks
 * /admin/api/usage for rows by provider: an answer whose size does not grow with the model names
 * clients send. It asked by model: in a 45-minute soak with random client-chosen model names (a
 * provider that serves any name) each read, every ≤ 2 s while requests finished, was 882 KB with
 * 2,767 names. Real Chromium; every usage read the page makes is recorded with its answer.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

test("with 40 distinct model names served, the Overview's usage reads are by provider (one row per provider), and its tiles count all 40 requests", async () => {
  const names = Array.from({ length: 40 }, (_, i) => `rnd-model-${i}`);
  for (const name of names) {
    const r = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: `demo-chat/${name}`, messages: [{ role: "user", content: "hi" }] }),
    });
    await r.text();
    expect(r.status).toBe(200);
  }
  // By model, the same period is 40 rows (one per name): what the page no longer asks for.
  const byModel = (await (await fetch(`${suite.gw.url}/admin/api/usage?since=1h&by=model`)).json()) as { rows: unknown[] };
  expect(byModel.rows.length).toBe(40);

  const w = await suite.open();
  try {
    const reads: { url: URL; rows: number }[] = [];
    w.page.on("response", async (res) => {
      const url = new URL(res.url());
      if (url.pathname !== "/admin/api/usage") return;
      const body = (await res.json().catch(() => undefined)) as { rows?: unknown[] } | undefined;
      reads.push({ url, rows: body?.rows?.length ?? -1 });
    });
    await w.page.goto(`${suite.gw.url}/dashboard/`);
    const requestsTile = w.page.locator(".stat:has(.stat-label:text-is(\"Requests\")) .stat-value");
    for (const end = Date.now() + 10_000; (await requestsTile.textContent()) !== "40" && Date.now() < end; ) await Bun.sleep(100);
    expect(await requestsTile.textContent()).toBe("40");
    // the tiles' read (since=1h, the page's first range) and the rate chart's (since=30m)
    for (const end = Date.now() + 10_000; !reads.some((r) => r.url.searchParams.get("since") === "1h") && Date.now() < end; ) await Bun.sleep(100);
    const tiles = reads.filter((r) => r.url.searchParams.get("since") === "1h");
    expect(tiles.length).toBeGreaterThan(0);
    for (const r of tiles) {
      expect(r.url.searchParams.get("by")).toBe("provider");
      expect(r.rows).toBe(1); // demo-chat served them all
    }
    expect(reads.filter((r) => r.url.searchParams.get("by") !== "provider").map((r) => r.url.search)).toEqual([]);
    // the Last day range reads the same way
    await w.page.click('.seg button:has-text("Last day")');
    for (const end = Date.now() + 10_000; !reads.some((r) => r.url.searchParams.get("since") === "24h") && Date.now() < end; ) await Bun.sleep(100);
    const day = reads.filter((r) => r.url.searchParams.get("since") === "24h");
    expect(day.map((r) => [r.url.searchParams.get("by"), r.rows])).toEqual(day.map(() => ["provider", 1]));
    expect(day.length).toBeGreaterThan(0);
  } finally {
    await w.close();
  }
}, 60_000);
