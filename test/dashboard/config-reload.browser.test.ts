/**
 * The config file's reloads on the dashboard's Routing page, in a real Chromium (SPEC 9.4, 9.3
 * `POST /admin/api/config/reload`, 2.3): the page shows what a reload answered, in place, without a
 * page reload: what changed, each changed setting that waits for a restart with the server's sentence,
 * or why a file with errors was refused (the old configuration stays), and that the refusal is over once
 * the file is put back as it is in force; for a reload triggered
 * elsewhere (here: the file changed, which the gateway re-reads by itself) through the
 * `config_reloaded` live event, and for its own Reload config file button. A remote browser signed in
 * with an admin key (a session: the POST carries the page's CSRF token), under the page's CSP (no
 * console error but the refused reload's 400), and no secret of the file on the page. Before, the
 * dashboard showed nothing of a reload's answer (`restartNeeded`, errors) and had no way to reload.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { SHOTS } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const ADMIN = "sy-test-dashreload-admin-000001";
const CI = "sy-test-dashreload-ci-secret-0001";

/** The demo's config with an admin key (keys required), plus `extra` at the end. */
const yamlOf = (fakeUrl: string, extra = "") => `${demoConfigYaml(fakeUrl)}server: { require_api_key: true }
keys:
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
${extra}`;

const suite = withGatewayAndBrowser(yamlOf("{{FAKE}}"));

test("a reload (the file changed, or the Reload button) shows what changed, what waits for a restart and why a broken file was refused, without a page reload", async () => {
  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/routing" } });
  const page = w.page;
  try {
    await page.locator('tr[data-alias="fast"]').waitFor({ timeout: 10_000 });
    // Before any reload the card names the file this instance reads.
    const named = page.locator('[data-reload="file"] .mono');
    await named.waitFor({ timeout: 10_000 });
    expect(await named.textContent()).toBe(suite.gw.configPath);
    await page.evaluate("window.__samePage = 1");

    // The file changes (an alias and a key added, the port changed: a setting that only a restart
    // applies); the gateway re-reads it by itself, and the page shows what that reload answered.
    writeFileSync(
      suite.gw.configPath,
      yamlOf(suite.gw.fake.url, `  - { name: ci, key: ${CI} }\n`)
        .replace("aliases:\n  fast: demo-chat/gpt-demo\n", "aliases:\n  fast: demo-chat/gpt-demo\n  smart: demo-chat/gpt-demo\n")
        .replace("server: { require_api_key: true }", "server: { require_api_key: true, port: 1 }"),
    );
    const changes = page.locator('[data-reload="changes"]');
    await changes.filter({ hasText: "alias smart added" }).waitFor({ timeout: 15_000 });
    let said = await changes.innerText();
    expect(said).toStartWith(`Reloaded ${suite.gw.configPath} at `);
    expect(said).toEndWith(": alias smart added; key ci added; server port changed.");
    const restart = page.locator('[data-reload="restart-needed"]');
    // (the test's gateway was started with --port 0, which wins over the file's port at a restart too)
    const restartText = /^Restart needed\.\s+server\.port is now 1 in the file, but this instance was started with --port, which wins over the file; it listens on http:\/\/127\.0\.0\.1:\d+$/;
    expect(await restart.innerText()).toMatch(restartText);
    // the new alias reaches the list through the live events, on the same page
    await page.locator('tr[data-alias="smart"]').waitFor({ timeout: 10_000 });

    // The button re-reads the file now: nothing changed since, and the port still waits for a restart.
    const reload = page.getByRole("button", { name: "Reload config file" });
    await reload.click();
    await changes.filter({ hasText: "nothing changed" }).waitFor({ timeout: 10_000 });
    said = await changes.innerText();
    // …and what the re-read that took the edit changed, and when (it read "nothing changed" alone, as if the edit were missed)
    expect(said).toMatch(/: nothing changed since the file was last read \(at [^:]+:\d\d:\d\d[^:]*: alias smart added; key ci added; server port changed\)\.$/);
    expect(await restart.innerText()).toMatch(restartText);
    await page.screenshot({ path: join(SHOTS, "config-reload-accepted.png"), fullPage: true });

    // A file with an error is refused, by the gateway's own re-read and by the button: the page says
    // why, and the running configuration stays.
    const running = readFileSync(suite.gw.configPath, "utf8");
    writeFileSync(suite.gw.configPath, yamlOf(suite.gw.fake.url).replace("kind: openai-compatible", "kind: openai-compatibel"));
    const rejected = page.locator('[data-reload="rejected"]');
    await rejected.waitFor({ timeout: 15_000 });
    const why = /^Config reload rejected; the previous config stays in force: providers\[1\]\.kind \(line \d+\): /;
    expect(await rejected.innerText()).toMatch(why);
    await reload.click();
    for (const end = Date.now() + 10_000; !w.failed.some((f) => f.endsWith("/admin/api/config/reload")) && Date.now() < end; ) await Bun.sleep(50);
    await w.settled();
    expect(await rejected.innerText()).toMatch(why);
    expect(await page.locator('[data-reload="changes"]').count()).toBe(0);
    expect(await page.locator('tr[data-alias="smart"]').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, "config-reload-rejected.png"), fullPage: true });

    // The edit undone (the file exactly as it is in force again): the card no longer says "rejected"
    // (try19 D2: the gateway ignored the file as unchanged, and the red refusal stayed).
    writeFileSync(suite.gw.configPath, running);
    await changes.filter({ hasText: "nothing changed" }).waitFor({ timeout: 30_000 });
    expect(await changes.innerText()).toMatch(/: nothing changed since the file was last read \(at [^:]+:\d\d:\d\d[^:]*: alias smart added; key ci added; server port changed\)\.$/);
    expect(await page.locator('[data-reload="rejected"]').count()).toBe(0);

    expect(await page.evaluate("window.__samePage")).toBe(1); // never reloaded
    const text = await page.locator("body").innerText();
    expect(text).not.toContain(CI);
    expect(text).not.toContain(ADMIN);
    expect(w.foreign).toEqual([]);
    expect(w.failed.map((f) => f.replace(suite.gw.url, ""))).toEqual(["400 /admin/api/config/reload"]);
    expect(w.errors.filter((e) => !e.includes("status of 400"))).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
