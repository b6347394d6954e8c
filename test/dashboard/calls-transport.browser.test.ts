/**
 * The Calls page says how each call came (try17's tryout): a real gateway started on a data directory an
 * earlier version wrote (SQLite schema 16, one call in it), an HTTP call and a call over Codex's
 * Responses WebSocket (a raw WebSocket client) with the flight recorder on; real Chromium. The
 * WebSocket call has a WS badge, the call from before the upgrade a "via ?" one (not passed off as
 * HTTP), the HTTP call none; the Transport filter keeps one kind; the call view names the transport, and
 * the WebSocket call's recorded reply is the JSON frames the client received, one a line, said to be so.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RouteTrace } from "../../pipeline/ports.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import { encodeBlock } from "../../src/store/sqlite/trace-ring.ts";
import { connect } from "../support/responses-socket.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `
providers:
  - { id: anth, kind: anthropic, base_url: "{{FAKE}}" }
accounts:
  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }
settings:
  flight_recorder: { enabled: true }
`;

/** A data directory whose switchyard.db an earlier version (schema 16) wrote, with one call and its route trace in it. */
function oldDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-transport-"));
  const db = new Database(join(dir, "switchyard.db"));
  migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= 16));
  const ts = Date.now() - 60_000;
  db.run(
    `INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, estimated, outcome, status, total_ms, attempts, fallback)
     VALUES ('req-before-upgrade', ?, 'openai-responses', 'anth/claude-before', 'anth', 'claude-before', 0, 'ok', 200, 90, 1, 0)`,
    [ts],
  );
  // its trace as that version wrote it: no transport
  const trace: RouteTrace = {
    routeId: "sy_before_upgrade", requestId: "req-before-upgrade", ts, clientFormat: "openai-responses", requestedModel: "anth/claude-before",
    candidates: ["anth/claude-before"], decisions: [], attempts: [{ target: "anth/claude-before", providerId: "anth", model: "claude-before", accountId: "anth-1", startMs: 1, status: 200 }],
    warnings: [], outcome: "ok", status: 200, totalMs: 90,
  };
  const b = encodeBlock([[trace.routeId, trace.requestId, ts, JSON.stringify(trace)]]);
  db.run("INSERT INTO trace_blocks (n, min_route, max_route, min_request, max_request, body) VALUES (?, ?, ?, ?, ?, ?)", [b.n, b.minRoute, b.maxRoute, b.minRequest, b.maxRequest, b.body]);
  db.close();
  return dir;
}

const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }];
let frames: string[] = [];

const suite = withGatewayAndBrowser(YAML, {
  dataDir: oldDataDir(),
  ready: async (gw) => {
    const http = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "anth/claude-http", input, stream: true }) });
    expect(http.status).toBe(200);
    await http.text();
    const c = await connect(gw.url);
    c.send({ type: "response.create", model: "anth/claude-ws", input, store: false });
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    frames = c.raw;
    c.ws.close();
    await c.closed;
  },
});

test("WS badge on the WebSocket call, 'via ?' on the call from before the upgrade, none on the HTTP call; the filter; the call view's transport and the frames it sent", async () => {
  const gw = suite.gw;
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.goto(`${gw.url}/dashboard/calls`);
    const rows = w.page.locator("table.calls tbody tr");
    const row = (model: string) => rows.filter({ hasText: model });
    // the usage rows are flushed each second: wait until the page lists all three
    for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
      await Bun.sleep(200);
      if (i % 10 === 9) await w.page.reload();
    }
    expect(await rows.count()).toBe(3);
    const badges = async (model: string) => row(model).locator(".transport-badge").evaluateAll((els) => els.map((e) => [e.getAttribute("data-transport"), e.textContent?.trim()]));
    expect([await badges("anth/claude-ws"), await badges("anth/claude-before"), await badges("anth/claude-http")]).toEqual([[["websocket", "WS"]], [["unknown", "via ?"]], []]);

    // the Transport filter keeps one kind (the address keeps it)
    await w.page.selectOption("#f-transport", "websocket");
    for (let i = 0; i < 100 && (await rows.count()) !== 1; i++) await Bun.sleep(100);
    expect(await rows.allInnerTexts()).toEqual([expect.stringContaining("anth/claude-ws")]);
    expect(new URL(w.page.url()).searchParams.get("transport")).toBe("websocket");

    // the call view: its transport, and the reply as the frames the client received
    await rows.first().click();
    const transport = w.page.locator(".trace .kv dd.call-transport");
    await transport.waitFor({ timeout: 10_000 });
    expect(await transport.innerText()).toBe("Codex's Responses WebSocket (the reply went back as JSON frames, one per event)");
    const sent = w.page.locator(".recording .recorded", { hasText: "Sent to the client over the WebSocket" });
    await sent.waitFor({ timeout: 10_000 });
    const bytes = frames.reduce((n, f) => n + Buffer.byteLength(f), 0);
    expect((await sent.locator("h3").textContent())?.replace(/\s+/g, " ")).toBe(`Sent to the client over the WebSocket (${frames.length} frames) (${bytes.toLocaleString("en-US")} bytes)`);
    expect(await sent.locator(".body-note").innerText()).toBe(
      "The reply went over Codex's Responses WebSocket as response.* JSON text frames, one per event (no SSE event:/data: lines); one frame a line.",
    );
    expect((await sent.locator("pre.body-view").innerText()).trimEnd().split("\n")).toEqual(frames);

    // the call from before the upgrade: unknown, never guessed
    await w.page.selectOption("#f-transport", "unknown");
    for (let i = 0; i < 100 && !((await rows.count()) === 1 && (await rows.first().innerText()).includes("anth/claude-before")); i++) await Bun.sleep(100);
    expect(await rows.allInnerTexts()).toEqual([expect.stringContaining("anth/claude-before")]);
    expect(w.errors).toEqual([]);
    await rows.first().click();
    await w.page.locator(".trace .kv dd.call-transport", { hasText: "unknown" }).waitFor({ timeout: 10_000 });
    expect(await transport.innerText()).toBe("unknown (recorded before switchyard kept how a call came)");
    await w.page.locator(".trace .trace-body").waitFor({ timeout: 10_000 }); // its trace, as the earlier version kept it
    // the recorder is on but holds no bodies of a call from before: the page asks and hears 404 (as for any call it did not record)
    await w.page.locator(".trace .recorder-on").waitFor({ timeout: 10_000 });
    expect(w.errors.filter((e) => !e.includes("status of 404"))).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
