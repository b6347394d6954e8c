/**
 * Found by dash46's tryout, fixed in src/dashboard/client/copy.ts (used by keys.tsx SecretOnce and components.tsx CopyButton) and src/dashboard/routes.ts (COOP): reached by a host name over plain HTTP, as the README's LAN steps
 * set it up (`http://gateway.lan:20128`, `server.allowed_hosts`), the dashboard's Copy buttons do
 * nothing and say nothing. A user would notice: after creating a key they press Copy under the secret
 * that "is shown this once", paste, and get whatever was on the clipboard before; the Setup page's
 * snippet Copy never says "Copied". Browsers give `navigator.clipboard` to secure contexts only
 * (HTTPS, localhost, 127.0.0.1); on such an origin it is undefined and `navigator.clipboard?.writeText`
 * is skipped silently.
 *
 * Expected: Copy copies another way (a selected text and `document.execCommand("copy")`), or says it
 * could not and selects the secret so it can be copied by hand — some feedback either way.
 * Actual: `isSecureContext` false, `navigator.clipboard` undefined; the secret box's and the snippet's
 * text are the same before and after Copy (no "Copied", no hint), no error shown. (The same test at
 * http://127.0.0.1: the snippet's Copy says "Copied", the secret's Copy still says nothing.) Likely
 * src/dashboard/client/pages/keys.tsx `SecretOnce` (Copy: `navigator.clipboard?.writeText(secret)`,
 * no feedback even when it works) and src/dashboard/client/components.tsx (the snippet's Copy button).
 * Seen too on such an origin: every page logs a console error "The Cross-Origin-Opener-Policy header
 * has been ignored, because the URL's origin was untrustworthy".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { CHROMIUM } from "../support/browser.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let browser: Browser;
beforeAll(async () => {
  gw = await startGateway(demoConfigYaml("{{FAKE}}") + "server:\n  allowed_hosts: [gateway.lan]\n");
  // the name resolves to the gateway's loopback address inside this browser only
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP gateway.lan 127.0.0.1"] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
}, 60_000);

test("at http://gateway.lan:PORT, Copy under a new key's secret and a Setup snippet's Copy give feedback", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const coopErrors: string[] = [];
  page.on("console", (m) => {
    if (/Cross-Origin-Opener-Policy/i.test(m.text())) coopErrors.push(m.text());
  });
  try {
    const origin = `http://gateway.lan:${gw.app.port}`;
    const opened = await page.goto(`${origin}/dashboard/keys`);
    expect(opened?.status()).toBe(200);
    expect(await page.evaluate("window.isSecureContext")).toBe(false);

    await page.locator("input[placeholder=laptop]").fill("lan");
    await page.getByRole("button", { name: "Create key" }).click();
    const box = page.locator('.secret-once[data-secret-for="lan"]');
    await box.waitFor({ timeout: 10_000 });
    const before = await box.innerText();
    await box.getByRole("button", { name: "Copy" }).click();
    await Bun.sleep(500);
    const secretFeedback = (await box.innerText()) !== before;
    // what it says is one of the two sentences, said through the live region too; never the secret
    const said = (await box.locator(".copy-hint").innerText()).trim();
    expect(["Copied", "Select the text and press Ctrl+C"]).toContain(said);
    expect(((await page.locator("#announcer").textContent()) ?? "").trim()).toBe(said);

    await page.goto(`${origin}/dashboard/setup`);
    const copy = page.getByRole("button", { name: "Copy" }).first();
    await copy.waitFor({ timeout: 10_000 });
    const snippetBefore = await page.locator("main").innerText();
    await copy.click();
    await Bun.sleep(300);
    const snippetFeedback = (await page.locator("main").innerText()) !== snippetBefore;

    expect({ secretFeedback, snippetFeedback }).toEqual({ secretFeedback: true, snippetFeedback: true });
    // Cross-Origin-Opener-Policy is sent where the browser applies it (loopback, HTTPS), not here
    expect(opened?.headers()["cross-origin-opener-policy"]).toBeUndefined();
    expect(coopErrors).toEqual([]);
    const local = await fetch(`${gw.url}/dashboard/keys`);
    await local.text();
    expect(local.headers.get("cross-origin-opener-policy")).toBe("same-origin");
  } finally {
    await context.close();
  }
}, 60_000);
