/**
 * A request's bookkeeping (usage row, route trace, metrics, log line) runs after its reply has been
 * handed over (src/after-reply.ts, issue 17), yet every reader sees it right after the reply: the
 * store settles the queue before it reads, GET /metrics before it renders, the test gateway's log
 * before it is read. Here the gateway is called in process, so nothing but microtasks runs between
 * the reply and the reads (the queued work's own turn has not come yet).
 */
import { expect, test } from "bun:test";
import { AfterReply } from "../../src/after-reply.ts";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
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

/**
 * A Chat request through the gateway in process, its body handed over parsed (as the Responses WebSocket
 * does): the guard then awaits nothing that lets the event loop turn, so the previous request's queued
 * work runs only if this request settles the queue itself.
 */
function askInProcess(gw: TestGateway, headers: Record<string, string>, text: string): Promise<Response> {
  const value = { model: "oai/gpt-x", messages: [{ role: "user", content: text }] };
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return gw.app.gateway.handle({
    request: new Request(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers } }),
    body: { value, bytes, maxBytes: bytes.byteLength },
    endpoint: "chat",
    peer: "127.0.0.1",
  });
}

test("the next request sees what the previous one spent though that work is queued after its reply", async () => {
  // The attempt's success and binding, and the request's cost and key-limit use, are queued after the
  // reply too (docs/performance.md item 145): the next request settles the queue before its guard.
  const key = "sy-test-after-reply-budget-01";
  const gw = await startGateway(`${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: small, key: ${key}, limits: { budgets: [{ window: 5h, tokens: 100 }] } }
`);
  try {
    const ask = () => askInProcess(gw, { authorization: `Bearer ${key}` }, "the same conversation");
    // The first reply spends far more than its request's estimate (which the key's in-flight reservation
    // holds until the request is settled): only its settled spend puts the key over its budget.
    gw.fake.enqueue(simpleReply("openai-chat", { text: "one", usage: { input: 1000, output: 4 } }, false));
    gw.fake.enqueue(simpleReply("openai-chat", { text: "two", usage: { input: 1, output: 1 } }, false));
    const first = await ask();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-switchyard-cache")).toBe("miss");
    // No turn of the event loop in between: the first request's queued work has not run on its own.
    const second = await ask();
    expect(second.status).toBe(429);
    expect(await second.text()).toContain("budget");
    expect(gw.fake.requests.length).toBe(1);
  } finally {
    await gw.stop();
  }
});

test("the next turn of a conversation finds it bound to the account that served it, right after the reply", async () => {
  const gw = await startGateway();
  try {
    const ask = () => askInProcess(gw, {}, "a conversation about caches");
    gw.fake.enqueue(simpleReply("openai-chat", { text: "one", usage: { input: 21, output: 4 } }, false));
    gw.fake.enqueue(simpleReply("openai-chat", { text: "two", usage: { input: 21, output: 4 } }, false));
    const first = await ask();
    expect(first.headers.get("x-switchyard-cache")).toBe("miss");
    const second = await ask();
    expect(second.status).toBe(200);
    expect(second.headers.get("x-switchyard-cache")).toBe("hit");
  } finally {
    await gw.stop();
  }
});

test("a conversation's binding is dated at its reply though it is written after it: 15 minutes later the next turn finds none", async () => {
  // A clock that moves only when told (SPEC A-2's 15 minutes pass between two turns without a turn of the event loop).
  const clock = { t: Date.now(), now: () => clock.t, sleep: async (ms: number) => void (clock.t += ms) };
  const gw = await startGateway(undefined, { clock });
  try {
    const turns = async (text: string, gapMs: number) => {
      for (const reply of ["one", "two"]) gw.fake.enqueue(simpleReply("openai-chat", { text: reply, usage: { input: 21, output: 4 } }, false));
      const first = await askInProcess(gw, {}, text);
      expect(first.headers.get("x-switchyard-cache")).toBe("miss");
      clock.t += gapMs; // the first turn's binding is still queued
      return (await askInProcess(gw, {}, text)).headers.get("x-switchyard-cache");
    };
    expect(await turns("a conversation continued just in time", 15 * 60_000 - 1)).toBe("hit");
    expect(await turns("a conversation continued too late", 15 * 60_000)).toBe("miss");
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
