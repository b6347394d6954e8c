/**
 * Found by dash46's tryout, fixed in src/dashboard/client/pages/keys.tsx (CreateKey announces, SecretOnce focus): creating a key by keyboard, the secret shown once is easy to
 * miss. A user would notice (keyboard or screen reader): typing a name and pressing Enter leaves focus
 * in the Name field, which now sits below the new "Key NAME created. Copy it now: it is shown this
 * once" box; nothing is announced, and Tab moves on to Tag, Requests/min … away from Copy and "Done,
 * hide it" (reached only with Shift+Tab). Disable/Enable on the same page are announced ("Key ci
 * disabled."), so the live region exists.
 *
 * Expected: after Enter, focus is in the secret box (its Copy button, or the secret selected), or the
 * dashboard's live region (#announcer) says the key was created and its secret is shown once.
 * Actual: focus on the Name input (placeholder "laptop"), #announcer empty, the box has no role.
 * Likely src/dashboard/client/pages/keys.tsx `CreateKey` / `SecretOnce` (no focus move, no
 * `announce(...)`), as pages/keys.tsx does for Disable.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

test("Enter in the Create a key form: the one-time secret takes focus or is announced", async () => {
  const w = await suite.open();
  const page = w.page;
  try {
    await page.goto(`${suite.gw.url}/dashboard/keys`);
    await w.settled();
    await page.locator("input[placeholder=laptop]").focus();
    await page.keyboard.type("kb");
    await page.keyboard.press("Enter");
    const box = page.locator('.secret-once[data-secret-for="kb"]');
    await box.waitFor({ timeout: 10_000 });
    await Bun.sleep(300);
    const focusInBox = (await page.evaluate(`!!document.activeElement.closest(".secret-once")`)) as boolean;
    const announced = ((await page.locator("#announcer").textContent()) ?? "").trim();
    expect(focusInBox || /created/i.test(announced)).toBe(true);
  } finally {
    await w.close();
  }
}, 60_000);
