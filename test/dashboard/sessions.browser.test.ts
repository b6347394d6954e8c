/**
 * Dashboard sessions end everywhere at once (SPEC 9.4), in a real Chromium: an open page whose session
 * ended — signed out in another tab, its key revoked, or (a local browser that needed no key)
 * `require_api_key` switched on — stops receiving live data and shows the sign-in view without anyone
 * touching it, and the admin API refuses its cookie. The sign-in card (and the 404 page's, the same
 * frame) fits a phone's screen with room to spare.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { openPage, SHOTS, type WatchedPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser();

const REMOTE = { "X-Forwarded-For": "203.0.113.7" };

async function adminKey(name: string): Promise<string> {
  const res = await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, scopes: ["admin"] }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

/** Signs a remote browser in on `page` and waits until the Calls page is live. */
async function signIn(w: WatchedPage, secret: string, page = "calls"): Promise<void> {
  await w.page.goto(`${suite.gw.url}/dashboard/${page}`);
  await w.page.fill("#key", secret);
  await w.page.click('button[type="submit"]');
  await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
}

const signInShown = (page: Page) => page.locator("h1", { hasText: "Sign in" }).waitFor({ timeout: 15_000 });
const apiStatus = (page: Page) => page.evaluate(() => fetch("/admin/api/keys").then((r) => r.status));

async function sendMessage(model: string): Promise<void> {
  const res = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
}

test("on a phone (390 px) the sign-in card and the 404 page's card keep at least 16 px from the screen's edges (5 px before) and nothing is wider than the screen", async () => {
  const w = await openPage(suite.browser, suite.gw.url, REMOTE);
  try {
    await w.page.setViewportSize({ width: 390, height: 800 });
    for (const [path, shot] of [
      ["calls", "login-390.png"],
      ["usgae", "not-found-390.png"],
    ]) {
      await w.page.goto(`${suite.gw.url}/dashboard/${path}`);
      const card = w.page.locator(".login-box");
      await card.waitFor({ timeout: 10_000 });
      await w.page.screenshot({ path: join(SHOTS, shot) });
      const box = (await card.boundingBox())!;
      const page = (await w.page.evaluate("({ width: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth })")) as { width: number; scroll: number };
      expect({ path, left: box.x >= 16, right: page.width - (box.x + box.width) >= 16, scroll: page.scroll }).toEqual({ path, left: true, right: true, scroll: page.width });
    }
    // …and the sign-in form's field still takes a key across the card
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("#key").waitFor({ timeout: 10_000 });
    expect((await w.page.locator("#key").boundingBox())!.width).toBeGreaterThan(250);
  } finally {
    await w.close();
  }
}, 60_000);

describe("an open page whose session ended", () => {
  test("a revoked key: its event stream ends before the next event, and the open Calls page goes to the sign-in view", async () => {
    const secret = await adminKey("revoked-admin");
    const w = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await signIn(w, secret);
      // what the browser's event stream carries, watched from a second tab that never reloads
      const watcher = await w.context.newPage();
      await watcher.goto(`${suite.gw.url}/health`);
      await watcher.evaluate(() => {
        const g = globalThis as any;
        g.seen = [];
        g.subscribed = false;
        const es: any = new g.EventSource("/admin/api/events");
        // the stream's first frame: from here on the server has it subscribed to the bus
        es.addEventListener("hello", () => (g.subscribed = true));
        es.addEventListener("request_finished", (m: any) => g.seen.push(JSON.parse(m.data).model));
        es.addEventListener("signed_out", () => {
          g.seen.push("signed_out");
          es.close();
        });
      });
      await watcher.waitForFunction(() => (globalThis as any).subscribed === true, undefined, { timeout: 10_000 });
      await sendMessage("anth/before-revocation");
      await w.page.locator("table.calls", { hasText: "anth/before-revocation" }).waitFor({ timeout: 10_000 });
      await watcher.waitForFunction(() => (globalThis as any).seen.length > 0, undefined, { timeout: 10_000 });

      expect((await fetch(`${suite.gw.url}/admin/api/keys/revoked-admin`, { method: "DELETE" })).status).toBe(200);
      await sendMessage("anth/after-revocation");
      await watcher.waitForFunction(() => (globalThis as any).seen.includes("signed_out"), undefined, { timeout: 10_000 });
      expect(await watcher.evaluate(() => (globalThis as any).seen)).toEqual(["anth/before-revocation", "signed_out"]);
      await signInShown(w.page);
      expect(await w.page.locator("body").innerText()).not.toContain("anth/after-revocation");
      expect(await apiStatus(w.page)).toBe(401);
    } finally {
      await w.close();
    }
  }, 90_000);

  test("signed out in one tab: the other open tab goes to the sign-in view by itself", async () => {
    const secret = await adminKey("two-tabs-admin");
    const a = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await signIn(a, secret, "overview");
      // a second tab of the same browser shares the session cookie
      const b = await a.context.newPage();
      await b.goto(`${suite.gw.url}/dashboard/calls`);
      await b.locator(".live-live").waitFor({ timeout: 10_000 });

      await a.page.getByRole("button", { name: "Sign out" }).click();
      await signInShown(a.page);
      await signInShown(b);
      await b.screenshot({ path: join(SHOTS, "signed-out-other-tab.png") });
      expect(await apiStatus(b)).toBe(401);
      // Each sign-in view says why it is there, once: this tab signed out, the other was signed out.
      expect(await a.page.getByRole("status").innerText()).toBe("You signed out.");
      expect(await b.getByRole("status").innerText()).toBe("Your session ended: signed out in another tab, expired, its key was revoked, or it was signed in with an admin token that is not this instance's (another instance's, or this one's before a restart).");
      await b.reload();
      await signInShown(b);
      expect(await b.getByRole("status").count()).toBe(0);
    } finally {
      await a.close();
    }
  }, 90_000);

  test("the tab that signs out says 'You signed out.' even when the session's end reaches its live events before the sign-out's own answer", async () => {
    const secret = await adminKey("slow-logout-admin");
    const a = await openPage(suite.browser, suite.gw.url, REMOTE);
    try {
      await signIn(a, secret, "overview");
      await a.page.locator(".live-live").waitFor({ timeout: 10_000 });
      // The gateway ends the session at once (the page's event stream ends; its reconnect, a few seconds
      // later, gets a 401); its answer to the page's own POST arrives 6 s later, as on a busy machine.
      await a.page.route("**/dashboard/logout", async (route) => {
        const response = await route.fetch();
        await Bun.sleep(6000);
        await route.fulfill({ response });
      });
      await a.page.getByRole("button", { name: "Sign out" }).click();
      await signInShown(a.page);
      expect(await a.page.getByRole("status").innerText()).toBe("You signed out.");
    } finally {
      await a.close();
    }
  }, 90_000);

  // Last: it switches require_api_key on for the rest of this gateway's life.
  test("a local browser that needed no key: once require_api_key is on, its open page goes to the sign-in view and its cookie reads nothing", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
      expect(await apiStatus(w.page)).toBe(200);

      appendFileSync(suite.gw.configPath, "server:\n  require_api_key: true\n");
      const reload = await fetch(`${suite.gw.url}/admin/api/config/reload`, { method: "POST" });
      expect(reload.status).toBe(200);
      await signInShown(w.page);
      expect(await apiStatus(w.page)).toBe(401);
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await signInShown(w.page);
    } finally {
      await w.close();
    }
  }, 90_000);
});
