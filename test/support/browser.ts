/**
 * Debian's Chromium driven by playwright-core for the dashboard tests (SPEC 9.4): headless, no sandbox,
 * no GPU, no QUIC, no background networking, a fresh empty profile per launch (Playwright's own). Every page records its
 * console errors, uncaught page errors and every request that leaves the gateway's origin, so a test
 * can assert there were none.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page, type Request } from "playwright-core";
import { UNAVAILABLE_MESSAGE } from "../../src/store/postgres/db.ts";
import { ROOT } from "./instance.ts";

/** Where screenshots go (git-ignored). */
export const SHOTS = join(ROOT, "test-results/dashboard");

/** The Chromium binary: $CHROMIUM, else Debian's. */
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** A launched browser with its scratch profile. */
export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with the flags the suite uses.
 * @throws Error naming how to install it when {@link CHROMIUM} is missing (scripts/test installs it).
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: scripts/test installs it (apt-get install chromium), or set CHROMIUM`);
  const profile = mkdtempSync(join(tmpdir(), "switchyard-chromium-"));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    // Playwright gives every launch a new, empty --user-data-dir of its own (it refuses the flag);
    // its temporary files go under this scratch directory.
    tracesDir: profile,
  });
  mkdirSync(SHOTS, { recursive: true });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A page that records what a test must not see. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console messages of type error, and uncaught exceptions. */
  errors: string[];
  /** URLs requested outside `origin`. */
  foreign: string[];
  /** `STATUS URL` of every answer with a status of 400 or more (Chromium logs each as a console error). */
  failed: string[];
  /**
   * Resolves once no request of the page is in flight (its live event stream aside) and two animation
   * frames have passed with none started meanwhile: what the page read is drawn (tables, uPlot charts).
   * @throws Error naming the requests still open after `timeoutMs` (default 10 s).
   */
  settled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Resolves after two animation frames of `page`: a resize, a render or a chart's redraw queued before it is on screen. */
export async function drawn(page: Page): Promise<void> {
  // A string, not a function: the root tsconfig has no DOM types.
  await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(undefined))))");
}

/**
 * Opens a page in a new context (its own cookies). `headers` are sent with every request (e.g.
 * `X-Forwarded-For` to make the browser a remote caller). `deviceScaleFactor`: device pixels per CSS
 * pixel (default 1; more for a test that reads a chart's pixels).
 */
export async function openPage(b: TestBrowser, origin: string, headers?: Record<string, string>, deviceScaleFactor?: number): Promise<WatchedPage> {
  const context = await b.browser.newContext({ viewport: { width: 1440, height: 900 }, extraHTTPHeaders: headers, serviceWorkers: "block", deviceScaleFactor });
  const page = await context.newPage();
  const errors: string[] = [];
  const foreign: string[] = [];
  const failed: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  /** Requests started and not yet finished or failed; the EventSource of the live events stays open by design. */
  const open = new Set<Request>();
  let started = 0;
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith(origin + "/") && u !== origin && !u.startsWith("data:")) foreign.push(u);
    if (r.resourceType() !== "eventsource") {
      open.add(r);
      started++;
    }
  });
  page.on("requestfinished", (r) => open.delete(r));
  page.on("requestfailed", (r) => open.delete(r));
  const settled = async (timeoutMs = 10_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      if (open.size === 0) {
        const before = started;
        await drawn(page);
        if (open.size === 0 && started === before) return;
      }
      if (Date.now() > end) throw new Error(`the page was still reading after ${timeoutMs} ms: ${[...open].map((r) => r.url()).join(", ") || "(new reads every frame)"}`);
      if (open.size > 0) await Bun.sleep(20); // polled: the answers are on their way
    }
  };
  return { page, context, errors, foreign, failed, settled, close: () => context.close() };
}

/** A stand-in outage of the admin API's store on one page ({@link storeAway}). */
export interface StoreAway {
  /** From now on the reads pass through to the gateway. */
  end(): void;
}

/**
 * Makes `page` answer every request whose URL matches `url` as the admin API answers while its store
 * cannot be reached (a shared PostgreSQL away): status 503, `{"error":{"message": UNAVAILABLE_MESSAGE,
 * "type":"unavailable_error"}}` (src/store/postgres/db.ts), until {@link StoreAway.end}; then those
 * requests reach the gateway. Set it up before the page goes to the view under test.
 */
export async function storeAway(page: Page, url: RegExp): Promise<StoreAway> {
  let away = true;
  const body = JSON.stringify({ error: { message: UNAVAILABLE_MESSAGE, type: "unavailable_error" } });
  await page.route(url, (route) => (away ? route.fulfill({ status: 503, contentType: "application/json", body }) : route.continue()));
  return { end: () => void (away = false) };
}

/** Marks the page's window (`window.__kept`), so that a test can tell later ({@link stillMarked}) that the page was not reloaded. */
export const markWindow = (page: Page): Promise<unknown> => page.evaluate("window.__kept = 42");

/** Whether the mark {@link markWindow} set is still there: the page was not reloaded since. */
export const stillMarked = (page: Page): Promise<unknown> => page.evaluate("window.__kept === 42");

/**
 * Waits until the dashboard's live event stream said hello: the header's badge reads Live (`.live-live`).
 * @throws playwright's TimeoutError after 10 s.
 */
export const untilLive = (page: Page): Promise<void> => page.locator(".live-live").waitFor({ timeout: 10_000 });
