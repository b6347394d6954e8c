/**
 * A reply cut after the commit point on the Calls page (SPEC 6.4), real gateway and real Chromium: the
 * upstream sent a 200 and some text, then an in-band `overloaded_error`. The list read "upstream_error
 * 200", which looks like a success; now the outcome is the pill "upstream_error" followed by "200 sent,
 * reply cut", and the call view says the reply was cut after it started and names the error its
 * client's stream ended with. A finished call still reads "ok 200", and a call no reply served
 * (every attempt a 500) keeps its status in its pill and its own error block.
 */
import { expect, test } from "bun:test";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `
providers:
  - { id: anth, kind: anthropic, base_url: "{{FAKE}}" }
accounts:
  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }
`;

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const start = ev("message_start", { type: "message_start", message: { id: "msg_t", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
const text =
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } });
const overloaded = ev("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
const finished =
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }) +
  ev("message_stop", { type: "message_stop" });

const send = async (url: string, model: string) => {
  const res = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
  return res.status;
};

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    gw.fake.enqueue({ sse: start + text + overloaded });
    expect(await send(gw.url, "anth/claude-cut")).toBe(200);
    gw.fake.enqueue({ sse: start + text + finished });
    expect(await send(gw.url, "anth/claude-done")).toBe(200);
    gw.fake.handle((req) => (req.body.includes("claude-broken") ? { status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } } : undefined));
    expect(await send(gw.url, "anth/claude-broken")).toBe(500);
  },
});

test("a cut reply reads 'upstream_error' then '200 sent, reply cut', and its view names the error the stream ended with; ok and error calls as before", async () => {
  const gw = suite.gw;
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${gw.url}/dashboard/calls`);
    const rows = w.page.locator("table.calls tbody tr");
    // the usage rows are flushed each second: wait until the page lists all three
    for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
      await Bun.sleep(200);
      if (i % 10 === 9) await w.page.reload();
    }
    expect(await rows.count()).toBe(3);
    const outcome = (model: string) =>
      rows
        .filter({ hasText: model })
        .locator("td")
        .filter({ has: w.page.locator(".pill") })
        .last()
        .evaluate((td) => ({ pill: td.querySelector(".pill")?.textContent, text: (td as unknown as { innerText: string }).innerText.replace(/\s+/g, " ").trim() }));
    expect(await outcome("anth/claude-cut")).toEqual({ pill: "upstream_error", text: "upstream_error 200 sent, reply cut" });
    expect(await outcome("anth/claude-done")).toEqual({ pill: "ok 200", text: "ok 200" });
    expect((await outcome("anth/claude-broken")).pill).toMatch(/^error 5\d\d$/);

    // the call view of the cut reply: the same outcome, then what was cut and by which error
    await rows.filter({ hasText: "anth/claude-cut" }).first().click();
    const cut = w.page.locator(".trace .cut-reply");
    await cut.waitFor({ timeout: 10_000 });
    expect(await w.page.locator(".trace .kv dt", { hasText: /^Outcome$/ }).locator("xpath=following-sibling::dd[1]").innerText()).toBe("upstream_error 200 sent, reply cut");
    expect(await cut.locator("h3").textContent()).toBe("The reply was cut after it started");
    expect((await cut.locator(".cut-reply-head").innerText()).replace(/\s+/g, " ")).toBe(
      "The client got status 200 and the start of the reply; then its stream ended with an error (attempt #1, anth/claude-cut):",
    );
    expect(await cut.locator(".answered-error-message").innerText()).toBe("Overloaded");

    // a call no reply served keeps its own block ("The error the client got"), and no cut block
    await rows.filter({ hasText: "anth/claude-broken" }).first().click();
    await w.page.locator(".trace .answered-error:not(.cut-reply)").waitFor({ timeout: 10_000 });
    expect(await w.page.locator(".trace .cut-reply").count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
