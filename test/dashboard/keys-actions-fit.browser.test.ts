/**
 * The Keys table's actions stay in view at laptop widths (newuser14 K8), in a real Chromium: at 1024
 * px the table's wrapper scrolled sideways (876 > 710 px) and every Rotate / Disable / Revoke was
 * clipped; at 1280 px it fit until a Rotate confirmation opened, which widened the column and pushed
 * every row's Revoke and the confirmation's own Cancel out of view. Measured here: at 1024 and 1280 px,
 * with the confirmation closed and open, the table does not scroll inside its card, and every button
 * of the table lies inside the card's wrapper and the viewport.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

/**
 * What is out of view in the Keys table: the wrapper's sideways scroll (`scrollWidth - clientWidth`,
 * px) and each button not wholly inside both the wrapper's box and the viewport, as `key: text`.
 */
function outOfView(page: Page): Promise<{ scroll: number; clipped: string[] }> {
  return page.evaluate(`(() => {
    const wrap = document.querySelector("table.keys").closest(".table-wrap");
    const box = wrap.getBoundingClientRect();
    const clipped = [];
    for (const b of wrap.querySelectorAll("button")) {
      const r = b.getBoundingClientRect();
      const inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.left >= 0 && r.right <= window.innerWidth + 0.5;
      if (!inside) clipped.push(b.closest("tr").getAttribute("data-key") + ": " + b.textContent.trim());
    }
    return { scroll: wrap.scrollWidth - wrap.clientWidth, clipped };
  })()`) as Promise<{ scroll: number; clipped: string[] }>;
}

test("at 1024 and 1280 px every key's Rotate, Disable and Revoke, and an open confirmation's buttons, are in view without scrolling sideways", async () => {
  const post = (body: unknown) => fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.status);
  // keys as an operator has them: a tag, limits, a budget (its bar takes room), a long name, one disabled
  expect(await post({ name: "laptop" })).toBe(201);
  expect(await post({ name: "ci-runner-eu-west", tag: "ci", limits: { rpm: 60, tpm: 100_000, concurrency: 4, budgets: [{ window: "1d", usd: 5 }] } })).toBe(201);
  expect(await post({ name: "ops", scopes: ["admin"], limits: { budgets: [{ window: "7d", tokens: 1_000_000 }] } })).toBe(201);
  // a disabled key's state reads "disabled 11:30 AM": the widest pill
  expect((await fetch(`${suite.gw.url}/admin/api/keys/ops/disable`, { method: "POST" })).status).toBe(200);
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.goto(`${suite.gw.url}/dashboard/keys`);
    await page.locator('tr[data-key="ops"]').waitFor({ timeout: 10_000 });
    await w.settled();
    const seen: Record<string, { scroll: number; clipped: string[] }> = {};
    for (const width of [1024, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await w.settled();
      seen[`${width}`] = await outOfView(page);
      const row = page.locator('tr[data-key="ci-runner-eu-west"]');
      await row.getByRole("button", { name: "Rotate" }).click();
      await row.getByRole("button", { name: "Confirm rotate" }).waitFor({ timeout: 5_000 });
      await w.settled();
      await page.screenshot({ path: join(SHOTS, `keys-rotate-open-${width}.png`), fullPage: true });
      seen[`${width} rotate open`] = await outOfView(page);
      await row.getByRole("button", { name: "Cancel" }).click();
    }
    const none = { scroll: 0, clipped: [] };
    expect(seen).toEqual({ "1024": none, "1024 rotate open": none, "1280": none, "1280 rotate open": none });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
