/**
 * A committed stream lets go of the request's bytes while it streams on (pipeline/context.ts
 * `releaseSentBodies`, docs/performance.md item 271): a long stream no longer keeps the body it sent
 * upstream alive for minutes (issue 17: memory promoted to the old generation under load), and the reply
 * is unchanged.
 */
import { expect, test } from "bun:test";
import type { Executor, UpstreamCall } from "../../pipeline/execute.ts";
import { account, providerOf } from "../accounts/helpers.ts";
import { pipelineGateway } from "../support/pipeline-gateway.ts";

const chunk = (text: string, finish?: string) =>
  `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }], ...(finish ? { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 } } : {}) })}\r\n\r\n`;

test("a committed Gemini stream holds no reference to the bytes it sent upstream, and streams on to its end", async () => {
  const enc = new TextEncoder();
  const rest = Promise.withResolvers<void>();
  let sent: WeakRef<object> | undefined;
  let sentKind = "";
  const executor: Executor = {
    async send(call: UpstreamCall) {
      sentKind = call.body instanceof Uint8Array ? "bytes" : typeof call.body;
      if (call.body instanceof Uint8Array) sent = new WeakRef(call.body);
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          c.enqueue(enc.encode(chunk("Hel")));
          await rest.promise;
          c.enqueue(enc.encode(chunk("lo", "STOP")));
          c.close();
        },
      });
      return { status: 200, headers: new Headers({ "content-type": "text/event-stream" }), body };
    },
  };
  const { gateway, finished } = pipelineGateway({ providers: [providerOf("p", "gemini")], accounts: [account("a1", "p")], executor });
  const res = await gateway.handle({
    request: new Request("http://127.0.0.1/v1beta/models/p/m:streamGenerateContent?alt=sse", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Say hello ".repeat(200) }] }] }),
    }),
    endpoint: "gemini",
    peer: "127.0.0.1",
    pathModel: "p/m",
    pathStream: true,
  });
  expect(res.status).toBe(200);
  expect(finished).toEqual([]); // committed and streaming on
  expect(sentKind).toBe("bytes"); // the client's bytes went upstream as they came
  await Bun.sleep(1);
  Bun.gc(true);
  expect(sent?.deref()).toBeUndefined();

  rest.resolve();
  const text = await res.text();
  expect(text).toContain('"Hel"');
  expect(text).toContain('"lo"');
  expect(finished.map((f) => f.outcome)).toEqual(["ok"]);
});
