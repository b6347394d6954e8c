/**
 * Tokens the gateway estimated (SPEC O-1: "marked `estimated` when the provider gave none") are marked
 * as such on the dashboard, in a real Chromium (try17 T7: a Codex call cut off mid-reply read
 * "8,946 / 12" on the Calls page beside its neighbours' reported "11 / 7", with nothing saying it was an
 * estimate, under a Usage heading "Tokens as the providers reported them"). Two calls: a Chat stream
 * whose upstream reports no usage (estimated) and an Anthropic reply with usage (reported). The Calls
 * list's token cell of the first starts with "≈" and its title says why; the second's has neither; the
 * Usage page's heading counts the one estimated request.
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { openPage } from "../support/browser.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

/** A complete Chat stream without a usage chunk (the upstream ignored `stream_options.include_usage`). */
const NO_USAGE_SSE = [
  { id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-demo", choices: [{ index: 0, delta: { role: "assistant", content: "estimated answer" }, finish_reason: null }] },
  { id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-demo", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
]
  .map((c) => `data: ${JSON.stringify(c)}\n\n`)
  .join("")
  .concat("data: [DONE]\n\n");

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"), {
  ready: async (gw) => {
    gw.fake.handle((req) =>
      req.format === "openai-chat"
        ? { sse: NO_USAGE_SSE }
        : req.format === "anthropic-messages"
          ? {
              json: {
                id: "msg_rep01",
                type: "message",
                role: "assistant",
                model: req.model,
                content: [{ type: "text", text: "reported" }],
                stop_reason: "end_turn",
                stop_sequence: null,
                usage: { input_tokens: 11, output_tokens: 7 },
              },
            }
          : undefined,
    );
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-chat/gpt-demo", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);
    expect(await chat.text()).toContain("estimated answer");
    const messages = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "demo-anthropic/claude-demo", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(messages.status).toBe(200);
    await messages.text();
    // usage is stored after the reply: wait until the admin API lists both calls
    for (const end = Date.now() + 10_000; ; await Bun.sleep(50)) {
      const c = (await (await fetch(`${gw.url}/admin/api/calls?limit=10`)).json()) as { calls: { estimated: boolean }[] };
      if (c.calls.length >= 2) {
        expect(c.calls.map((x) => x.estimated).sort()).toEqual([false, true]);
        break;
      }
      if (Date.now() > end) throw new Error("the two calls were not stored within 10 s");
    }
  },
});

test("the Calls list marks estimated tokens with ≈ and says why; reported ones are unmarked; the Usage heading counts them", async () => {
  const w = await openPage(suite.browser, suite.gw.url);
  const page = w.page;
  try {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${suite.gw.url}/dashboard/calls`);
    const rows = page.locator("table.calls tbody tr");
    await rows.nth(1).waitFor({ timeout: 10_000 });
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const td = tr.querySelector("td[data-tokens]")!;
        return { text: (td as unknown as { innerText: string }).innerText, title: td.querySelector("[title]")?.getAttribute("title") ?? null, model: tr.textContent!.includes("gpt-demo") ? "chat" : "anthropic" };
      }),
    );
    const chat = cells.find((c) => c.model === "chat")!;
    const anthropic = cells.find((c) => c.model === "anthropic")!;
    expect(chat.text.startsWith("≈")).toBe(true);
    expect(chat.title).toStartWith("Estimated by the gateway from the text (the provider reported no usage for this reply): ");
    expect(anthropic).toEqual({ text: "11 / 7", title: null, model: "anthropic" });

    await page.goto(`${suite.gw.url}/dashboard/usage?range=1d`);
    const heading = page.locator(".page-head p.muted").first();
    await heading.waitFor({ timeout: 10_000 });
    await page.locator('table.usage tr[data-group="demo-chat/gpt-demo"]').waitFor({ timeout: 10_000 });
    expect(await heading.innerText()).toContain("Tokens as the providers reported them (1 request's tokens are the gateway's estimate: the provider reported no usage; the Calls page marks them ≈)");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
