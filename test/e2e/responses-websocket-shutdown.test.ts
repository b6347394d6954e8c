/**
 * SPEC D-3 ("stop accepting") on Codex's Responses WebSocket (SPEC 2.5): once the gateway begins to
 * stop, an open socket takes no new `response.create`. An idle socket closes at once and a busy one
 * once its reply has ended, both with 1001 "going away", so that a chatty agent cannot keep a stopping
 * gateway busy (try17 T8: a turn sent 7 s after SIGTERM was routed and served upstream). A turn still
 * waiting on its upstream when the grace period ends gets an error frame (503 `gateway_stopping`).
 */
import { afterEach, expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";

const create = (text: string) => ({
  type: "response.create",
  model: "anth/claude-test",
  store: false,
  input: [{ type: "message", role: "user", content: [{ type: "input_text", text }] }],
});
const textOf = (frames: any[]) => frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta).join("");

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

test("an idle socket is closed with 1001 when the gateway begins to stop", async () => {
  gw = await startGateway();
  gw.fake.handle(() => simpleReply("anthropic-messages", { text: "first answer" }, true));
  const client = await connect(gw.url);
  client.send(create("hi"));
  expect(textOf(await client.untilTerminal())).toBe("first answer");
  const stopped = gw.app.shutdown(10_000);
  expect(await client.closed).toEqual({ code: 1001, reason: "the gateway is shutting down" });
  await stopped;
  expect(gw.fake.requests.length).toBe(1);
});

test("a turn sent while the gateway stops is not served: the reply in flight ends whole, then the socket closes with 1001", async () => {
  gw = await startGateway();
  let resume!: () => void;
  const resumed = new Promise<void>((r) => (resume = r));
  gw.fake.handle(() => {
    const reply = simpleReply("anthropic-messages", { textPieces: ["one ", "two ", "three"] }, true);
    const sse = reply.sse!;
    // The first piece carries the first text delta; the rest waits until the test has stopped the gateway.
    return { ...reply, split_at: [sse.indexOf("\n\n", sse.indexOf('"one ')) + 2], resume_after_first: resumed };
  });
  const client = await connect(gw.url);
  client.send(create("turn one"));
  for (;;) if ((await client.next()).type === "response.output_text.delta") break;
  const stopped = gw.app.shutdown(10_000);
  client.send(create("turn two, sent after the stop began"));
  resume();
  const closed = await client.closed;
  expect(client.frames.at(-1).type).toBe("response.completed");
  expect(textOf(client.frames)).toBe("one two three");
  expect(client.frames.filter((f) => f.type === "response.created").length).toBe(1);
  expect(closed).toEqual({ code: 1001, reason: "the gateway is shutting down" });
  await stopped;
  // Only the first turn reached the upstream.
  expect(gw.fake.requests.length).toBe(1);
});

test("a turn still waiting on its upstream when the grace period ends gets an error frame with status 503, then the socket closes with 1001", async () => {
  gw = await startGateway();
  gw.fake.enqueue({ hang_before_headers: true });
  const client = await connect(gw.url);
  client.send(create("a turn the upstream never answers"));
  while (gw.fake.requests.length === 0) await Bun.sleep(10);
  const stopped = gw.app.shutdown(300);
  const closed = await client.closed; // before the change: 1006, with no frame at all
  expect(client.frames.at(-1)).toMatchObject({ type: "error", status: 503, error: { code: "gateway_stopping" } });
  expect(client.frames.at(-1).error.message).toContain("The gateway is shutting down");
  expect(closed).toEqual({ code: 1001, reason: "the gateway is shutting down" });
  expect(await stopped).toBe(true);
  expect(gw.fake.aborted).toBe(1);
  const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.status !== undefined);
  expect(line).toMatchObject({ outcome: "error", status: 503, code: "gateway_stopping" });
});
