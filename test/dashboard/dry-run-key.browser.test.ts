/**
 * The Routing page's dry run as a client key, in a real browser (SPEC 9.4, 9.3; newuser13's tryout,
 * J9): the form's Client key select lists the active keys by name and tag (a config-file key and one
 * stored through the admin API, never a secret), and routing as a key whose tag a combo's `key_tag`
 * predicate asks for puts that target first, as `switchyard route --header` and a real request do.
 * A weighted combo's answer says that its order is one random draw. Screenshots go to
 * test-results/dashboard/.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";
import { fakeProviders } from "../support/configs.ts";

const FILE_SECRET = "sy-dryrun-file-key-000000000001";
const YAML = `
${fakeProviders([["anth", "anthropic"], ["oai", "openai"]])}keys:
  - { name: laptop, key: ${FILE_SECRET} }
combos:
  - name: tagged
    targets:
      - model: anth/claude-test
        when: { expr: { fact: key_tag, op: eq, value: ci } }
      - model: oai/gpt-test
  - name: spread
    strategy: weighted
    targets:
      - { model: anth/claude-test, weight: 3 }
      - { model: oai/gpt-test, weight: 1 }
`;

let storedSecret = "";

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    const res = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ci", tag: "ci" }) });
    expect(res.status).toBe(201);
    storedSecret = ((await res.json()) as { secret: string }).secret;
    expect(storedSecret.length).toBeGreaterThan(10);
  },
});

test("the dry-run form routes as a client key chosen by name: the key's tag meets the combo's key_tag predicate, and no secret is on the page", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    const select = page.locator("#dr-key");
    await select.locator("option", { hasText: "ci (tag ci)" }).waitFor({ state: "attached", timeout: 10_000 });
    expect(await select.locator("option").allInnerTexts()).toEqual(["none (as from loopback)", "ci (tag ci)", "laptop (no tag)"]);

    await page.locator("#dr-model").fill("tagged");
    await page.getByRole("button", { name: "Route it" }).click();
    const plan = page.locator(".plan");
    await plan.getByText('predicate: key_tag (none) eq "ci" → false').waitFor({ timeout: 10_000 });

    await select.selectOption("ci");
    await page.getByRole("button", { name: "Route it" }).click();
    await plan.getByText("Routed as client key ci.").waitFor({ timeout: 10_000 });
    const text = await plan.innerText();
    expect(text).not.toContain("→ false");
    expect(text).toContain('predicate: key_tag ("ci") eq "ci" → true');
    expect(text).toContain("1anth/claude-test on anth-1\n2oai/gpt-test on oai-1");
    const html = await page.content();
    expect(html).not.toContain(storedSecret);
    expect(html).not.toContain(FILE_SECRET);
    expect(html).not.toContain(storedSecret.slice(0, 12));
    await page.screenshot({ path: join(SHOTS, "routing-dry-run-as-key.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("a weighted combo's dry-run answer says its order is one random draw, drawn again each time it is routed again", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.goto(`${suite.gw.url}/dashboard/routing`);
    await page.locator("#dr-model").fill("spread");
    await page.getByRole("button", { name: "Route it" }).click();
    const note = page.locator('[data-note="weighted-draw"]');
    await note.waitFor({ timeout: 10_000 });
    expect(await note.innerText()).toBe(
      "A weighted combo's order is one random draw: each request draws again, and so does this answer each time it is routed again, so the order on screen may change with no other cause.",
    );
    // A fallback combo's answer says nothing of a draw.
    await page.locator("#dr-model").fill("tagged");
    await page.getByRole("button", { name: "Route it" }).click();
    await page.locator(".plan").getByText('predicate: key_tag (none) eq "ci" → false').waitFor({ timeout: 10_000 });
    expect(await note.count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
