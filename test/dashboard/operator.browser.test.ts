/**
 * The operator's side of the dashboard in a real browser (SPEC 9.4), what a new operator would trip
 * over: a refused call says why in its trace view (the status, the error type and the message the
 * client got, no secret); the open Keys page follows keys created or revoked elsewhere (the CLI, another tab);
 * Overview's stat tiles fit one row at 1280 and 1440 px; a bad key name gets the API's 400 message in
 * the Keys form. Screenshots go to test-results/dashboard/.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS, markWindow as mark, stillMarked, untilLive as live } from "../support/browser.ts";
import { ROOT, SOURCE_CLI } from "../support/instance.ts";
import { withDemoStateAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withDemoStateAndBrowser();

/** POSTs `body` to `path`; the status, the route id, and the error message, type and code the client read. */
async function call(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; routeId: string; message: string; type?: string; code?: unknown }> {
  const res = await fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as { error?: { message?: string; type?: string; code?: unknown } };
  return { status: res.status, routeId: res.headers.get("x-switchyard-route-id")!, message: json.error?.message ?? "", type: json.error?.type, code: json.error?.code };
}

/** Creates a key through the admin API; its secret. */
async function createKey(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${suite.gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
}

describe("calls refused before routing", () => {
  test("the trace view of a bad request, an unknown model and a key's limit shows the status and the message the client got, and no secret", async () => {
    const secret = await createKey({ name: "fast-only", limits: { models: ["fast"] } });
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: 10_000 });
      await live(w.page);
      const refusals = [
        { label: "bad-request", want: 400, ...(await call("/v1/chat/completions", { model: "fast", messages: "fix the test" })) },
        { label: "unknown-model", want: 404, ...(await call("/v1/messages", { model: "nosuch/model-9", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })) },
        { label: "key-limit", want: 403, ...(await call("/v1/messages", { model: "coding", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }, { "x-api-key": secret })) },
      ];
      for (const r of refusals) {
        expect({ label: r.label, status: r.status }).toEqual({ label: r.label, status: r.want });
        expect(r.message.length).toBeGreaterThan(10);
        const row = w.page.locator(`tr[data-route-id="${r.routeId}"]`);
        await row.waitFor({ timeout: 10_000 });
        expect(await row.innerText()).toContain(`rejected ${r.status}`);
        // While this call's trace is still on its way, its view shows nothing of the call open before
        // (the trace request is held here until checked).
        const held = Promise.withResolvers<void>();
        const passed = Promise.withResolvers<void>();
        const traceUrl = `${suite.gw.url}/admin/api/route-traces/${encodeURIComponent(r.routeId)}`;
        await w.page.route(traceUrl, (route) => held.promise.then(() => route.continue()).then(passed.resolve, passed.reject), { times: 1 });
        await row.click();
        await w.page.locator(".trace", { hasText: r.routeId }).waitFor({ timeout: 10_000 });
        expect({ label: r.label, shown: await w.page.locator(".trace .answered-error, .trace .trace-body").count() }).toEqual({ label: r.label, shown: 0 });
        held.resolve();
        await passed.promise;
        // This call's trace, not the one still open from the row before (a loaded machine shows it a moment longer).
        const box = w.page.locator(".trace", { hasText: r.routeId }).locator(".answered-error");
        await box.waitFor({ timeout: 10_000 });
        expect(await w.page.locator(".trace").innerText()).toContain(r.routeId);
        const text = await box.innerText();
        expect({ label: r.label, text }).toEqual({ label: r.label, text: expect.stringContaining(String(r.status)) });
        expect(await box.locator(".answered-error-message").innerText()).toBe(r.message);
        // the type (and code) the client's body carried, not the gateway's own kind (tryout5: "500 api_error" for a Chat client's server_error)
        // (then the field at fault when the gateway knows it, "· field model", whether or not the client's format has a slot for it)
        const head = `${r.status} ${r.type}${typeof r.code === "string" ? ` · ${r.code}` : ""}`;
        expect({ label: r.label, head: (await box.locator(".answered-error-head").innerText()).replace(/ · field \S+$/, "") }).toEqual({ label: r.label, head });
        await w.page.screenshot({ path: join(SHOTS, `calls-refused-${r.label}.png`), fullPage: true });
      }
      expect(await w.page.content()).not.toContain(secret);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

/** Runs `switchyard ARGS --data-dir` against the test gateway, from source; stdout, stderr, exit code. */
async function cli(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  const p = Bun.spawn([...SOURCE_CLI, ...args, "--data-dir", suite.gw.dataDir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

describe("keys made elsewhere", () => {
  test("the open Keys page shows a key the CLI creates and a revoke from another tab, without a reload", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.page.locator("#key-name").waitFor({ timeout: 10_000 });
      await live(w.page);
      await mark(w.page);
      const made = await cli("keys", "create", "cli-made", "--rpm", "30");
      expect({ err: made.err, code: made.code }).toEqual({ err: "", code: 0 });
      const secret = made.out.trim().split("\n").pop()!;
      const row = w.page.locator('tr[data-key="cli-made"]');
      await row.waitFor({ timeout: 5_000 });
      expect(await row.innerText()).toContain("30 rpm");
      expect(await row.innerText()).toContain("active");
      await w.page.screenshot({ path: join(SHOTS, "keys-cli-made.png"), fullPage: true });

      // Another tab (here: the admin API) revokes it.
      expect((await fetch(`${suite.gw.url}/admin/api/keys/cli-made`, { method: "DELETE" })).status).toBe(200);
      await row.locator(".pill", { hasText: "revoked" }).waitFor({ timeout: 5_000 });
      expect(await row.locator("button", { hasText: "Revoke" }).count()).toBe(0);
      expect(await stillMarked(w.page)).toBe(true);
      expect(await w.page.content()).not.toContain(secret);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("key names", () => {
  test("a name with a space gets the API's 400 message under the form; nothing is created and the typed name stays to be fixed", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.goto(`${suite.gw.url}/dashboard/keys`);
      await w.page.locator("#key-name").waitFor({ timeout: 10_000 });
      await w.page.fill("#key-name", "my laptop");
      await w.page.click('form button[type="submit"]');
      const error = w.page.locator(".card", { hasText: "Create a key" }).locator(".error-line");
      await error.waitFor({ timeout: 10_000 });
      // the API's message, naming the form's field (Name) as the form does since the Keys form's labels change
      expect(await error.innerText()).toContain('Name "my laptop" may use letters, digits, ".", "_" and "-" only');
      expect(await w.page.locator(".secret-value").count()).toBe(0);
      expect(await w.page.inputValue("#key-name")).toBe("my laptop");
      await w.page.screenshot({ path: join(SHOTS, "keys-bad-name.png"), fullPage: true });
      // Fixed, it is created and the message goes.
      await w.page.fill("#key-name", "my-laptop");
      await w.page.click('form button[type="submit"]');
      await w.page.locator('.secret-once[data-secret-for="my-laptop"]').waitFor({ timeout: 10_000 });
      expect(await error.count()).toBe(0);
      const keys = (await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string }> };
      expect(keys.keys.map((k) => k.name).filter((n) => n.includes("laptop"))).toEqual(["my-laptop"]);
      // the only failed answer is the refused create (Chromium logs it as a console error)
      expect(w.failed).toEqual([`400 ${suite.gw.url}/admin/api/keys`]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("overview layout", () => {
  test("at 1280 and 1440 px the seven stat tiles sit in one row, each label, value and line inside its tile", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      for (const width of [1280, 1440]) {
        await w.page.setViewportSize({ width, height: 900 });
        await w.page.goto(`${suite.gw.url}/dashboard/overview`);
        await w.page.locator(".chart canvas").first().waitFor({ timeout: 10_000 });
        await w.settled(); // the live figures' first reads answered and drawn
        const tiles = await w.page.locator(".stat").evaluateAll((els) =>
          els.map((el) => {
            const box = el.getBoundingClientRect();
            const parts = [...el.children].map((c) => ({
              cls: c.className,
              // a part that does not fit its tile: cut (wider than its box) or wrapped (more than one line)
              overflows: c.scrollWidth > c.clientWidth + 0.5,
              lines: Math.round(c.getBoundingClientRect().height / parseFloat(el.ownerDocument.defaultView!.getComputedStyle(c).lineHeight || "0")) || 1,
            }));
            return { label: el.querySelector(".stat-label")!.textContent, top: Math.round(box.top), parts };
          }),
        );
        expect(tiles.length).toBe(7);
        expect({ width, rows: [...new Set(tiles.map((t) => t.top))].length }).toEqual({ width, rows: 1 });
        for (const t of tiles) {
          expect({ width, tile: t.label, cut: t.parts.filter((p) => p.overflows).map((p) => p.cls) }).toEqual({ width, tile: t.label, cut: [] });
          const label = t.parts.find((p) => p.cls === "stat-label")!;
          const value = t.parts.find((p) => p.cls === "stat-value")!;
          expect({ width, tile: t.label, labelLines: label.lines, valueLines: value.lines }).toEqual({ width, tile: t.label, labelLines: 1, valueLines: 1 });
        }
        await w.page.screenshot({ path: join(SHOTS, `overview-${width}.png`), fullPage: true });
      }
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);
});

describe("narrow screens", () => {
  test("at 390 px no page is wider than the screen, the content has no dark sidebar stripe behind it, the page links fit a few rows, and Calls shows each call's outcome and total", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.setViewportSize({ width: 390, height: 844 });
      for (const p of ["overview", "accounts", "routing", "calls", "usage", "keys", "setup"]) {
        await w.page.goto(`${suite.gw.url}/dashboard/${p}`);
        await w.page.locator("main h1").waitFor({ timeout: 10_000 });
        await live(w.page);
        await w.settled(); // charts and tables drawn
        const look = await w.page.locator("html").evaluate((html) => {
          const doc = html.ownerDocument;
          return {
            wide: html.scrollWidth,
            // the desktop layout paints the sidebar as a dark band down the page's left edge
            stripe: doc.defaultView!.getComputedStyle(doc.querySelector(".shell")!).backgroundImage !== "none",
            nav: Math.round(doc.querySelector("nav.side")!.getBoundingClientRect().height),
          };
        });
        expect({ page: p, wide: look.wide, stripe: look.stripe }).toEqual({ page: p, wide: 390, stripe: false });
        expect({ page: p, navUnder200: look.nav < 200 }).toEqual({ page: p, navUnder200: true });
        await w.page.screenshot({ path: join(SHOTS, `narrow-${p}.png`), fullPage: true });
      }
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: 10_000 });
      const cut = await w.page.locator("table.calls").evaluate((table) => {
        const edge = table.closest(".card")!.getBoundingClientRect().right;
        return [...table.querySelectorAll("th")].filter((th) => th.getBoundingClientRect().right > edge + 0.5).map((th) => th.textContent);
      });
      // Time, Model, Outcome, Total stay; the other columns are in the call's trace view
      expect(cut).toEqual([]);
      expect(await w.page.locator("table.calls th:visible").allInnerTexts()).toEqual(["Time", "Model", "Outcome", "Total"]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 90_000);
});
