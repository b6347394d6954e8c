/**
 * A dashboard left open while the gateway stops (newuser14 K10), in a real Chromium: the live event
 * stream ends at once with `event: shutdown` (it is not a request in flight, so the stop does not wait
 * out the grace period for it), and the header's badge stops saying "Live".
 */
import { expect, test } from "bun:test";
import { openPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser();

test("a stop with a dashboard open finishes without the grace period, and the badge reads 'Gateway stopped: reconnecting…'", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/`);
    const badge = w.page.locator(".live");
    await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
    expect(await badge.innerText()).toBe("Live");
    // 60 s of grace: before the fix the open page's event stream held the stop for all of it, and this
    // test's 25 s timeout ran out first.
    await suite.gw.app.shutdown(60_000);
    await w.page.locator(".live-stopped").waitFor({ timeout: 10_000 });
    expect(await badge.innerText()).toBe("Gateway stopped: reconnecting…");
  } finally {
    await w.close();
  }
}, 25_000);
