/**
 * A request's bookkeeping (usage row, route trace, metrics, log line) runs after its reply has been
 * handed over (src/after-reply.ts, issue 17), yet every reader sees it right after the reply: the
 * store settles the queue before it reads, GET /metrics before it renders, the test gateway's log
 * before it is read. Here the gateway is called in process, so nothing but microtasks runs between
 * the reply and the reads (the queued work's own turn has not come yet).
 */
import { expect, test } from "bun:test";
import { AfterReply } from "../../src/after-reply.ts";
import { startGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

test("a reply's usage row, trace, metrics and log line are there for a reader as soon as the reply is", async () => {
  const gw = await startGateway();
  try {
    gw.fake.enqueue(simpleReply("openai-chat", { text: "hello there", usage: { input: 21, output: 4 } }, false));
    const request = new Request(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }),
    });
    const res = await gw.app.gateway.handle({ request, endpoint: "chat", peer: "127.0.0.1" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe("hello there");
    const requestId = res.headers.get("x-request-id")!;
    const routeId = res.headers.get("x-switchyard-route-id")!;
    expect(routeId).toBeTruthy();

    const [call] = await gw.app.store.recentCalls(1);
    expect(call).toMatchObject({ requestId, routeId, providerId: "oai", outcome: "ok", status: 200, usage: { inputTokens: 21, outputTokens: 4 } });
    expect(await gw.app.store.getTrace(routeId)).toMatchObject({ routeId, requestId, outcome: "ok", status: 200 });
    expect(await gw.app.metrics.text()).toContain('switchyard_requests_total{endpoint="chat",provider="oai",outcome="ok"} 1');
    const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "request");
    expect(line).toMatchObject({ requestId, routeId, outcome: "ok", usage: { inputTokens: 21, outputTokens: 4 } });
  } finally {
    await gw.stop();
  }
});

test("AfterReply runs its tasks in order after the current turn, or at once when settled; a failing task is reported and the rest still run", async () => {
  const ran: string[] = [];
  const errors: unknown[] = [];
  const q = new AfterReply((e) => errors.push(e));
  q.add(() => ran.push("a"));
  q.add(() => {
    throw new Error("boom");
  });
  q.add(() => {
    ran.push("b");
    q.add(() => ran.push("c")); // queued while settling: runs in the same settle
  });
  expect(ran).toEqual([]);
  q.settle();
  expect(ran).toEqual(["a", "b", "c"]);
  expect(errors.map((e) => (e as Error).message)).toEqual(["boom"]);

  q.add(() => ran.push("d"));
  await Promise.resolve();
  expect(ran).toEqual(["a", "b", "c"]); // not within the current turn's microtasks
  await new Promise((r) => setImmediate(r));
  expect(ran).toEqual(["a", "b", "c", "d"]);
});
