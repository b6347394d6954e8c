/**
 * When Copy could not copy, the dashboard selects the text and says which keys to press: "Ctrl+C" was
 * said on a Mac too, where copying is ⌘C. A user would notice on macOS: the hint beside the secret's
 * Copy and a Setup snippet's Copy names a shortcut that does nothing there. Now ⌘C on macOS (User-Agent
 * Client Hints' platform "macOS", `navigator.platform` "MacIntel"), Ctrl+C elsewhere. Fixed in
 * src/dashboard/client/copy.ts (`copyByHand`), used by pages/keys.tsx SecretOnce and components.tsx
 * CopyButton. The copy is made to fail (the Clipboard API refuses, `execCommand("copy")` copies
 * nothing), as on a non-secure origin whose browser refuses both.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

/** Copy fails both ways; on `mac`, the page's platform reads as a Mac's. */
const setUp = (mac: boolean) => `(() => {
  if (navigator.clipboard) navigator.clipboard.writeText = () => Promise.reject(new Error("refused"));
  document.execCommand = () => false;
  if (${mac}) {
    Object.defineProperty(Navigator.prototype, "platform", { get: () => "MacIntel", configurable: true });
    if ("userAgentData" in navigator) Object.defineProperty(Navigator.prototype, "userAgentData", { get: () => ({ platform: "macOS", mobile: false, brands: [] }), configurable: true });
  }
})()`;

for (const [mac, keys] of [
  [true, "⌘C"],
  [false, "Ctrl+C"],
] as const) {
  test(`Copy that copied nothing says "Select the text and press ${keys}" (${mac ? "macOS" : "Linux"})`, async () => {
    const w = await suite.open();
    const page = w.page;
    try {
      await page.addInitScript(setUp(mac));
      const hint = `Select the text and press ${keys}`;
      await page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.settled();
      await page.locator("#key-name").fill(mac ? "mac" : "linux");
      await page.getByRole("button", { name: "Create key" }).click();
      const box = page.locator(".secret-once");
      await box.waitFor({ timeout: 10_000 });
      await box.getByRole("button", { name: "Copy" }).click();
      await box.locator(".copy-hint").waitFor({ timeout: 5_000 });
      expect((await box.locator(".copy-hint").innerText()).trim()).toBe(hint);
      expect(((await page.locator("#announcer").textContent()) ?? "").trim()).toBe(hint);

      await page.goto(`${suite.gw.url}/dashboard/setup`);
      const copy = page.getByRole("button", { name: "Copy" }).first();
      await copy.waitFor({ timeout: 10_000 });
      await copy.click();
      const snippetHint = page.locator(".copy-hint").first();
      await snippetHint.waitFor({ timeout: 5_000 });
      expect((await snippetHint.innerText()).trim()).toBe(hint);
    } finally {
      await w.close();
    }
  }, 60_000);
}
