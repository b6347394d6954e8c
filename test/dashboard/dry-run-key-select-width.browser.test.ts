/**
 * Found by dash46's tryout, fixed in src/dashboard/client/style.css (max-width on fields): on a phone-sized window (390×844) the Routing page scrolls
 * sideways once a client key has a long name or tag. A user would notice: the dry run's "Client key"
 * select sticks out of its card past the right edge of the screen, and the whole page (header, cards)
 * can be dragged sideways; the select's right end, with its arrow, is off screen.
 *
 * The select is as wide as its longest option ("NAME (tag TAG)"); nothing caps it at its card's
 * width. Key names may be 64 characters (README, `keys create`).
 * Expected: the page is no wider than the window (document scrollWidth 390) and the select ends inside
 * its card. Actual: scrollWidth 519 with this one key (527 in a manual run with twelve such keys, the select
 * spanning x 27–527 while its card ends at about 376). Likely
 * src/dashboard/client/pages/routing.tsx (`#dr-key`) and src/dashboard/client/style.css (no
 * `max-width: 100%` on the field's select).
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"), {
  async ready(gw) {
    const made = await fetch(`${gw.url}/admin/api/keys`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "a-rather-long-key-name-for-the-laptop-0", tag: "team-platform-eu-west" }),
    });
    if (made.status !== 201) throw new Error(`key: ${made.status} ${await made.text()}`);
  },
});

test("at 390 px, the Routing page's Client key select stays inside its card and the page does not scroll sideways", async () => {
  const w = await suite.open();
  const page = w.page;
  try {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    await page.locator("#dr-key option", { hasText: "a-rather-long-key-name-for-the-laptop-0" }).waitFor({ state: "attached", timeout: 10_000 });
    await w.settled();
    const m = (await page.evaluate(`(() => {
      const s = document.getElementById("dr-key").getBoundingClientRect();
      const card = document.getElementById("dr-key").closest(".card").getBoundingClientRect();
      return { pageWidth: document.documentElement.scrollWidth, selectInsideCard: s.right <= card.right, select: [Math.round(s.left), Math.round(s.right)], cardRight: Math.round(card.right) };
    })()`)) as { pageWidth: number; selectInsideCard: boolean };
    expect({ pageWidth: m.pageWidth, selectInsideCard: m.selectInsideCard }).toEqual({ pageWidth: 390, selectInsideCard: true });
  } finally {
    await w.close();
  }
}, 60_000);
