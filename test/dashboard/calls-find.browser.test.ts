/**
 * Finding a call on the Calls page (try18 D6, D7, D12): a failed call a developer reports by the ids
 * of its reply's headers opens from the address or the id field though 200 newer calls pushed it off
 * the newest page, by its route id or its request id; an id no call has is said so; a keyboard alone
 * opens a row's trace and comes back to the row; the Model, Account and Key filters suggest the names
 * they match, and a filter that matches nothing is named; the Call id field shows a whole route id at
 * 1440 × 900 (it cut one at 250 px). Real gateway, fake upstream, real Chromium.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SHOTS, type WatchedPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const ALICE = "sk-sy-test-calls-find-alice-0001";
const BOB = "sk-sy-test-calls-find-bob-0002";
const YAML = `
providers:
  - id: anth
    kind: anthropic
    base_url: "{{FAKE}}"
accounts:
  - id: anth-main
    provider: anth
    api_key: env:FAKE_KEY
keys:
  - { name: alice, key: "${ALICE}" }
  - { name: bob, key: "${BOB}" }
aliases:
  fast: anth/claude-x
`;

/** How long a wait may take: minutes, not the seconds it takes, on a loaded machine (load 50 on 2 cores seen). */
const WAIT = 90_000;

/** The reported call's ids, as its reply's headers gave them. */
const reported = { requestId: "", routeId: "" };

const send = (model: string, key: string) =>
  fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });

const suite = withGatewayAndBrowser(YAML, {
  timeoutMs: 400_000,
  ready: async (gw) => {
    gw.fake.handle((r) => (r.model === "claude-broken" ? { status: 500, json: { type: "error", error: { type: "api_error", message: "upstream broke" } } } : undefined));
    // alice's failed call, then 200 of bob's: the failed one is no longer on the newest page
    const failed = await send("anth/claude-broken", ALICE);
    await failed.text();
    expect(failed.status).toBeGreaterThanOrEqual(500);
    reported.requestId = failed.headers.get("x-request-id")!;
    reported.routeId = failed.headers.get("x-switchyard-route-id")!;
    expect([reported.requestId, reported.routeId]).toEqual([expect.stringMatching(/^req_/), expect.stringMatching(/^sy_/)]);
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 20 }, () => send("anth/claude-x", BOB).then((r) => r.text())));
    const newest = ((await (await fetch(`${gw.url}/admin/api/calls?limit=200`)).json()) as { calls: Array<{ requestId: string }> }).calls;
    expect(newest.length).toBe(200);
    expect(newest.some((c) => c.requestId === reported.requestId)).toBe(false);
  },
});

/** Polls `cond` (the page's CSP refuses Playwright's in-page polling) until true, for up to {@link WAIT}. */
async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  for (const end = Date.now() + WAIT; !(await cond()); await Bun.sleep(100)) if (Date.now() > end) throw new Error(`never: ${what}`);
}

/** The open trace's heading (its call's route id) once one is shown. */
async function traceShown(w: WatchedPage): Promise<string> {
  const head = w.page.locator(".trace .trace-id");
  await head.waitFor({ timeout: WAIT });
  return (await head.innerText()).trim();
}

/** What the open trace says of the reported call: its id, outcome and the error its client got. */
async function reportedTrace(w: WatchedPage) {
  expect(await traceShown(w)).toBe(reported.routeId);
  const trace = w.page.locator(".trace");
  await trace.locator(".answered-error").waitFor({ timeout: WAIT });
  const kv = await trace.locator("dl.kv").innerText();
  expect(kv).toContain("alice");
  expect(kv).toContain("anth/claude-broken");
  expect(await trace.locator(".answered-error-head").innerText()).toMatch(/^5\d\d /);
  // the list beside it is the newest page, which does not hold it
  expect(await w.page.locator("table.calls tbody tr").count()).toBe(200);
  expect(await w.page.locator(`table.calls tbody tr[data-route-id="${reported.routeId}"]`).count()).toBe(0);
}

/** A watched page whose every wait and navigation may take {@link WAIT}. */
async function open(): Promise<WatchedPage> {
  const w = await suite.open();
  w.page.setDefaultTimeout(WAIT);
  w.page.setDefaultNavigationTimeout(WAIT);
  return w;
}

const idInAddress = (w: WatchedPage) => new URL(w.page.url()).searchParams.get("id");

test("a failed call 200 calls back opens from the address by its route id and by its request id", async () => {
  const w = await open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls?id=${reported.routeId}`);
    await reportedTrace(w);
    expect(idInAddress(w)).toBe(reported.routeId);
    await w.page.screenshot({ path: join(SHOTS, "calls-find-old-call.png") });
    await w.page.goto(`${suite.gw.url}/dashboard/calls?id=${reported.requestId}`);
    await reportedTrace(w);
    expect(idInAddress(w)).toBe(reported.requestId);
    expect(await w.page.locator(".call-missing").count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);

test("the Call id field: paste either id, Enter opens the call's trace and the address keeps the id", async () => {
  const w = await open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: WAIT });
    for (const id of [reported.requestId, reported.routeId]) {
      await w.page.getByLabel("Call id").fill(id);
      await w.page.getByLabel("Call id").press("Enter");
      await reportedTrace(w);
      await until("the id in the address", async () => idInAddress(w) === id);
      await w.page.locator(".trace-close").click();
      await until("the trace closed", async () => (await w.page.locator(".trace").count()) === 0);
    }
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);

test("the Call id field shows a whole id at 1440 × 900: a route id (39 characters) and a request id, typed or from the address", async () => {
  const w = await open();
  try {
    await w.page.setViewportSize({ width: 1440, height: 900 });
    /** The field's widths: a text wider than the box scrolls inside it (the id was cut at 250 px). */
    const fits = () =>
      w.page.locator("#call-id").evaluate((el: any) => ({ value: el.value as string, fits: el.scrollWidth <= el.clientWidth, scrollWidth: el.scrollWidth as number, clientWidth: el.clientWidth as number }));
    await w.page.goto(`${suite.gw.url}/dashboard/calls?id=${reported.routeId}`);
    await reportedTrace(w);
    expect(reported.routeId.length).toBe(39);
    expect(await fits()).toMatchObject({ value: reported.routeId, fits: true });
    await w.page.screenshot({ path: join(SHOTS, "calls-find-id-field-1440.png") });
    for (const id of [reported.requestId, reported.routeId]) {
      await w.page.getByLabel("Call id").fill(id);
      expect(await fits()).toMatchObject({ value: id, fits: true });
    }
    // still on the heading's row (the filters' row below it, as before), the page no wider than the window
    const box = (sel: string) => w.page.locator(sel).evaluate((el: any) => ({ top: Math.round(el.getBoundingClientRect().top), bottom: Math.round(el.getBoundingClientRect().bottom) }));
    expect((await box("#call-id")).top).toBeLessThan((await box(".page-head h1")).bottom);
    const pageFits = () => w.page.evaluate<boolean>("document.documentElement.scrollWidth <= innerWidth");
    expect(await pageFits()).toBe(true);
    // on a phone the field is no wider than the screen
    await w.page.setViewportSize({ width: 390, height: 844 });
    expect(await pageFits()).toBe(true);
    expect(await w.page.locator("#call-id").evaluate((el: any) => el.getBoundingClientRect().right <= el.ownerDocument.defaultView.innerWidth)).toBe(true);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);

test("an id no call has: the page says no call with it is kept, and for how long traces are", async () => {
  const w = await open();
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/calls?id=sy_0000nothing_like_it`);
    const missing = w.page.locator(".call-missing");
    await missing.waitFor({ timeout: WAIT });
    expect((await missing.innerText()).replace(/\s+/g, " ")).toBe(
      "No call with id sy_0000nothing_like_it is kept (traces are kept for the newest 10,000 calls, settings.trace_ring_size). An id is a reply's X-Request-Id (req_…) or X-Switchyard-Route-Id (sy_…).",
    );
    expect(await w.page.locator(".trace").count()).toBe(0);
    expect(await w.page.locator("table.calls tbody tr").count()).toBe(200);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);

test("keyboard only: Tab reaches a call's row, Enter opens its trace and focuses it, Escape closes it and focuses the row again; Space opens too", async () => {
  const w = await open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: WAIT });
    const focused = () =>
      // a string, not a function: the root tsconfig has no DOM types
      w.page.evaluate<{ cls: string; row: string | null; inTrace: boolean }>(
        `(() => { const el = document.activeElement; return { cls: el?.className ?? "", row: el?.closest("tr")?.getAttribute("data-route-id") ?? null, inTrace: !!el?.closest(".trace") }; })()`,
      );
    let presses = 0;
    while (!(await focused()).cls.includes("call-open")) {
      expect(++presses).toBeLessThan(40);
      await w.page.keyboard.press("Tab");
    }
    const row = (await focused()).row!;
    expect(row).toBe((await w.page.locator("table.calls tbody tr").first().getAttribute("data-route-id"))!);
    // visibly focused: an outline drawn around the time
    expect(await w.page.locator(":focus").evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).outlineStyle)).toBe("solid");
    await w.page.screenshot({ path: join(SHOTS, "calls-find-row-focused.png") });
    await w.page.keyboard.press("Enter");
    expect(await traceShown(w)).toBe(row);
    await w.page.locator(".trace h3", { hasText: "Attempts" }).waitFor({ timeout: WAIT });
    expect(await w.page.locator(".trace dl.kv").innerText()).toContain("bob");
    expect(await focused()).toMatchObject({ inTrace: true });
    await w.page.keyboard.press("Escape");
    await until("the trace closed", async () => (await w.page.locator(".trace").count()) === 0);
    expect(await focused()).toMatchObject({ cls: "call-open", row });
    // the next row, with Space
    await w.page.keyboard.press("Tab");
    const next = (await focused()).row!;
    expect(next).toBe((await w.page.locator("table.calls tbody tr").nth(1).getAttribute("data-route-id"))!);
    await w.page.keyboard.press(" ");
    expect(await traceShown(w)).toBe(next);
    // the Close control gives the focus back as Escape does
    await w.page.locator(".trace-close").focus();
    await w.page.keyboard.press("Enter");
    await until("the trace closed", async () => (await w.page.locator(".trace").count()) === 0);
    expect(await focused()).toMatchObject({ cls: "call-open", row: next });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);

test("the Model, Account and Key filters suggest the names they match, and a filter that matches nothing is named", async () => {
  const w = await open();
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/calls?key=ali`);
    const options = (list: string) => w.page.locator(`datalist#${list} option`).evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
    await until("the key suggestions", async () => (await options("calls-keys")).length > 0);
    expect(await w.page.locator("#f-key").getAttribute("list")).toBe("calls-keys");
    expect(await w.page.locator("#f-account").getAttribute("list")).toBe("calls-accounts");
    expect(await w.page.locator("#f-model").getAttribute("list")).toBe("calls-models");
    expect(await options("calls-keys")).toEqual(["alice", "bob"]);
    expect(await options("calls-accounts")).toEqual(["anth-main"]);
    const models = await options("calls-models");
    expect(models).toContain("fast");
    expect(models).toContain("anth/claude-x");
    // key=ali matches no call: the page says it is the key, and which keys there are
    const note = w.page.locator('.filter-note [data-filter="key"]');
    await note.waitFor({ timeout: WAIT });
    expect((await note.innerText()).replace(/\s+/g, " ")).toBe(
      "No call has the key ali: a filter matches a whole name, and this gateway has no key of that name (alice, bob; the field lists them all).",
    );
    // a whole name finds alice's one call
    await w.page.goto(`${suite.gw.url}/dashboard/calls?key=alice`);
    await w.page.locator("table.calls tbody tr").first().waitFor({ timeout: WAIT });
    expect(await w.page.locator("table.calls tbody tr").count()).toBe(1);
    // two filters that each match calls, but not together
    await w.page.goto(`${suite.gw.url}/dashboard/calls?key=alice&outcome=ok`);
    await w.page.locator(".filter-note").waitFor({ timeout: WAIT });
    expect(await w.page.locator(".filter-note").innerText()).toBe("Each filter alone matches calls; none matches all of them together.");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 400_000);
