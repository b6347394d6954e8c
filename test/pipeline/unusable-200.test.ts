/**
 * SPEC 6.3's last row for a 200 the gateway cannot use (pipeline/commit-failures.ts): a stream that
 * ends before its first byte, an HTML page, a JSON body not of the format's shape, a body that is not
 * JSON. No same-account retry, no other account of the target (the row says next target), no cooldown,
 * nothing toward the provider's circuit; the combo's next target serves. An HTML page is named as one,
 * with its title (scrubbed of secrets, cut to 80 characters) and the reply's Content-Type.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { accountsOf, combosOf, providersAtFakePaths } from "../support/configs.ts";
import { postChatHi, startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
${providersAtFakePaths(["p", "openai"], ["q", "openai"])}
${accountsOf(["p-1", "p", "KEY_A"], ["p-2", "p", "KEY_B"], ["q-1", "q", "KEY_C"])}
${combosOf(["chain", ["p/m", "q/m"]])}
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaaaaaa", KEY_B: "sk-test-bbbbbbbbbbbb", KEY_C: "sk-test-cccccccccccc" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

const HTML = `<!DOCTYPE html><html><head><title>  Corporate   sign-in &amp; sk-test-aaaaaaaaaaaa ${"x".repeat(100)}</title></head><body>Sign in</body></html>`;
const UNUSABLE: Array<[string, FakeReply]> = [
  ["an empty stream", { sse: "" }],
  ["an HTML page", { text: HTML, headers: { "content-type": "text/html; charset=utf-8" } }],
  ["JSON not of the format's shape", { json: { hello: "world" } }],
  ["a body that is not JSON", { text: "OK", headers: { "content-type": "text/plain" } }],
];

async function chat(model: string, stream: boolean): Promise<{ status: number; body: string }> {
  const res = await postChatHi(gw.url, model, stream);
  return { status: res.status, body: await res.text() };
}

const callsTo = (provider: string) => gw.fake.requests.filter((r) => r.path.startsWith(`/${provider}/`));

describe("a 200 the gateway cannot use", () => {
  for (const [what, reply] of UNUSABLE) {
    for (const stream of [true, false]) {
      test(`${what} (${stream ? "streamed" : "whole"} request): one call to the target, none more on its other account, the combo's next target serves`, async () => {
        gw.fake.reset();
        gw.fake.handle((r: ReceivedRequest) => (r.path.startsWith("/q/") ? simpleReply("openai-chat", { text: "Served by q.", model: r.model }, r.stream) : reply));
        const r = await chat("chain", stream);
        expect(r.status).toBe(200);
        expect(stream ? [...r.body.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join("") : JSON.parse(r.body).choices[0].message.content).toBe("Served by q.");
        expect([callsTo("p").length, callsTo("q").length]).toEqual([1, 1]);
      });
    }

    test(`${what}, no other target: a 502 after one attempt per account at most, and the account is not cooled down`, async () => {
      gw.fake.reset();
      gw.fake.handle(() => reply);
      const r = await chat("p/solo", true);
      expect(r.status).toBe(502);
      const keys = callsTo("p").map((c) => c.headers.authorization);
      expect(keys.length).toBeGreaterThanOrEqual(1);
      expect(new Set(keys).size).toBe(keys.length); // never the same account twice
      // no cooldown: the same model is served at once when the upstream answers
      gw.fake.handle((q: ReceivedRequest) => simpleReply("openai-chat", { text: "Served.", model: q.model }, q.stream));
      const again = await chat("p/solo", true);
      expect(again.status).toBe(200);
    });
  }

  test("an HTML page: the message says HTML, names the Content-Type and the page's title (cut to 80 characters, without the key it echoed)", async () => {
    gw.fake.reset();
    gw.fake.handle(() => UNUSABLE[1]![1]);
    const r = await chat("p/html", false);
    const message: string = JSON.parse(r.body).error.message;
    expect(r.status).toBe(502);
    expect(message).toContain("Content-Type text/html; charset=utf-8");
    expect(message).toContain("HTML page, not JSON");
    expect(message).toContain('its title: "Corporate sign-in & ');
    expect(message).not.toContain("sk-test-aaaaaaaaaaaa");
    const title = /its title: "([^"]*)"/.exec(message)![1]!;
    expect(title.endsWith("…")).toBe(true);
    expect(title.length).toBeLessThanOrEqual(81 + 20); // 80 characters (and the scrubber's placeholder for the key)
  });

  test("the route trace shows the upstream's 200 with the error text (calls show / the call view: '200' and the error), not a 502 it never sent", async () => {
    gw.fake.reset();
    gw.fake.handle(() => UNUSABLE[3]![1]);
    const res = await postChatHi(gw.url, "p/trace", false);
    expect(res.status).toBe(502); // the client's status: the gateway's
    await res.text();
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts[0]).toMatchObject({ status: 200, classification: "empty_reply" });
    expect(trace.attempts[0]!.error).toStartWith("Upstream p answered HTTP 200 (Content-Type text/plain) with a reply the gateway cannot use: ");
  });

  for (const stream of [true, false]) {
    test(`a stream cut after some bytes (no finish; ${stream ? "streamed" : "whole"} request) keeps the 5xx row: retried on the same account`, async () => {
      gw.fake.reset();
      gw.fake.handle(() => ({ sse: 'data: {"id":"x","object":"chat.completion.chunk","choices":[]}\n\n' }));
      const r = await chat(`p/cut-${stream}`, stream);
      expect(r.status).toBe(502);
      expect(callsTo("p").length).toBeGreaterThan(1);
      const keys = callsTo("p").map((c) => c.headers.authorization);
      expect(new Set(keys).size).toBeLessThan(keys.length); // the same account again
    });
  }
});
