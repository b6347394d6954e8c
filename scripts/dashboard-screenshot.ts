/**
 * Writes docs/dashboard-accounts.png, the README's picture of the Accounts page: the demo gateway of
 * the browser tests (test/support/dashboard-demo.ts: four accounts, quota windows, a model cooling
 * down after a 429, a locked account) in Debian's Chromium. Run: `bun scripts/dashboard-screenshot.ts`.
 */
import { join } from "node:path";
import { launchBrowser, openPage } from "../test/support/browser.ts";
import { driveDemoState, startDemoGateway } from "../test/support/dashboard-demo.ts";
import { ROOT } from "../test/support/instance.ts";

const out = join(ROOT, "docs/dashboard-accounts.png");
const gw = await startDemoGateway();
const browser = await launchBrowser();
try {
  await driveDemoState(gw);
  const w = await openPage(browser, gw.url);
  await w.page.setViewportSize({ width: 1360, height: 860 });
  await w.page.goto(`${gw.url}/dashboard/accounts`);
  await w.page.locator('[data-account="claude-work"]').waitFor();
  await w.page.locator(".live-live").waitFor();
  await w.page.waitForTimeout(500);
  await w.page.screenshot({ path: out, fullPage: true });
  if (w.errors.length) throw new Error(`console errors: ${w.errors.join("; ")}`);
  console.log(out);
} finally {
  await browser.close();
  await gw.stop();
}
