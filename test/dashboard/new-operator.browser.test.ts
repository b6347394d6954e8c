/**
 * What a new operator sees on scripts/demo's gateway (README "Not done yet", noticed 2026-12-03): the
 * implicit keyless accounts of the providers configured without accounts are on the Accounts page
 * (marked, with nothing to disable or remove) as they are in the dry run and the admin API, and Test on
 * one tests the model its combo routes to, saying so (asking for a model when none is known); a key that
 * just got 429 shows this minute's requests and tokens against its rpm / tpm on the Keys page; beside an
 * open trace, and with every column, at 1280 px no model name breaks inside a name; the charts' legends show the latest
 * values while the pointer is elsewhere; the Usage page does not speak of API prices when nothing had a
 * price. Screenshots go to test-results/dashboard/.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPage, SHOTS } from "../support/browser.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

/** scripts/demo's config, in front of the test fake ({{FAKE}}: its URL, filled in by startGateway). */
const DEMO_YAML = demoConfigYaml("{{FAKE}}");

let limitedSecret: string;

const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${suite.gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

/** One Chat Completions request; resolves with the status. */
async function chat(model: string, key?: string): Promise<number> {
  const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
  return res.status;
}

const suite = withGatewayAndBrowser(DEMO_YAML, {
  ready: async (gw) => {
    // the demo's three requests: the combo (demo-anthropic, keyless), the alias (demo-chat, keyless), Gemini
    expect(await chat("demo")).toBe(200);
    expect(await chat("fast")).toBe(200);
    expect(await chat("demo-gemini/gemini-demo")).toBe(200);
    expect(await chat("demo-anthropic/claude-demo")).toBe(200);
    // a refused call (its outcome pill, "rejected 400", is the widest beside a model name)
    const refused = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "fast", messages: "fix it" }) });
    expect(refused.status).toBe(400);
    await refused.text();
    // a stream the upstream cut mid-way: "upstream_error 200", the widest outcome, whose one unbreakable word
    // pushed Total past the card's edge at 390 px, or squeezed the model names there into broken parts
    const first = `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "cut", choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: null }] })}\n\n`;
    gw.fake.handle((r) => (r.model === "cut" ? { sse: `${first}${first}`, reset_after_bytes: first.length } : undefined));
    const cut = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "demo-chat/cut", stream: true, messages: [{ role: "user", content: "hi" }] }) });
    expect(cut.status).toBe(200);
    await cut.text();
    // a slow call: its Total ("9xx ms", a cold first call under load) took the room the model columns
    // needed at 1280 px, and "demo-anthropic/" broke inside (new-operator failed 2 runs in 9 that way)
    gw.fake.handle((r) => (r.model === "slow" ? { headers_delay_ms: 950, ...simpleReply(r.format!, { text: "ok", model: r.model }, r.stream) } : undefined));
    expect(await chat("demo-chat/slow")).toBe(200);
    gw.fake.handle(undefined);
    const calls = async () => ((await (await admin("GET", "/calls")).json()) as { calls: Array<{ requestedModel: string; outcome: string }> }).calls;
    for (let i = 0; i < 100 && !(await calls()).some((c) => c.requestedModel === "demo-chat/cut"); i++) await Bun.sleep(50);
    expect((await calls()).find((c) => c.requestedModel === "demo-chat/cut")?.outcome).toBe("upstream_error");
  },
});

describe("implicit keyless accounts", () => {
  test("the Accounts page lists the two implicit accounts the dry run names, marked implicit and keyless, with Test only", async () => {
    const plan = (await (await admin("POST", "/dry-run", { request: { model: "demo", messages: [{ role: "user", content: "hi" }] } })).json()) as { attempts: Array<{ accountId: string }> };
    expect(plan.attempts.map((a) => a.accountId)).toEqual(["demo-anthropic-keyless", "demo-chat-keyless"]);

    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      await w.page.locator('[data-account="demo-chat-keyless"]').waitFor({ timeout: 10_000 });
      const ids = await w.page.locator("[data-account]").evaluateAll((els) => els.map((e) => e.getAttribute("data-account")));
      expect(ids).toEqual(["demo-gemini-key", "demo-anthropic-keyless", "demo-chat-keyless"]);
      expect(await w.page.locator("main h1 + p").innerText()).toStartWith("3 accounts (2 implicit, keyless) · 3 ready");
      for (const id of ["demo-anthropic-keyless", "demo-chat-keyless"]) {
        const card = w.page.locator(".card", { has: w.page.locator(`[data-account="${id}"]`) });
        expect(await card.locator(".account-title").innerText()).toContain("implicit · keyless");
        const facts = await card.locator(".facts").evaluate((dl) => Object.fromEntries([...dl.querySelectorAll("div")].map((d) => [d.querySelector("dt")!.textContent, d.querySelector("dd")!.textContent])));
        expect(facts).toMatchObject({ Credential: "none", Source: "implicit" });
        // the share with the attempts it counts beside it (both accounts served the requests above)
        expect(facts.Success).toMatch(/^100 % \((\d+) of \1 attempts?\)$/);
        // read whole, not cut by the card's quarter width: the count is on its own line under the share
        const success = card.locator(".facts div", { hasText: "Success" }).locator("dd");
        expect(await success.evaluate((dd) => [dd.scrollWidth <= dd.clientWidth, dd.querySelector(".health-count")!.getBoundingClientRect().top > dd.getBoundingClientRect().top + 4])).toEqual([true, true]);
        // what Success and Latency cover is said once over the cards, not on each (it repeated on every card)
        expect(await card.locator(".health-note, .health-none").count()).toBe(0);
        expect(await card.locator(".implicit-note").innerText()).toContain("has no account in the config");
        expect(await card.locator("button").allInnerTexts()).toEqual(["Test"]);
      }
      // the configured account keeps its actions
      // GET /accounts' health: this instance's attempts, halving every 5 min; one line for the page
      expect(await w.page.locator(".health-note").allInnerTexts()).toEqual([
        "Success and Latency: this instance's requests with each account since it started. Success is the share of its attempts that succeeded (the count under it), recent ones weighing most (an attempt counts half after 5 min, a quarter after 10 min; the share does not change while the account is idle); Latency is to the first byte.",
      ]);
      const configured = w.page.locator(".card", { has: w.page.locator('[data-account="demo-gemini-key"]') });
      expect(await configured.locator("button").allInnerTexts()).toEqual(["Test", "Disable"]);
      expect(await configured.locator(".account-title").innerText()).not.toContain("implicit");
      await w.page.screenshot({ path: join(SHOTS, "accounts-implicit.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);

  test("the admin API lists them (source implicit, no credential), tests one without a key, and refuses to disable or remove one (409)", async () => {
    const status = (await (await admin("GET", "/accounts")).json()) as { accounts: Array<{ id: string; source: string; credential: string; providerId: string }> };
    expect(status.accounts.map((a) => [a.id, a.source, a.credential])).toEqual([
      ["demo-gemini-key", "config", "api_key"],
      ["demo-anthropic-keyless", "implicit", "none"],
      ["demo-chat-keyless", "implicit", "none"],
    ]);
    const providers = (await (await admin("GET", "/providers")).json()) as { providers: Array<{ id: string; accounts: string[] }> };
    expect(providers.providers.find((p) => p.id === "demo-chat")!.accounts).toEqual(["demo-chat-keyless"]);
    const quota = (await (await admin("GET", "/quota")).json()) as { accounts: Array<{ id: string }> };
    expect(quota.accounts.map((a) => a.id)).toContain("demo-anthropic-keyless");

    const before = suite.gw.fake.requests.length;
    const tested = (await (await admin("POST", "/accounts/demo-chat-keyless/test", { model: "gpt-demo" })).json()) as { ok: boolean };
    expect(tested.ok).toBe(true);
    const sent = suite.gw.fake.requests.slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]!.headers["authorization"]).toBeUndefined();

    for (const [method, path] of [
      ["POST", "/accounts/demo-chat-keyless/disable"],
      ["POST", "/accounts/demo-chat-keyless/enable"],
      ["DELETE", "/accounts/demo-chat-keyless"],
    ] as const) {
      const res = await admin(method, path);
      expect({ path, status: res.status }).toEqual({ path, status: 409 });
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "implicit_account", message: expect.stringContaining("give demo-chat an account") });
    }
    expect(await chat("fast")).toBe(200);
  });
});

describe("Test on an implicit keyless account", () => {
  test("a provider that lists no models is tested with the model its combo routes to, and the card says which and from where", async () => {
    const w = await openPage(suite.browser, suite.gw.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
      for (const [id, model] of [
        ["demo-chat-keyless", "gpt-demo"],
        ["demo-anthropic-keyless", "claude-demo"],
      ]) {
        const card = w.page.locator(".card", { has: w.page.locator(`[data-account="${id}"]`) });
        await card.waitFor({ timeout: 10_000 });
        const before = suite.gw.fake.requests.length;
        await card.getByRole("button", { name: "Test" }).click();
        const result = card.locator(".test-result");
        await result.waitFor({ timeout: 10_000 });
        expect(await result.innerText()).toMatch(new RegExp(`^Test passed: 200 in \\d+ ms with ${model} \\(from combo demo\\)$`));
        expect(suite.gw.fake.requests.slice(before).map((r) => r.model)).toEqual([model]);
      }
      await w.page.screenshot({ path: join(SHOTS, "accounts-implicit-tested.png"), fullPage: true });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  }, 60_000);

  test("with no model known for the provider, Test offers the models its upstream lists and tests with the one picked (it asked with a blank field)", async () => {
    const bare = await startGateway(
      `
providers:
  - { id: bare, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
`,
      { fakeOptions: { models: ["local-big", "local-small"] } },
    );
    const w = await openPage(suite.browser, bare.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${bare.url}/dashboard/accounts`);
      const card = w.page.locator(".card", { has: w.page.locator('[data-account="bare-keyless"]') });
      await card.waitFor({ timeout: 10_000 });
      // no request yet: Success is no measure ("–", it read 100 %) and the note says so
      expect(await card.locator(".facts div", { hasText: "Success" }).locator("dd").innerText()).toBe("–");
      expect(await card.locator(".health-none").innerText()).toBe("No request with this account on this instance since it started.");
      await card.getByRole("button", { name: "Test" }).click();
      const ask = card.locator("form.test-model");
      await ask.waitFor({ timeout: 10_000 });
      expect(await ask.locator("p").innerText()).toBe(
        "Nothing in the configuration names a model of provider bare and this account served none lately; its upstream lists these 2 models: pick the one to test this account with.",
      );
      // the upstream's list, the first chosen: no blank field
      const pick = card.getByLabel("Model");
      expect(await pick.locator("option").allInnerTexts()).toEqual(["local-big", "local-small"]);
      expect(await pick.inputValue()).toBe("local-big");
      // the API's instruction ({"model": "…"}) is not what the operator reads
      expect(await card.locator(".test-result").count()).toBe(0);
      expect(bare.fake.requests.map((r) => [r.method, r.path])).toEqual([["GET", "/v1/models"]]);
      await pick.selectOption("local-small");
      await card.getByRole("button", { name: "Test with this model" }).click();
      const result = card.locator(".test-result");
      await result.waitFor({ timeout: 10_000 });
      expect(await result.innerText()).toMatch(/^Test passed: 200 in \d+ ms with local-small$/);
      expect(bare.fake.requests.filter((r) => r.method === "POST").map((r) => [r.model, r.headers["authorization"]])).toEqual([["local-small", undefined]]);
      await w.page.screenshot({ path: join(SHOTS, "accounts-test-model.png"), fullPage: true });
      // the one 400 is the answer that no model is known (Chromium logs it as a failed load)
      expect(w.failed).toEqual([`400 ${bare.url}/admin/api/accounts/bare-keyless/test`]);
      expect(w.errors.filter((e) => !e.includes("400"))).toEqual([]);
    } finally {
      await w.close();
      await bare.stop();
    }
  }, 60_000);

  test("with no model known and an upstream without a models list, Test says why it cannot offer one and tests with the model typed", async () => {
    const bare = await startGateway(
      `
providers:
  - { id: bare, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
`,
      { fakeOptions: { models: null } },
    );
    const w = await openPage(suite.browser, bare.url);
    try {
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${bare.url}/dashboard/accounts`);
      const card = w.page.locator(".card", { has: w.page.locator('[data-account="bare-keyless"]') });
      await card.waitFor({ timeout: 10_000 });
      await card.getByRole("button", { name: "Test" }).click();
      const ask = card.locator("form.test-model");
      await ask.waitFor({ timeout: 10_000 });
      expect(await ask.locator("p").innerText()).toBe(
        "Nothing in the configuration names a model of provider bare, this account served none lately, and its upstream's model list could not be read (the models endpoint answered 404): name the upstream model to test this account with.",
      );
      await card.getByLabel("Model").fill("my-local-model");
      await card.getByRole("button", { name: "Test with this model" }).click();
      const result = card.locator(".test-result");
      await result.waitFor({ timeout: 10_000 });
      expect(await result.innerText()).toMatch(/^Test passed: 200 in \d+ ms with my-local-model$/);
      expect(bare.fake.requests.filter((r) => r.method === "POST").map((r) => r.model)).toEqual(["my-local-model"]);
    } finally {
      await w.close();
      await bare.stop();
    }
  }, 60_000);

  test("a provider that lists no models and that nothing routes to is tested with the model the account last served, said so, without asking (it asked, though the calls knew the model)", async () => {
    const bare = await startGateway(`
providers:
  - { id: bare, kind: openai-compatible, base_url: "{{FAKE}}/v1" }
`);
    const w = await openPage(suite.browser, bare.url);
    try {
      const served = await fetch(`${bare.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "bare/served-model", messages: [{ role: "user", content: "hi" }] }) });
      expect(served.status).toBe(200);
      await served.text();
      await w.page.setViewportSize({ width: 1280, height: 900 });
      await w.page.goto(`${bare.url}/dashboard/accounts`);
      const card = w.page.locator(".card", { has: w.page.locator('[data-account="bare-keyless"]') });
      await card.waitFor({ timeout: 10_000 });
      const before = bare.fake.requests.length;
      await card.getByRole("button", { name: "Test" }).click();
      const result = card.locator(".test-result");
      await result.waitFor({ timeout: 10_000 });
      expect(await result.innerText()).toMatch(/^Test passed: 200 in \d+ ms with served-model \(from its last served request\)$/);
      expect(await card.locator("form.test-model").count()).toBe(0);
      expect(bare.fake.requests.slice(before).map((r) => r.model)).toEqual(["served-model"]);
      expect(w.failed).toEqual([]);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
      await bare.stop();
    }
  }, 60_000);
});

test("Keys: a key refused for its rpm shows this minute's requests and tokens against its rpm and tpm", async () => {
  const created = await admin("POST", "/keys", { name: "limited", limits: { rpm: 2, tpm: 5_000 } });
  expect(created.status).toBe(201);
  limitedSecret = ((await created.json()) as { secret: string }).secret;
  expect(await chat("fast", limitedSecret)).toBe(200);
  expect(await chat("fast", limitedSecret)).toBe(200);
  expect(await chat("fast", limitedSecret)).toBe(429);

  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    const row = w.page.locator('tr[data-key="limited"]');
    await row.waitFor({ timeout: 10_000 });
    const requests = row.locator('[data-minute="requests"]');
    await requests.waitFor({ timeout: 10_000 });
    expect(await requests.innerText()).toBe("2 of 2 requests");
    // at the limit: in the refusal colour, not the idle one
    expect(await requests.evaluate((e) => e.className)).toContain("held-text");
    const tokens = await row.locator('[data-minute="tokens"]').innerText();
    expect(tokens).toMatch(/^[1-9][\d,]* of 5,000 tokens$/);
    expect(await row.locator(".minute-use").innerText()).toStartWith("this minute:");
    await w.page.screenshot({ path: join(SHOTS, "keys-minute-use.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

/** Each part of the model names shown ("demo-anthropic/", "gemini-demo": split after each slash) and the lines it takes on screen. */
function nameParts(page: import("playwright-core").Page) {
  return page.locator("table.calls td.mono, .trace .kv dd.mono").evaluateAll((cells) => {
    const out: Array<{ text: string; lines: number }> = [];
    for (const cell of cells) {
      if (cell.getClientRects().length === 0) continue; // the columns hidden beside a trace
      const doc = cell.ownerDocument;
      const walk = doc.createTreeWalker(cell, 4 /* text nodes */);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const text = n.textContent ?? "";
        for (let at = 0; at < text.length; ) {
          const slash = text.indexOf("/", at);
          const end = slash === -1 ? text.length : slash + 1;
          const range = doc.createRange();
          range.setStart(n, at);
          range.setEnd(n, end);
          const part = text.slice(at, end).trim();
          if (part && part !== "–") out.push({ text: part, lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size });
          at = end;
        }
      }
    }
    return out;
  });
}

test("Calls at 1280 px, with every column and with a trace open: no model name breaks inside a name (only after a provider's slash), and the list fits its card", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    const row = w.page.locator("table.calls tbody tr", { hasText: "demo-gemini/gemini-demo" }).first();
    await row.waitFor({ timeout: 10_000 });
    const fits = () => w.page.locator(".table-wrap").first().evaluate((e) => e.scrollWidth <= e.clientWidth + 1);
    // every column (Served by, Account, Key, Tokens, Cost): names broke at hyphens ("demo-" / "gemini/")
    const full = await nameParts(w.page);
    expect(full.filter((p) => p.lines > 1)).toEqual([]);
    expect(full.map((p) => p.text)).toEqual(expect.arrayContaining(["demo-gemini/", "gemini-demo", "demo-anthropic/", "claude-demo"]));
    expect(await fits()).toBe(true);
    await w.page.screenshot({ path: join(SHOTS, "calls-1280.png") });

    await row.click();
    await w.page.locator(".trace .kv").waitFor({ timeout: 10_000 });
    await w.page.locator("table.calls.compact").waitFor({ timeout: 10_000 });
    const parts = await nameParts(w.page);
    expect(parts.filter((p) => p.lines > 1)).toEqual([]);
    expect(parts.map((p) => p.text)).toEqual(expect.arrayContaining(["demo-gemini/", "gemini-demo", "demo-anthropic/", "claude-demo"]));
    expect(await w.page.locator(".split .table-wrap").evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
    await w.page.screenshot({ path: join(SHOTS, "calls-trace-1280.png") });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Calls at 390 px: the list keeps time, model, outcome and total inside its card, and each part of a model name on one line (names were split into five lines, 'demo-' / 'gemini' / '/' …)", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 390, height: 844 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr", { hasText: "demo-anthropic/claude-demo" }).first().waitFor({ timeout: 10_000 });
    await w.page.locator("table.calls tbody tr", { hasText: "upstream_error" }).first().waitFor({ timeout: 10_000 });
    await w.page.screenshot({ path: join(SHOTS, "calls-390.png"), fullPage: true });
    const parts = await nameParts(w.page);
    expect(parts.filter((p) => p.lines > 1)).toEqual([]);
    expect(parts.map((p) => p.text)).toEqual(expect.arrayContaining(["demo-gemini/", "gemini-demo", "demo-anthropic/", "claude-demo"]));
    expect(await w.page.locator(".table-wrap").first().evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
    const shown = await w.page.locator("table.calls thead th").evaluateAll((ths) => ths.filter((th) => th.getClientRects().length > 0).map((th) => th.textContent));
    expect(shown).toEqual(["Time", "Model", "Outcome", "Total"]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Calls from another day: each row shows its date over its time (a call from yesterday read like today's), and the layout holds at 1440, 1280 beside a trace and 390 px", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    // the browser's clock a day ahead: every call of this gateway is from "yesterday"
    await w.page.clock.setFixedTime(Date.now() + 86_400_000);
    // The date each call is from, as the page writes it: one date, or two when the calls straddled
    // midnight (the suite's first calls before it, this test after): then a row may show either.
    const listed = ((await (await admin("GET", "/calls?limit=1000")).json()) as { calls: Array<{ ts: number; requestedModel: string }> }).calls;
    const dateOf = (ms: number) => w.page.evaluate((ms) => new Date(ms).toLocaleDateString([], { month: "short", day: "numeric" }), ms);
    const dates = [...new Set(await Promise.all(listed.map((c) => dateOf(c.ts))))];
    const anyDate = new RegExp(`^(${dates.join("|")})$`);
    // the row clicked below (the newest Gemini call): its own date
    const expected = await dateOf(listed.find((c) => c.requestedModel === "demo-gemini/gemini-demo")!.ts);
    const row = w.page.locator("table.calls tbody tr", { hasText: "demo-gemini/gemini-demo" }).first();
    const fits = (sel: string) => w.page.locator(sel).first().evaluate((e) => e.scrollWidth <= e.clientWidth + 1);
    /** Each visible row's time cell: its date line and its whole text. */
    const times = () => w.page.locator("table.calls tbody td.call-time").evaluateAll((tds) => tds.map((td) => ({ date: td.querySelector(".call-date")?.textContent ?? "", text: (td as unknown as { innerText: string }).innerText })));
    for (const width of [1440, 1280]) {
      await w.page.setViewportSize({ width, height: 900 });
      await w.page.goto(`${suite.gw.url}/dashboard/calls`);
      await row.waitFor({ timeout: 10_000 });
      const cells = await times();
      expect(cells.length).toBeGreaterThan(5);
      for (const c of cells) expect(c.text).toMatch(new RegExp(`^(${dates.join("|")})\\s+\\d`));
      const full = await nameParts(w.page);
      expect({ width, broken: full.filter((p) => p.lines > 1) }).toEqual({ width, broken: [] });
      expect(full.map((p) => p.text)).toEqual(expect.arrayContaining(["demo-gemini/", "gemini-demo", "demo-anthropic/", "claude-demo"]));
      expect({ width, fits: await fits(".table-wrap") }).toEqual({ width, fits: true });
    }
    await w.page.screenshot({ path: join(SHOTS, "calls-yesterday-1280.png") });
    await row.click();
    await w.page.locator("table.calls.compact").waitFor({ timeout: 10_000 });
    const parts = await nameParts(w.page);
    expect(parts.filter((p) => p.lines > 1)).toEqual([]);
    expect(await fits(".split .table-wrap")).toBe(true);
    expect((await times())[0]!.date).toMatch(anyDate);
    // the trace says the whole date and time the call arrived (it said neither)
    const arrived = w.page.locator(".trace dl.kv dt", { hasText: /^Arrived$/ }).locator("xpath=following-sibling::dd[1]");
    expect(await arrived.innerText()).toContain(expected);
    await w.page.screenshot({ path: join(SHOTS, "calls-yesterday-trace-1280.png") });

    await w.page.setViewportSize({ width: 390, height: 844 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    await w.page.locator("table.calls tbody tr", { hasText: "upstream_error" }).first().waitFor({ timeout: 10_000 });
    const phone = await times();
    for (const c of phone) expect(c.date).toMatch(anyDate);
    expect((await nameParts(w.page)).filter((p) => p.lines > 1)).toEqual([]);
    expect(await fits(".table-wrap")).toBe(true);
    expect(await w.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth)).toBe(true);
    await w.page.screenshot({ path: join(SHOTS, "calls-yesterday-390.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("the charts' legends show the latest bucket's values while the pointer is not over a chart, and the hovered bucket's while it is", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    for (const page of ["overview", "usage"]) {
      await w.page.goto(`${suite.gw.url}/dashboard/${page}`);
      await w.page.locator(".u-legend").nth(1).waitFor({ timeout: 10_000 });
      await w.page.mouse.move(1, 1);
      const legends = () => w.page.locator(".u-legend").evaluateAll((ls) => ls.map((l) => [...l.querySelectorAll(".u-value")].map((v) => v.textContent)));
      const idle = await legends();
      expect(idle.length).toBeGreaterThan(1);
      for (const values of idle) {
        expect({ page, values: values.filter((v) => v === "–") }).toEqual({ page, values: [] });
        expect(values[0]).toEndWith("(latest)");
      }
      // over a chart: the bucket under the pointer, without "(latest)"; off it again: the latest
      const chart = w.page.locator(".chart").first();
      const box = (await chart.locator(".u-over").boundingBox())!;
      const firstTime = (latestShown: boolean) =>
        w.page.waitForFunction((shown) => (globalThis as any).document.querySelector(".u-legend .u-value")?.textContent.endsWith("(latest)") === shown, latestShown, { timeout: 10_000 });
      await w.page.mouse.move(box.x + box.width / 3, box.y + box.height / 2);
      await firstTime(false);
      const hovered = (await legends())[0]!;
      expect(hovered[0]).toMatch(/\d/);
      await w.page.mouse.move(1, 1);
      await firstTime(true);
      const after = (await legends())[0]!;
      expect(after[0]).toEndWith("(latest)");
      expect(after.filter((v) => v === "–")).toEqual([]);
    }
    await w.page.screenshot({ path: join(SHOTS, "usage-legends.png"), fullPage: true });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Usage: the demo's models are priced (its demo prices), so the subtitle says 'cost at API prices'", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/usage`);
    const subtitle = w.page.locator(".page-head p.muted");
    await subtitle.waitFor({ timeout: 10_000 });
    await w.page.locator("table.usage").waitFor({ timeout: 10_000 });
    expect(await subtitle.innerText()).toContain("cost at API prices");
    expect(await w.page.locator('table.usage tbody tr[data-group="demo-anthropic/claude-demo"] td[data-label="Cost"]').innerText()).toMatch(/^\$0\.0\d+$/);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Usage: with no model priced (the demo's config without its prices), the subtitle says there is no cost instead of 'cost at API prices'", async () => {
  const unpriced = DEMO_YAML.slice(0, DEMO_YAML.indexOf("settings:\n"));
  expect(unpriced).not.toContain("pricing");
  const bare = await startGateway(unpriced);
  const w = await openPage(suite.browser, bare.url);
  try {
    const res = await fetch(`${bare.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(200);
    await res.text();
    await w.page.goto(`${bare.url}/dashboard/usage`);
    const subtitle = w.page.locator(".page-head p.muted");
    await subtitle.waitFor({ timeout: 10_000 });
    await w.page.locator("table.usage").waitFor({ timeout: 10_000 });
    const text = await subtitle.innerText();
    expect(text).not.toContain("API prices");
    expect(text).toMatch(/no cost: \d+ requests? of this period used models without a price/);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
    await bare.stop();
  }
}, 60_000);

test("Calls: a call no model served does not read 'Served by' its last target (the list shows –, the trace 'Last target')", async () => {
  // the upstream refuses the request: the client gets its 400, nothing was served
  suite.gw.fake.handle((req) => (req.model === "broken" ? { status: 400, json: { error: { message: "bad parameter", type: "invalid_request_error", param: null, code: null } } } : undefined));
  try {
    expect(await chat("demo-chat/broken")).toBe(400);
  } finally {
    suite.gw.fake.handle(undefined);
  }
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.setViewportSize({ width: 1440, height: 900 });
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    const failed = w.page.locator("table.calls tbody tr", { hasText: "demo-chat/broken" }).first();
    await failed.waitFor({ timeout: 10_000 });
    const cells = async (row: typeof failed) => row.locator("td").allInnerTexts();
    // columns: time, model, served by, account, key, outcome, …
    expect((await cells(failed))[2]).toBe("–");
    expect((await cells(failed))[5]).toContain("400");
    const ok = w.page.locator("table.calls tbody tr", { hasText: "demo-gemini/gemini-demo" }).first();
    expect((await cells(ok))[2].replace(/\s+/g, "")).toBe("demo-gemini/gemini-demo");
    await failed.click();
    const kv = w.page.locator(".trace .kv");
    await kv.waitFor({ timeout: 10_000 });
    const facts = async () => kv.evaluate((dl) => Object.fromEntries([...dl.querySelectorAll("dt")].map((dt) => [dt.textContent, (dt.nextElementSibling?.textContent ?? "").replace(/\s+/g, "")])));
    expect(await facts()).toMatchObject({ "Last target": "demo-chat/broken" });
    expect(Object.keys(await facts())).not.toContain("Served by");
    await w.page.screenshot({ path: join(SHOTS, "calls-not-served.png") });
    await ok.click();
    await w.page.locator(".trace .kv dt", { hasText: "Served by" }).waitFor({ timeout: 10_000 });
    expect(await facts()).toMatchObject({ "Served by": "demo-gemini/gemini-demo" });
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Routing's dry run: without a model, or with a body that is not JSON, the form says so in its own words and asks the admin API nothing (it showed the API's 'request.model or model' after a logged 400)", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/routing`);
    const form = w.page.locator("form.dry-run");
    await form.waitFor({ timeout: 10_000 });
    const asked: string[] = [];
    w.page.on("request", (r) => {
      if (r.url().endsWith("/admin/api/dry-run")) asked.push(r.postData() ?? "");
    });
    const error = w.page.locator(".card", { has: form }).locator(".error-line");
    await form.getByRole("button", { name: "Route it" }).click();
    await error.waitFor({ timeout: 10_000 });
    expect(await error.innerText()).toBe('Name a model to route: a combo, alias or provider/model in the Model field (or "model" in the request body).');
    await form.locator("#dr-model").fill("demo");
    await form.locator("#dr-body").fill("{ messages: [] }");
    await form.getByRole("button", { name: "Route it" }).click();
    await w.page.locator(".error-line", { hasText: "The request body is not JSON (" }).waitFor({ timeout: 10_000 });
    expect(await error.innerText()).toEndWith("): write it as the client would send it, or leave it empty.");
    await form.locator("#dr-body").fill("[1]");
    await form.getByRole("button", { name: "Route it" }).click();
    await w.page.locator(".error-line", { hasText: "must be a JSON object" }).waitFor({ timeout: 10_000 });
    expect(asked).toEqual([]);
    // a model in the body is enough, and the form then asks the API
    await form.locator("#dr-model").fill("");
    await form.locator("#dr-body").fill(JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] }));
    await form.getByRole("button", { name: "Route it" }).click();
    await w.page.locator(".plan-when").waitFor({ timeout: 10_000 });
    expect(asked.length).toBe(1);
    expect(await error.count()).toBe(0);
    expect(w.failed).toEqual([]);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);

test("Routing's dry run of a body the endpoint refuses shows the endpoint's refusal, not a plan (it planned `messages: 5`)", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/routing`);
    const form = w.page.locator("form.dry-run");
    await form.waitFor({ timeout: 10_000 });
    await form.locator("#dr-format").selectOption("chat");
    await form.locator("#dr-body").fill(JSON.stringify({ model: "demo", messages: 5 }));
    await form.getByRole("button", { name: "Route it" }).click();
    const error = w.page.locator(".card", { has: form }).locator(".error-line");
    await error.waitFor({ timeout: 10_000 });
    expect(await error.innerText()).toBe("The endpoint would refuse this request (400): `messages` must be an array of messages.");
    expect(await w.page.locator(".plan-when").count()).toBe(0);
    // what the endpoint answers the same body
    const real = await fetch(`${suite.gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "demo", messages: 5 }) });
    expect(real.status).toBe(400);
    expect(((await real.json()) as { error: { message: string } }).error.message).toBe("`messages` must be an array of messages.");
  } finally {
    await w.close();
  }
}, 60_000);

test("Keys: a refused key's error names the form's fields ('Requests/min must be at least 1'), not the admin API's ('limits.rpm: rpm …')", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    const card = w.page.locator(".card", { hasText: "Create a key" });
    const form = card.locator("form");
    await form.waitFor({ timeout: 10_000 });
    const error = card.locator(".error-line");
    /** The error line after creating a key with `fields`, once it reads `expected` (the last one stays until then). */
    const tryCreate = async (fields: Record<string, string>, expected: string) => {
      for (const id of ["key-rpm", "key-tpm", "key-conc", "key-budget"]) await form.locator(`#${id}`).fill(fields[id] ?? "");
      await form.locator("#key-name").fill("refused-key");
      await form.getByRole("button", { name: "Create key" }).click();
      await card.locator(".error-line", { hasText: expected }).waitFor({ timeout: 10_000 });
      return error.innerText();
    };
    expect(await tryCreate({ "key-rpm": "-3" }, "Requests/min")).toBe("Requests/min must be at least 1; got -3");
    expect(await tryCreate({ "key-conc": "0" }, "Concurrent")).toBe("Concurrent must be at least 1; got 0");
    expect(await tryCreate({ "key-budget": "0" }, "Budget")).toBe("Budget (USD) must be greater than 0; got 0");
    // not a number: said by the form (it went as null: "tpm must be a number; got null")
    expect(await tryCreate({ "key-tpm": "lots" }, "Tokens/min")).toBe('Tokens/min must be a number; got "lots"');
    const keys = (await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string }> };
    expect(keys.keys.map((k) => k.name)).not.toContain("refused-key");
  } finally {
    await w.close();
  }
}, 60_000);

test("Accounts' 'Add an account' names the config file this gateway runs with, not ~/.switchyard/config.yaml", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/accounts`);
    const hints = w.page.locator("details.add-hints");
    await hints.waitFor({ timeout: 10_000 });
    await hints.locator("summary").click();
    const file = hints.locator("code.config-file");
    await file.waitFor({ timeout: 10_000 });
    // the path arrives with GET /admin/api/settings
    await hints.locator("code.config-file", { hasText: suite.gw.configPath }).waitFor({ timeout: 10_000 });
    expect(await file.innerText()).toBe(suite.gw.configPath);
    const text = await hints.innerText();
    expect(text).not.toContain("~/.switchyard/config.yaml");
    expect(text).toContain("switchyard login claude-code");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
