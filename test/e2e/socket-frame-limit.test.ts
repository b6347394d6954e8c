/**
 * The Responses WebSocket's frame limit (Bun's maxPayloadLength: twice `server.max_body_bytes`, at
 * least 64 MiB, src/http/responses-socket.ts) follows a reload that changes the body limit, on sockets
 * opened before the reload too (src/http/socket-frame-limit.ts): a frame between the old frame limit
 * and the new one is taken, a frame over the body limit gets the guard's 413 error frame, and one over
 * the frame limit closes the socket with 1009.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { connect } from "../support/responses-socket.ts";

const suite = gatewaySuite();
const MIB = 1024 * 1024;

/** Writes the config with `server.max_body_bytes: bytes` and reloads it through the admin API. */
async function reloadWithBodyLimit(bytes: number) {
  writeFileSync(suite.gw.configPath, `server:\n  max_body_bytes: ${bytes}\n${DEFAULT_YAML.replaceAll("{{FAKE}}", suite.gw.fake.url)}`);
  const r = await fetch(`${suite.gw.url}/admin/api/config/reload`, { method: "POST" });
  expect(r.status).toBe(200);
  return (await r.json()) as { changed: { server?: string[] } };
}

const frameWarnings = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.level === "warn" && String(l.msg).includes("Responses WebSocket's frame limit"));

/**
 * A `response.create` frame's text with `bytes` of input text (written out, not stringified: 65 MiB
 * take seconds to stringify on a loaded machine). `generate: false` makes it a warm-up, answered by
 * the socket itself with no upstream call (a 413 error frame over the body limit, like any request):
 * an answer shows the frame got past Bun's frame limit.
 */
const frame = (bytes: number, generate = true) =>
  `{"type":"response.create",${generate ? "" : '"generate":false,'}"model":"resp/gpt-test","input":"${"w".repeat(bytes)}"}`;
/** Two 65 MiB frames through the gateway take ~50 s on a loaded machine (2 cores, load 20). */
const BIG_FRAME_TIMEOUT_MS = 180_000;

describe("a reload that changes server.max_body_bytes", () => {
  test("raised to 40 MiB (frame limit 80 MiB): a 65 MiB frame, over the 64 MiB frame limit of the start, reaches the gateway on a socket opened before the reload (a request over the body limit: the guard's 413 error frame) and on a new one (a warm-up over the body limit: the same 413 frame); no warning", async () => {
    const before = await connect(suite.gw.url);
    expect((await reloadWithBodyLimit(40 * MIB)).changed.server).toEqual(["max_body_bytes"]);
    const sent = suite.gw.fake.requests.length;
    before.ws.send(frame(65 * MIB));
    expect(await before.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    expect(suite.gw.fake.requests.length).toBe(sent);
    before.ws.send(frame(10, false));
    expect(await before.next()).toMatchObject({ type: "response.created" });
    before.ws.close();
    const after = await connect(suite.gw.url);
    after.ws.send(frame(65 * MIB, false));
    expect(await after.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    after.ws.send(frame(10, false));
    expect(await after.next()).toMatchObject({ type: "response.created" });
    expect(await after.next()).toMatchObject({ type: "response.completed" });
    after.ws.close();
    expect(frameWarnings()).toEqual([]);
    // The reload changed the frame limit only: the routes Elysia gave Bun still answer.
    expect((await fetch(`${suite.gw.url}/health`)).status).toBe(200);
    expect((await fetch(`${suite.gw.url}/v1/models`)).status).toBe(200);
    expect((await fetch(`${suite.gw.url}/nope`)).status).toBe(404);
  }, BIG_FRAME_TIMEOUT_MS);

  test("lowered back to 32 MiB: the frame limit is 64 MiB again, and a 65 MiB frame closes the socket with 1009", async () => {
    await reloadWithBodyLimit(40 * MIB);
    await reloadWithBodyLimit(32 * MIB);
    const c = await connect(suite.gw.url);
    c.ws.send(frame(65 * MIB, false));
    expect((await c.closed).code).toBe(1009);
    expect(frameWarnings()).toEqual([]);
  }, BIG_FRAME_TIMEOUT_MS);
});
