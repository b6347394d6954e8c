/**
 * Over an event transport (Codex's Responses WebSocket, SPEC 2.5) a reply that was already whole when
 * it committed (a short reply from a fast upstream) is handed to the sink before the commit point's
 * bookkeeping (the account's health, the conversation's binding, the Response's headers) and before
 * the request is reported: the client's frames do not wait for what it never sees
 * (docs/performance.md item 137). Everything is still done, once, in the same synchronous run.
 */
import { expect, test } from "bun:test";
import type { Executor } from "../../pipeline/execute.ts";
import type { ReplyEvent } from "../../pipeline/ports.ts";
import { account, providerOf } from "../accounts/helpers.ts";
import { pipelineGateway } from "../support/pipeline-gateway.ts";

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
/** A whole Anthropic Messages stream: it has ended when the commit point sees its first content. */
const WHOLE_REPLY =
  sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }) +
  sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }) +
  sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
  sse("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }) +
  sse("message_stop", { type: "message_stop" });

test("a whole reply over an event transport reaches the sink before the account's health, the binding and the report", async () => {
  const executor: Executor = {
    async send() {
      return { status: 200, headers: new Headers({ "content-type": "text/event-stream" }), body: new Response(WHOLE_REPLY).body };
    },
  };
  const seen: string[] = [];
  const events: ReplyEvent[] = [];
  const { gateway } = pipelineGateway({
    providers: [providerOf("p", "anthropic")],
    accounts: [account("a1", "p")],
    executor,
    ports: (registry) => ({ pool: noting(registry, "bind", seen), health: noting(registry, "success", seen) }),
    onFinish: (f) => void seen.push(`finish ${f.outcome}`),
  });
  const value = { model: "p/m", input: "Say hello", stream: true };
  const res = await gateway.handle({
    request: { url: "http://127.0.0.1/v1/responses", headers: new Headers({ "content-type": "application/json", "x-session-id": "s1" }), signal: new AbortController().signal },
    body: { value, maxBytes: 1024, bytes: new TextEncoder().encode(JSON.stringify(value)) },
    endpoint: "responses",
    peer: "127.0.0.1",
    transport: "websocket",
    events: {
      events(batch) {
        seen.push("events");
        events.push(...batch);
      },
      end: () => void seen.push("end"),
    },
  });
  expect(res.status).toBe(200);
  expect(res.body).toBeNull();
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  expect(events.map((e) => e.event).at(-1)).toBe("response.completed");
  // Without the early hand-over: health, bind, events, end, finish.
  expect(seen).toEqual(["events", "end", "health", "bind", "finish ok"]);
});

/** `target` whose method `name` also notes its calls in `seen` (as `bind`, `health` for `success`). */
function noting<T extends object>(target: T, name: keyof T & string, seen: string[]): T {
  return new Proxy(target, {
    get(t, k) {
      const v = Reflect.get(t, k, t);
      if (typeof v !== "function") return v;
      const f = (v as (...args: unknown[]) => unknown).bind(t);
      if (k !== name) return f;
      return (...args: unknown[]) => {
        seen.push(name === "success" ? "health" : name);
        return f(...args);
      };
    },
  });
}
