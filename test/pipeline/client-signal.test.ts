/**
 * A client that goes away during a streamed reply (SPEC 6.4), seen only through its request's signal:
 * the body the gateway returned is never read nor cancelled (Bun aborts the signal of a request whose
 * connection closed; the body's cancellation is the other path, test/e2e/fallback.test.ts). The upstream
 * call is aborted, the account's slot freed and the request reported `client_closed` at once: the call's
 * one listener on the signal (pipeline/execute.ts `ClientAbort`) runs the commit point's hook
 * (docs/performance.md item 121).
 */
import { expect, test } from "bun:test";
import type { Executor, UpstreamCall } from "../../pipeline/execute.ts";
import { account, providerOf } from "../accounts/helpers.ts";
import { pipelineGateway } from "../support/pipeline-gateway.ts";

/** One Anthropic Messages SSE event. */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** The start of a streamed reply with its first text: the commit point commits on it; the rest never comes. */
const FIRST_PART =
  sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }) +
  sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } });

test("a client's signal aborting a committed stream whose body is not cancelled: upstream aborted, slot freed, client_closed", async () => {
  // The upstream: its first part at once, then nothing until its call is aborted (then it errors, as
  // fetch's body does).
  const upstreamAborted = Promise.withResolvers<void>();
  const executor: Executor = {
    async send(call: UpstreamCall) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(FIRST_PART));
          call.signal.addEventListener("abort", () => {
            c.error(call.signal.reason);
            upstreamAborted.resolve();
          });
        },
      });
      return { status: 200, headers: new Headers({ "content-type": "text/event-stream" }), body };
    },
  };
  const { gateway, registry, finished } = pipelineGateway({ providers: [providerOf("p", "anthropic")], accounts: [account("a1", "p", { maxConcurrency: 1 })], executor });

  const client = new AbortController();
  const res = await gateway.handle({
    request: new Request("http://127.0.0.1/v1/messages", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "p/m", max_tokens: 10, stream: true, messages: [{ role: "user", content: "Say hello" }] }),
      signal: client.signal,
    }),
    endpoint: "messages",
    peer: "127.0.0.1",
  });
  // Committed and streaming: the reply holds the account's slot and has not been reported yet.
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  expect(finished).toEqual([]);
  expect(registry.slots.inUse("a1")).toBe(1);

  client.abort();
  await upstreamAborted.promise;
  // The hook runs in the same abort event as the upstream call's abort, before this line resumes.
  expect(finished.map((f) => f.outcome)).toEqual(["client_closed"]);
  expect(registry.slots.inUse("a1")).toBe(0);
});
