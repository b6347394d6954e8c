/**
 * Overview with two instances on one PostgreSQL (SPEC D-2, 9.4), in a real browser: the page is open
 * on instance A while requests go through instance B. B's requests never reach A's live event stream;
 * they are in the shared usage store, and the open page shows them — in the request rate chart, the
 * Request rate tile and the Requests tile — within about 10 s (the chart re-read only its whole
 * 30 minutes once a minute, and the tiles only on A's own requests). A throwaway PostgreSQL
 * (../support/postgres.ts). Screenshots go to test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SHOTS } from "../support/browser.ts";
import { sendMessage } from "../support/dashboard-demo.ts";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startPostgres } from "../support/postgres.ts";
import { withStartedGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { providersAtFake } from "../support/configs.ts";

/** Instance A (the page's), with B beside it on the same database; stopping A stops B, the fake and PostgreSQL. */
const suite = withStartedGatewayAndBrowser(
  async () => {
    const pg = await startPostgres();
    const db = await pg.createDatabase("overview");
    const fake = await startFakeUpstream();
    const yaml = `
server:
  database: "${db}"
${providersAtFake(["claude", "anthropic"])}
accounts:
  - { id: claude-work, provider: claude, api_key: "env:FAKE_KEY" }
`;
    const [a, b] = await Promise.all([startGateway(yaml, { fake }), startGateway(yaml, { fake })]);
    const stop = async () => {
      for (const g of [a, b]) {
        await g.stopGatewayOnly();
        rmSync(g.dataDir, { recursive: true, force: true });
      }
      await fake.stop();
      await pg.destroy();
    };
    return Object.assign(Object.create(a) as TestGateway, { b, stop });
  },
  { timeoutMs: 120_000 },
);

test("requests served by another instance appear on the open Overview within about 10 s: the rate chart, the rate tile and the request count", async () => {
  const a = suite.gw;
  const b = suite.gw.b;
  // one request through A first, so the page opens on charts rather than the no-traffic card
  expect(await sendMessage(a.url, "claude/claude-sonnet-4-5")).toBe(200);
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${a.url}/dashboard/overview`);
    await w.page.locator('[data-rate-total="1"]').waitFor({ timeout: 10_000 });
    await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
    const tile = (label: string) => w.page.locator(".stat", { has: w.page.locator(".stat-label", { hasText: new RegExp(`^${label}$`, "i") }) }).locator(".stat-value");
    // the count comes from the store, where the first request's usage row lands after its reply (the
    // after-reply queue, then the flush): the tile may read 0 for one refresh, as the later count may
    await tile("Requests").filter({ hasText: /^1$/ }).waitFor({ timeout: 15_000 });

    const N = 4;
    for (let i = 0; i < N; i++) expect(await sendMessage(b.url, "claude/claude-sonnet-4-5")).toBe(200);
    // no reload, no request through A: B's requests come from the shared store
    await w.page.locator(`[data-rate-total="${1 + N}"]`).waitFor({ timeout: 25_000 });
    await tile("Request rate").filter({ hasText: `${1 + N}/min` }).waitFor({ timeout: 5_000 });
    await tile("Requests").filter({ hasText: new RegExp(`^${1 + N}$`) }).waitFor({ timeout: 10_000 });
    await w.page.screenshot({ path: join(SHOTS, "overview-two-instances.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
