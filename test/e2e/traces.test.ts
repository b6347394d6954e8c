/**
 * Route traces (SPEC O-2) record what the client was told: the translation warnings a reply carried in
 * `X-Switchyard-Warning` are in its stored trace, for whole replies (recorded before the attempt loop
 * returns) and streamed ones (recorded at the stream's end) alike.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["q", "openai-compatible"])}
accounts:
  - id: q1
    provider: q
    api_key: env:KEY_Q
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_Q: "sk-test-traces-account" } });
});
afterAll(async () => {
  await gw?.stop();
});

for (const stream of [false, true]) {
  test(`a Messages request with top_k to a Chat provider (stream: ${stream}): the dropped field is in the header and in the trace`, async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "q/glm-x", max_tokens: 50, top_k: 5, stream, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const header = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;
    expect(header.map((w) => w.code)).toContain("dropped_field");
    expect(header.find((w) => w.code === "dropped_field")!.message).toContain("top_k");
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.warnings).toEqual(header);
    expect(trace.outcome).toBe("ok");
  });
}

test("a refused request's trace holds the error answer the client got (status, kind, message), scrubbed of the key it presented", async () => {
  const presented = "sk-client-presented-0123456789abcdef";
  for (const r of [
    { body: { model: "q/glm-x", messages: "hi" }, status: 400, kind: "invalid_request", param: "messages" },
    // An unknown name echoed in the message: here it is the key the client presented (scrubbed in both).
    { body: { model: presented, messages: [{ role: "user", content: "hi" }] }, status: 404, kind: "model_not_found", param: "model" },
  ]) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${presented}` },
      body: JSON.stringify(r.body),
    });
    expect(res.status).toBe(r.status);
    const told = ((await res.json()) as { error: { message: string } }).error.message;
    gw.app.settle();
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.outcome).toBe("rejected");
    // with the type (and code) the Chat body carried: what the client read, beside the gateway's own kind
    expect(trace.error).toEqual({ status: r.status, kind: r.kind, message: told, param: r.param, clientType: "invalid_request_error", ...(r.kind === "model_not_found" ? { code: "model_not_found", clientCode: "model_not_found" } : {}) });
    expect(JSON.stringify(trace)).not.toContain(presented);
  }
});

test("a request every target failed has the last error the client got in its trace, next to the attempt", async () => {
  gw.fake.handle(() => ({ status: 400, json: { error: { message: "context too long for glm-x", type: "invalid_request_error" } } }));
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "q/glm-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(400);
    const told = ((await res.json()) as { error: { message: string } }).error.message;
    gw.app.settle();
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.outcome).toBe("error");
    expect(trace.attempts.length).toBe(1);
    expect(trace.error?.status).toBe(400);
    expect(trace.error?.message).toBe(told);
  } finally {
    gw.fake.handle(undefined as never);
  }
});
