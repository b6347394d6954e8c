/**
 * The one-time secret box by keyboard, for a rotated key as for a created one, and its "Done, hide it".
 * A user would notice (keyboard or screen reader):
 * - Keys → Rotate → Confirm rotate showed the new secret's box above the list with no focus move and
 *   nothing said (#announcer empty), while a created key's box takes the focus on its Copy and is
 *   announced (new-secret-keyboard).
 * - "Done, hide it" removed the box with the focused button in it: focus fell to `<body>`, and Tab
 *   started again from the top of the page. It now goes back where the user came from: the Create
 *   form's Name field for a created key, the row's Rotate button for a rotated one.
 * The secret itself is never announced. Fixed in src/dashboard/client/pages/keys.tsx (RotateButton's
 * announcement, SecretOnce `focus` and `hide`, focusRotatedRow).
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"));

/** What has the focus: its tag, id, text and the key of the row it is in. */
const FOCUSED = `(() => { const a = document.activeElement; return { tag: a.tagName.toLowerCase(), id: a.id, text: (a.textContent || "").trim(), row: a.closest("tr[data-key]")?.dataset.key ?? null, inBox: !!a.closest(".secret-once") }; })()`;

test("created key: Done, hide it puts the focus back in the Name field; rotated key: its box takes the focus, is announced, and Done goes back to the row's Rotate", async () => {
  const w = await suite.open();
  const page = w.page;
  try {
    await page.goto(`${suite.gw.url}/dashboard/keys`);
    await w.settled();
    await page.locator("#key-name").focus();
    await page.keyboard.type("rot");
    await page.keyboard.press("Enter");
    const created = page.locator('.secret-once[data-secret-for="rot"]');
    await created.waitFor({ timeout: 10_000 });
    const createdSecret = (await created.locator(".secret-value").innerText()).trim();
    await page.waitForFunction(`document.activeElement?.closest(".secret-once") !== null`, undefined, { timeout: 5_000 });
    // Tab from Copy to Done, Enter: the box goes, focus back in the Name field
    await page.keyboard.press("Tab");
    expect(((await page.evaluate(FOCUSED)) as { text: string }).text).toBe("Done, hide it");
    await page.keyboard.press("Enter");
    await created.waitFor({ state: "detached", timeout: 5_000 });
    await Bun.sleep(200);
    expect(await page.evaluate(FOCUSED)).toEqual({ tag: "input", id: "key-name", text: "", row: null, inBox: false });

    // Rotate by keyboard: Rotate, the grace select focused, Tab to Confirm rotate, Enter
    const row = page.locator('tr[data-key="rot"]');
    await row.waitFor({ timeout: 10_000 });
    await row.getByRole("button", { name: "Rotate", exact: true }).focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    expect(((await page.evaluate(FOCUSED)) as { text: string }).text).toBe("Confirm rotate");
    await page.keyboard.press("Enter");
    const rotated = page.locator('.secret-once[data-secret-for="rot"]');
    await rotated.waitFor({ timeout: 10_000 });
    await Bun.sleep(500);
    const secret = (await rotated.locator(".secret-value").innerText()).trim();
    expect(secret).not.toBe(createdSecret);
    // the focus is on the box's Copy, and the page says why (never the secret)
    expect(await page.evaluate(FOCUSED)).toEqual({ tag: "button", id: "", text: "Copy", row: null, inBox: true });
    const said = ((await page.locator("#announcer").textContent()) ?? "").trim();
    expect(said).toBe("Key rot rotated. Its new secret is shown once above the list of keys: copy it now.");
    expect(said).not.toContain(secret);

    // Done: back on the row's Rotate button, not <body>
    await page.keyboard.press("Tab");
    expect(((await page.evaluate(FOCUSED)) as { text: string }).text).toBe("Done, hide it");
    await page.keyboard.press("Enter");
    await rotated.waitFor({ state: "detached", timeout: 5_000 });
    await Bun.sleep(200);
    expect(await page.evaluate(FOCUSED)).toEqual({ tag: "button", id: "", text: "Rotate", row: "rot", inBox: false });
    // and the secret is nowhere on the page any more
    expect(await page.locator("body").innerText()).not.toContain(secret);
  } finally {
    await w.close();
  }
}, 90_000);
