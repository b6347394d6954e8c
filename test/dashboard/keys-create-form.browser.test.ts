/**
 * The Keys page as a team lead uses it (try18's tryout), in a real Chromium:
 * - D1: a limit that is not a plain whole number (`2.5`, `0x10`, `1e3`, Concurrent `0.5`) is refused in
 *   the field's words before any request; the form floored it into a limit nobody chose (2, 16, 1,000
 *   rpm) and called `0.5` "got 0". The admin API refuses `2.5` with a 400 naming the field.
 * - D2: a budget of `-1` and of `0` are refused with one wording ("must be greater than 0"); `-1` read
 *   "must be at least 0", which 0 is not.
 * - D8: a double-click on "Create key" sends one create; the second went out while the first was in
 *   flight and its red "already exists" showed under the new secret.
 * - D4: every key shows its secret's prefix (`sy-mHYRP…`), "—" when it is not known; none was shown.
 * - D5: at 1280 px a short tag stays whole (`intern` was drawn "inter" / "n"), and a USD budget's use
 *   and amount have one precision (`$0.0000 of $0.5000`, not `$0.00 of $0.5000`).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { openPage, SHOTS, type WatchedPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const LEAD = "sy-config-lead-secret-000000000001";
const YAML = `${demoConfigYaml("{{FAKE}}")}keys:
  - { name: lead, key: ${LEAD}, scopes: [admin] }
  - { name: kiosk, key: short-secret-1 }
`;
const suite = withGatewayAndBrowser(YAML);

const post = (body: unknown) => fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const listed = async () => ((await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string; prefix?: string; limits?: { rpm?: number; concurrency?: number } }> }).keys;

/** The Keys page with its create form, counting the creates (`POST /admin/api/keys`) the page sends. */
async function keysPage(w: WatchedPage) {
  const creates: string[] = [];
  w.page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/admin/api/keys") creates.push(r.postData() ?? "");
  });
  await w.page.goto(`${suite.gw.url}/dashboard/keys`);
  const card = w.page.locator(".card", { hasText: "Create a key" });
  const form = card.locator("form");
  await form.waitFor({ timeout: 10_000 });
  await w.page.locator('tr[data-key="lead"]').waitFor({ timeout: 10_000 });
  return { card, form, creates };
}

describe("the create form's limits", () => {
  test("a limit that is not a plain whole number is refused in the field's words, and no request is sent (D1)", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      const { card, form, creates } = await keysPage(w);
      const refused = async (id: string, value: string, expected: string) => {
        for (const f of ["key-rpm", "key-tpm", "key-conc", "key-budget"]) await form.locator(`#${f}`).fill(f === id ? value : "");
        await form.locator("#key-name").fill("not-made");
        await form.getByRole("button", { name: "Create key" }).click();
        await card.locator(".error-line", { hasText: expected }).waitFor({ timeout: 10_000 });
        return card.locator(".error-line").innerText();
      };
      expect(await refused("key-rpm", "2.5", "2.5")).toBe("Requests/min must be a whole number; got 2.5");
      expect(await refused("key-rpm", "0x10", "0x10")).toBe("Requests/min must be a whole number; got 0x10");
      expect(await refused("key-tpm", "1e3", "1e3")).toBe("Tokens/min must be a whole number; got 1e3");
      expect(await refused("key-conc", "0.5", "0.5")).toBe("Concurrent must be a whole number; got 0.5");
      expect(await refused("key-budget", "0x10", "0x10")).toBe("Budget (USD) must be an amount in dollars such as 2.50; got 0x10");
      expect(creates).toEqual([]);
      expect((await listed()).map((k) => k.name)).not.toContain("not-made");
      // a plain whole number, spaces around it, is taken as it is
      await form.locator("#key-budget").fill("");
      await form.locator("#key-rpm").fill(" 7 ");
      await form.locator("#key-conc").fill("3");
      await form.locator("#key-name").fill("plain");
      await form.getByRole("button", { name: "Create key" }).click();
      await card.locator('.secret-once[data-secret-for="plain"]').waitFor({ timeout: 10_000 });
      expect((await listed()).find((k) => k.name === "plain")?.limits).toEqual({ rpm: 7, concurrency: 3 });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);

  test("a budget of -1 and of 0 are refused in one wording: must be greater than 0 (D2)", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      const { card, form } = await keysPage(w);
      for (const amount of ["-1", "0"]) {
        await form.locator("#key-budget").fill(amount);
        await form.locator("#key-name").fill("no-budget");
        await form.getByRole("button", { name: "Create key" }).click();
        await card.locator(".error-line", { hasText: `got ${amount}` }).waitFor({ timeout: 10_000 });
        expect(await card.locator(".error-line").innerText()).toBe(`Budget (USD) must be greater than 0; got ${amount}`);
      }
    } finally {
      await w.close();
    }
  }, 60_000);

  test("the admin API refuses a limit of 2.5 and a budget of -1 with a 400 naming the field, creating nothing (D1, D2)", async () => {
    const refusal = async (limits: unknown) => {
      const r = await post({ name: "api-refused", limits });
      return { status: r.status, error: ((await r.json()) as { error: { message: string; param?: string } }).error };
    };
    expect(await refusal({ rpm: 2.5 })).toMatchObject({ status: 400, error: { message: "limits.rpm: rpm must be a whole number; got 2.5", param: "limits.rpm" } });
    expect(await refusal({ concurrency: 0.5 })).toMatchObject({ status: 400, error: { message: "limits.concurrency: concurrency must be a whole number; got 0.5", param: "limits.concurrency" } });
    expect(await refusal({ budgets: [{ window: "1d", usd: -1 }] })).toMatchObject({ status: 400, error: { message: "limits.budgets[0].usd: usd must be greater than 0; got -1", param: "limits.budgets[0].usd" } });
    expect(await refusal({ budgets: [{ window: "1d", usd: 0 }] })).toMatchObject({ status: 400, error: { message: "limits.budgets[0].usd: usd must be greater than 0; got 0", param: "limits.budgets[0].usd" } });
    expect((await listed()).map((k) => k.name)).not.toContain("api-refused");
  });
});

test("a double-click on Create key sends one create: the secret is shown and no error under it (D8)", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    const { card, form, creates } = await keysPage(w);
    await form.locator("#key-name").fill("dbl");
    await form.getByRole("button", { name: "Create key" }).dblclick();
    await card.locator('.secret-once[data-secret-for="dbl"]').waitFor({ timeout: 10_000 });
    await w.page.locator('tr[data-key="dbl"]').waitFor({ timeout: 10_000 });
    await w.settled();
    expect(creates.length).toBe(1);
    expect(await card.locator(".error-line").count()).toBe(0);
    expect(w.failed).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("every key shows its secret's prefix, '—' when it is not known; the secret itself is never on the page (D4)", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    const { card, form } = await keysPage(w);
    await form.locator("#key-name").fill("dev");
    await form.getByRole("button", { name: "Create key" }).click();
    const shown = card.locator('.secret-once[data-secret-for="dev"] .secret-value');
    await shown.waitFor({ timeout: 10_000 });
    const secret = await shown.innerText();
    await card.getByRole("button", { name: "Done, hide it" }).click();
    const prefix = (name: string) => w.page.locator(`tr[data-key="${name}"] .key-prefix`).innerText();
    await w.page.locator('tr[data-key="dev"] .key-prefix', { hasText: secret.slice(0, 8) }).waitFor({ timeout: 10_000 });
    expect(await prefix("dev")).toBe(`${secret.slice(0, 8)}…`);
    // a config key's from its secret; a secret too short to show any of it: "—"
    expect(await prefix("lead")).toBe("sy-confi…");
    expect(await prefix("kiosk")).toBe("—");
    const text = await w.page.locator("main").innerText();
    expect(text).not.toContain(secret.slice(0, 9));
    expect(text).not.toContain(LEAD.slice(0, 9));
  } finally {
    await w.close();
  }
}, 60_000);

test("at 1280 px a short tag stays whole and a USD budget's use and amount have one precision (D5)", async () => {
  // the tryout's five developer keys: limits, budgets, tags
  for (const [name, tag, usd] of [["alice", "", 0.5], ["bob", "backend", 2], ["carol", "", 1], ["dave", "ml", 5], ["erin", "intern", 0.5]] as const) {
    expect((await post({ name, ...(tag ? { tag } : {}), limits: { rpm: 30, tpm: 200_000, concurrency: 2, budgets: [{ window: "1d", usd }] } })).status).toBe(201);
  }
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    const erin = w.page.locator('tr[data-key="erin"]');
    await erin.locator(".budget").waitFor({ timeout: 10_000 });
    await w.settled();
    await w.page.screenshot({ path: join(SHOTS, "keys-tag-budget-1280.png"), fullPage: true });
    // the lines the tag's text is drawn on (a Range's boxes: one per line)
    const tagLines = await erin.locator('td[data-label="Tag"]').evaluate((td: any) => {
      const r = td.ownerDocument.createRange();
      r.selectNodeContents(td);
      return new Set([...r.getClientRects()].map((b: { top: number }) => Math.round(b.top))).size;
    });
    expect({ tag: await erin.locator('td[data-label="Tag"]').innerText(), lines: tagLines }).toEqual({ tag: "intern", lines: 1 });
    expect(await erin.locator(".budget .quota-head").innerText()).toContain("$0.0000 of $0.5000");
    expect(await w.page.locator('tr[data-key="dave"] .budget .quota-head').innerText()).toContain("$0.00 of $5.00");
  } finally {
    await w.close();
  }
}, 60_000);
