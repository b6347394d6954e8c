/**
 * The set-up most dashboard browser tests share: one gateway for the whole test file (a real switchyard
 * assembly on 127.0.0.1 port 0 with a scratch data directory, from YAML where `{{FAKE}}` stands for
 * the fake upstream's URL; {@link startGateway}) and one headless Chromium ({@link launchBrowser}),
 * both started at once in `beforeAll` and torn down in `afterAll` (browser first, then the gateway, its
 * fake and its data directory). Pages are opened per test ({@link GatewayAndBrowser.open}), signed in with a
 * key when the browser stands for a remote caller.
 *
 * Use: `const suite = withGatewayAndBrowser(yaml);` at the top of a test file, then `suite.gw.url`,
 * `await suite.open()` in the tests (the fields are set once `beforeAll` ran).
 */
import { afterAll, beforeAll } from "bun:test";
import { launchBrowser, openPage, type TestBrowser, type WatchedPage } from "./browser.ts";
import { driveDemoState, startDemoGateway, type DemoScript } from "./dashboard-demo.ts";
import { startGateway, type TestGateway } from "./gateway.ts";

/** Headers that make the browser a remote caller (no loopback sign-in): the dashboard asks for a key. */
export const REMOTE = { "X-Forwarded-For": "203.0.113.9" } as const;

/** What {@link withGatewayAndBrowser} hands a test file (`G`: the gateway's type, e.g. the demo's with its script). */
export interface GatewayAndBrowser<G extends TestGateway = TestGateway> {
  /** The gateway (set once `beforeAll` ran). */
  readonly gw: G;
  /** The browser (set once `beforeAll` ran). */
  readonly browser: TestBrowser;
  /**
   * Opens a watched page in a new context on the gateway's origin ({@link openPage}); closed by the
   * caller (`w.close()`). With `signIn`, the page is made a remote caller ({@link REMOTE} unless
   * `headers` are given), goes to `signIn.path` (default `/dashboard/overview`), signs in with
   * `signIn.key` and waits until the live event stream says hello. `deviceScaleFactor` as
   * {@link openPage} takes it.
   * @throws when the sign-in view or the live badge does not appear within 10 s.
   */
  open(opts?: { headers?: Record<string, string>; signIn?: { key: string; path?: string }; deviceScaleFactor?: number }): Promise<WatchedPage>;
}

/**
 * Signs a page in on the dashboard's sign-in view: goes to `url`, types `key` (a client key with the
 * admin scope, or the instance's admin token) and waits until the live event stream says hello.
 * @throws when the sign-in field or the live badge does not appear within 10 s.
 */
export async function signIn(w: WatchedPage, url: string, key: string): Promise<void> {
  await w.page.goto(url);
  await w.page.fill("#key", key);
  await w.page.click('button[type="submit"]');
  await w.page.locator(".live-live").waitFor({ timeout: 10_000 });
}

/**
 * Registers a test file's gateway and browser: started in `beforeAll` (`yaml` and `opts` as
 * {@link startGateway} takes them; `ready` runs after both started, e.g. to send the requests every
 * test reads), stopped in `afterAll`. `timeoutMs` bounds the `beforeAll` (default 60 s: a loaded
 * machine takes seconds to start Chromium).
 */
export function withGatewayAndBrowser(
  yaml?: string,
  opts: Parameters<typeof startGateway>[1] & { ready?: (gw: TestGateway) => Promise<void>; timeoutMs?: number } = {},
): GatewayAndBrowser {
  const { ready, timeoutMs, ...gatewayOpts } = opts;
  return withStartedGatewayAndBrowser(() => startGateway(yaml, gatewayOpts), { ready, timeoutMs });
}

/**
 * {@link withGatewayAndBrowser} for a gateway started another way (`start`, e.g. the dashboard demo's
 * `startDemoGateway`, or one whose `stop` also stops what was started beside it): `start` and the
 * browser at once in `beforeAll` (when one of them fails, the other is stopped and the hook fails),
 * `ready` after both, the browser closed and the gateway stopped in `afterAll` (`timeoutMs` bounds
 * it too).
 */
export function withStartedGatewayAndBrowser<G extends TestGateway>(start: () => Promise<G>, opts: { ready?: (gw: G) => Promise<void>; timeoutMs?: number } = {}): GatewayAndBrowser<G> {
  let gw: G | undefined;
  let browser: TestBrowser | undefined;
  beforeAll(async () => {
    // Chromium's start (seconds on a loaded machine) overlaps the gateway's.
    const [g, b] = await Promise.allSettled([start(), launchBrowser()]);
    if (g.status === "fulfilled") gw = g.value;
    if (b.status === "fulfilled") browser = b.value;
    if (g.status === "rejected" || b.status === "rejected") {
      await browser?.close();
      await gw?.stop();
      [gw, browser] = [undefined, undefined];
      throw g.status === "rejected" ? g.reason : (b as PromiseRejectedResult).reason;
    }
    await opts.ready?.(gw!);
  }, opts.timeoutMs ?? 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  }, opts.timeoutMs ?? 60_000);
  const started = <T>(x: T | undefined, what: string): T => {
    if (x === undefined) throw new Error(`the ${what} is not started: read it in a test or a hook after withGatewayAndBrowser's beforeAll`);
    return x;
  };
  return {
    get gw() {
      return started(gw, "gateway");
    },
    get browser() {
      return started(browser, "browser");
    },
    async open(o = {}) {
      const g = started(gw, "gateway");
      const w = await openPage(started(browser, "browser"), g.url, o.headers ?? (o.signIn ? REMOTE : undefined), o.deviceScaleFactor);
      if (o.signIn) {
        try {
          await signIn(w, `${g.url}${o.signIn.path ?? "/dashboard/overview"}`, o.signIn.key);
        } catch (e) {
          await w.close();
          throw e;
        }
      }
      return w;
    },
  };
}

/**
 * {@link withStartedGatewayAndBrowser} on the dashboard demo's gateway ({@link startDemoGateway}: its
 * providers, accounts, combo and alias) driven into its realistic state ({@link driveDemoState}:
 * traffic, quota windows, a model cooling down, a locked account) before the file's tests run.
 */
export function withDemoStateAndBrowser(): GatewayAndBrowser<TestGateway & { script: DemoScript }> {
  return withStartedGatewayAndBrowser(startDemoGateway, { ready: driveDemoState });
}
