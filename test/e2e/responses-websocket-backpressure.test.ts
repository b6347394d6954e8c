/**
 * A Responses WebSocket client that stops reading (SPEC 2.5) must still get the whole reply once it
 * reads on: Bun drops frames (`send` returns 0) once a socket holds more than its backpressure limit
 * (16 MiB) unsent, so the gateway stops reading the upstream while the socket's send buffer is over
 * RESPONSES_SOCKET_HIGH_WATER_BYTES and goes on at its `drain` (pipeline/pump-events.ts, sink.ready).
 * The client here is a plain TCP socket that pauses its reads, so the kernel's buffers fill and the
 * backpressure is real; the reply's frames (deltas, then the done events and `response.completed`,
 * each repeating the text) add up to ~40 MB. The client reads on once the gateway says its reply waits
 * for the socket (AppOptions.onResponsesSocketHeldBack), or once the reply is over (its log line): a
 * gateway that kept sending would get there, with frames dropped; no fixed pause that a loaded machine
 * could spend before the reply even started.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { openRawWebSocket } from "../support/raw-websocket.ts";

let gw: TestGateway;
let heldBack = 0;
beforeAll(async () => {
  // The default config: provider `anth` (anthropic) at the fake upstream.
  gw = await startGateway(undefined, { onResponsesSocketHeldBack: () => heldBack++ });
});
afterAll(async () => {
  await gw?.stop();
});

/** 1,000 text deltas of 8,000 characters (each piece names its index, so a lost or repeated one shows). */
const PIECES = Array.from({ length: 1000 }, (_, i) => `<${i}>`.padEnd(8000, "abcdefgh"));

test("a client that stops reading mid-reply gets every frame, in order, once it reads on", async () => {
  gw.fake.reset();
  gw.fake.handle(() => simpleReply("anthropic-messages", { textPieces: PIECES, usage: { input: 5, output: 1000 } }, true));
  const ws = await openRawWebSocket(`${gw.url.replace(/^http/, "ws")}/v1/responses`);
  try {
    ws.send(JSON.stringify({ type: "response.create", model: "anth/claude-test", store: false, input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "long" }] }] }));
    await ws.until((t) => t.length > 0);
    ws.pause();
    // Until the gateway holds the reply back for the paused client, or (not holding it back) has sent it all.
    for (const end = Date.now() + 30_000; heldBack === 0 && gw.logs.length === 0 && Date.now() < end; ) await Bun.sleep(10);
    expect({ heldBack: heldBack > 0, logged: gw.logs.length }).toEqual({ heldBack: true, logged: 0 });
    ws.resume();
    await ws.until((t) => t.some((f) => f.includes('"type":"response.completed"') || f.includes('"type":"response.failed"')), 30_000);
    const frames = ws.texts.map((t) => JSON.parse(t));
    expect(frames[0].type).toBe("response.created");
    expect(frames.at(-1).type).toBe("response.completed");
    const deltas = frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta as string);
    expect(deltas.join("")).toBe(PIECES.join(""));
    expect(frames.at(-1).response.output[0].content[0].text).toBe(PIECES.join(""));
    // sequence_number counts every event of the response: none went missing between the first and the last.
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
  } finally {
    ws.close();
  }
}, 60_000);
