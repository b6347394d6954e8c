/**
 * Found by dash46's tryout, fixed in src/dashboard/client/live.ts: the live event stream gives up for good after one refused
 * connection. A user would notice: the header's badge reads "Reconnecting…" (or "Gateway stopped:
 * reconnecting…" after a restart) forever once `GET /admin/api/events` was answered once with an
 * error status (here 503 with the store's own body, as the admin API answers while a shared
 * PostgreSQL is away; a proxy in front of the gateway answers 502/503 while it restarts) — requests
 * finishing no longer appear on the Calls page until the page is reloaded, though the gateway answers
 * again.
 *
 * Expected: once the events answer 200 again, the page reconnects by itself (badge "Live" within
 * ~15 s) and a request finishing afterwards appears on Calls without a reload.
 * Actual: the browser's EventSource is CLOSED after a non-200 answer (HTML spec: "fail the
 * connection", no retry); src/dashboard/client/live.ts's error handler only looks for a 401 on
 * /admin/api/settings and otherwise never opens a new EventSource: the badge stays "Reconnecting…"
 * (15 s here). Seen in a manual run: after a gateway restart on the same port whose first events
 * answer was such a 503, "Gateway stopped: reconnecting…" 8 s after the answers were 200 again, and a
 * request sent then did not appear on Calls (1 row before and 3 s after). A plain restart (no refused
 * answer) reconnects in ~2.3 s.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { storeAway } from "../support/browser.ts";
import { postChatHi } from "../support/gateway.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

test("after /admin/api/events answered 503 once, the page reconnects by itself and shows a finished request without a reload", async () => {
  const w = await suite.open();
  const page = w.page;
  try {
    const outage = await storeAway(page, /\/admin\/api\/events/);
    await page.goto(`${suite.gw.url}/dashboard/calls`);
    await page.locator(".live-reconnecting").waitFor({ timeout: 10_000 });
    expect(await page.locator("main tbody tr").count()).toBe(0);

    outage.end(); // the gateway answers again
    await page.locator(".live-live").waitFor({ timeout: 15_000 }).catch(() => {});
    expect(await page.locator(".live").innerText()).toBe("Live");

    const sent = await postChatHi(suite.gw.url, "demo-chat/gpt-demo");
    expect(sent.status).toBe(200);
    await sent.text();
    await page.locator("main tbody tr").first().waitFor({ timeout: 5_000 }).catch(() => {});
    expect(await page.locator("main tbody tr").count()).toBe(1);
  } finally {
    await w.close();
  }
}, 60_000);
