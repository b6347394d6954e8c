/**
 * A key's row on the Keys page says what the page cannot otherwise know, in a real Chromium:
 * - when the key was rotated, and until when its old secret works (try18 D16): a Rotate whose answer
 *   never reached the page (the network lost it, a reload, a closed tab) left the key rotated, the old
 *   secret refused, and after a reload nothing on the page said so; now the row reads "rotated 01:52 AM"
 *   (local time, as "disabled …" reads) and "old secret works until 02:02 AM";
 * - how many of the key's requests its USD budget could not count (try18 D17): requests served by a
 *   model without a price (here demo-chat/gpt-unpriced: the demo prices its own three models) left the bar at $0.00 with only a
 *   log line saying why; now the row reads "3 requests used models without a price: only their priced
 *   part is counted" (until 2026-12-08 "3 requests of unpriced models not counted", wrong for a request
 *   whose failed attempt at a priced model the budget counted), pointing at settings.pricing, and the
 *   admin API's budget use has `unpriced: 3`.
 */
import { expect, test } from "bun:test";
import { keysPageSuite } from "../support/keys-page-suite.ts";
import { until } from "../support/until.ts";

const ADMIN = "sy-test-row-notes-admin-00001";
const { suite, chat, createKey, listed } = keysPageSuite(ADMIN);
const ask = async (secret: string) => (await chat(secret)).status;
/** A request to a model the demo prices not (its fake upstream answers any model name). */
const askUnpriced = async (secret: string) => (await chat(secret, "demo-chat/gpt-unpriced")).status;

test("a Rotate whose answer the page never got: after a reload the row says when the key was rotated and until when the old secret works", async () => {
  const first = await createKey("ci");
  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/keys" } });
  try {
    // the gateway rotates the key; its answer (the new secret) is lost on the way back
    let rotatedOnServer = false;
    await w.page.route("**/admin/api/keys/ci/rotate", async (route) => {
      await route.fetch();
      rotatedOnServer = true;
      await route.abort("connectionreset");
    });
    const row = w.page.locator('tr[data-key="ci"]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.locator('td[data-label="State"]').innerText()).not.toContain("rotated");
    await row.getByRole("button", { name: "Rotate" }).click();
    await row.locator("select").selectOption("10m");
    await row.getByRole("button", { name: "Confirm rotate" }).click();
    await until(() => rotatedOnServer, 30_000, "the rotation to reach the gateway");
    await w.page.unroute("**/admin/api/keys/ci/rotate");
    expect(await w.page.locator(".secret-once").count()).toBe(0); // the new secret never reached the page

    await w.page.reload();
    const state = w.page.locator('tr[data-key="ci"] td[data-label="State"]');
    await state.locator(".key-rotated").waitFor({ timeout: 30_000 });
    const key = await listed("ci");
    expect(key.previousUntil).toBe(key.rotatedAt + 600_000);
    // the times as the page writes them (local time, today's without a date: a grace that ends after
    // midnight has its date, so a run at 23:50 reads "Dec 7 12:00 AM")
    const [at, until10] = await w.page.evaluate(
      ([a, b]) =>
        [a, b].map((ms) => {
          const d = new Date(ms);
          const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
          return d.toDateString() === new Date().toDateString() ? hm : `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${hm}`;
        }),
      [key.rotatedAt as number, key.previousUntil as number],
    );
    expect((await state.innerText()).replace(/\s+/g, " ").trim()).toBe(`active rotated ${at} old secret works until ${until10}`);
    // the old secret still works during its grace (the key was rotated, not lost)
    expect(await ask(first)).toBe(200);
  } finally {
    await w.close();
  }
}, 90_000);

test("a USD budget says how many requests used models without a price, of which it counted only the priced part, in the admin API and on the row, pointing at settings.pricing", async () => {
  const spend = await createKey("spend", { budgets: [{ window: "1d", usd: 5 }] });
  const tokens = await createKey("tokens", { budgets: [{ window: "1d", tokens: 100_000 }] });
  expect([await askUnpriced(spend), await askUnpriced(spend), await askUnpriced(spend), await askUnpriced(tokens)]).toEqual([200, 200, 200, 200]);
  suite.gw.app.settle();
  await until(async () => (await listed("spend")).use.budgets[0].unpriced === 3, 30_000, "the budget to count 3 unpriced requests");
  expect((await listed("spend")).use.budgets[0]).toMatchObject({ budget: { window: "1d", usd: 5 }, used: 0, unpriced: 3 });
  // a token budget counts those requests' tokens: nothing left out, nothing said
  expect((await listed("tokens")).use.budgets[0].unpriced).toBeUndefined();

  const w = await suite.open({ signIn: { key: ADMIN, path: "/dashboard/keys" } });
  try {
    const note = w.page.locator('tr[data-key="spend"] td[data-label="Budget use"] .key-unpriced');
    await note.waitFor({ timeout: 30_000 });
    expect((await note.innerText()).replace(/\s+/g, " ").trim()).toBe("3 requests used models without a price: only their priced part is counted (settings.pricing gives one)");
    expect(await w.page.locator('tr[data-key="tokens"] .key-unpriced').count()).toBe(0);
    // one more, seen live (the page re-reads the keys as their requests finish)
    expect(await askUnpriced(spend)).toBe(200);
    await w.page.locator('tr[data-key="spend"] .key-unpriced[data-unpriced="4"]').waitFor({ timeout: 30_000 });
    // the notes (this one, and ci's rotation from the test before) keep the table in its card at 1280 px
    await w.page.setViewportSize({ width: 1280, height: 900 });
    expect(await w.page.evaluate(`(() => { const wrap = document.querySelector("table.keys").closest(".table-wrap"); return wrap.scrollWidth - wrap.clientWidth; })()`)).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
