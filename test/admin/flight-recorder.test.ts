/**
 * The flight recorder (SPEC O-6) through the real gateway on a translated stream: an OpenAI Chat client
 * streaming from an Anthropic provider. The recording holds the client's body, the Anthropic body sent
 * upstream, the Anthropic events that came back and the Chat chunks the client got — secrets scrubbed —
 * at `GET /admin/api/calls/{id}/recording`; it is off by default, keeps only the last `max_requests`,
 * and cuts bodies at `max_body_bytes` saying so.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { providersAtFake } from "../support/configs.ts";

const yaml = (recorder: string) => `
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
settings:
  ${recorder}
`;
const ENV = { KEY_A1: "sk-test-account-one-secret" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(yaml("flight_recorder: { enabled: true, max_requests: 2 }"), { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});

const chat = (url: string, content: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sy-client-presented-key-1234" },
    body: JSON.stringify({ model: "p/claude-x", stream: true, messages: [{ role: "user", content }] }),
  });

const recording = async (url: string, id: string) => fetch(`${url}/admin/api/calls/${encodeURIComponent(id)}/recording`);

describe("the flight recorder on a translated stream", () => {
  test("client body, upstream body, upstream events and client events, secrets scrubbed", async () => {
    const res = await chat(gw.url, `hello; my key is ${ENV.KEY_A1}`);
    expect(res.status).toBe(200);
    const clientText = await res.text();
    const routeId = res.headers.get("x-switchyard-route-id")!;
    const requestId = res.headers.get("x-request-id")!;

    const r = await recording(gw.url, routeId);
    expect(r.status).toBe(200);
    const raw = await r.text();
    expect(raw).not.toContain(ENV.KEY_A1);
    expect(raw).not.toContain("sy-client-presented-key-1234");
    const rec = JSON.parse(raw);
    expect(rec).toMatchObject({ requestId, routeId, endpoint: "chat", clientFormat: "openai-chat", requestedModel: "p/claude-x" });

    // The client's body as sent, with the secret replaced.
    expect(rec.client.truncated).toBe(false);
    expect(JSON.parse(rec.client.body)).toEqual({ model: "p/claude-x", stream: true, messages: [{ role: "user", content: "hello; my key is [redacted]" }] });

    // One attempt: the Anthropic body that went upstream, the Anthropic events that came back.
    expect(rec.attempts).toHaveLength(1);
    const a = rec.attempts[0];
    expect(a).toMatchObject({ n: 1, target: "p/claude-x", accountId: "a1", upstreamFormat: "anthropic-messages", status: 200 });
    const sentUpstream = JSON.parse(a.request.body);
    expect(sentUpstream.model).toBe("claude-x");
    expect(sentUpstream.stream).toBe(true);
    expect(sentUpstream.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hello; my key is [redacted]" }] }]);
    expect(sentUpstream).toEqual({ ...gw.fake.requests.at(-1)!.body, messages: sentUpstream.messages });
    const upstreamTypes = a.reply.events.map((e: any) => e.event);
    expect(upstreamTypes[0]).toBe("message_start");
    expect(upstreamTypes).toContain("content_block_delta");
    expect(upstreamTypes.at(-1)).toBe("message_stop");
    expect(a.reply.bytes).toBe(new TextEncoder().encode(a.reply.body).byteLength);

    // What the client got: Chat chunks and [DONE], byte for byte.
    expect(rec.response.status).toBe(200);
    expect(rec.response.body).toBe(clientText);
    const data = rec.response.events.map((e: any) => e.data);
    expect(data.at(-1)).toBe("[DONE]");
    expect(JSON.parse(data[0]).object).toBe("chat.completion.chunk");
    const text = data
      .slice(0, -1)
      .map((d: string) => JSON.parse(d).choices?.[0]?.delta?.content ?? "")
      .join("");
    // The translation side by side with its input: the Chat text is the Anthropic text deltas' text.
    const upstreamText = a.reply.events
      .filter((e: any) => e.event === "content_block_delta")
      .map((e: any) => JSON.parse(e.data).delta.text ?? "")
      .join("");
    expect(upstreamText.length).toBeGreaterThan(0);
    expect(text).toBe(upstreamText);

    // The request id finds it too.
    expect((await recording(gw.url, requestId)).status).toBe(200);
  });

  test("an upstream error is recorded with its body, and the error the client got", async () => {
    gw.fake.enqueue({ status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "bad thing" } } });
    const res = await chat(gw.url, "make it fail");
    expect(res.status).toBe(400);
    const got = await res.text();
    const rec = (await (await recording(gw.url, res.headers.get("x-request-id")!)).json()) as any;
    expect(rec.attempts[0].status).toBe(400);
    expect(rec.attempts[0].reply.body).toContain("bad thing");
    expect(rec.response).toMatchObject({ status: 400, body: got });
  });

  test("only the last max_requests are kept; unknown ids are 404", async () => {
    const first = await chat(gw.url, "one");
    await first.text();
    for (const n of ["two", "three"]) await (await chat(gw.url, n)).text();
    const evicted = await recording(gw.url, first.headers.get("x-request-id")!);
    expect(evicted.status).toBe(404);
    expect(((await evicted.json()) as any).error.message).toContain("exists, but this instance keeps no recording of it: the flight recorder keeps the last 2 requests");
    const missing = await recording(gw.url, "sy_nope");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.message).toBe("No call sy_nope is known (no route trace of that id): take a route id from switchyard calls list or a reply's X-Switchyard-Route-Id header.");
  });
});

/** `switchyard calls inspect ID ARGS… --url URL` from source, with its exit code and both streams. */
async function inspect(url: string, id: string, args: string[]) {
  const p = Bun.spawn([...SOURCE_CLI, "calls", "inspect", id, "--url", url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

describe("switchyard calls inspect ID --bodies", () => {
  test("prints the trace, then each body: client, sent upstream, upstream reply, sent to the client", async () => {
    const res = await chat(gw.url, "from the cli");
    const clientText = await res.text();
    const routeId = res.headers.get("x-switchyard-route-id")!;
    // Asynchronously: the gateway answering the CLI runs in this process.
    const run = async (args: string[]) => {
      const p = Bun.spawn([...SOURCE_CLI, "calls", "inspect", routeId, "--url", gw.url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { code, stdout, stderr };
    };
    const text = await run(["--bodies"]);
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    const order = ["=== client request (openai-chat", "=== attempt 1: p/claude-x @ a1 (anthropic-messages) → 200", "--- sent upstream", "--- upstream reply", "=== sent to the client: 200"].map((h) => text.stdout.indexOf(h));
    for (const i of order) expect(i).toBeGreaterThan(0);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text.stdout).toContain('"content": "from the cli"');
    expect(text.stdout).toContain("event: message_start");
    expect(text.stdout).toContain(clientText.trim());
    expect(text.stdout).not.toContain(ENV.KEY_A1);

    const json = JSON.parse((await run(["--bodies", "--json"])).stdout);
    expect(json.trace.routeId).toBe(routeId);
    expect(json.recording.routeId).toBe(routeId);
    expect(json.recording.response.body).toBe(clientText);
  });
});

describe("flight recorder settings", () => {
  test("off by default: nothing is recorded, and calls inspect --bodies prints the trace and says how to turn the recorder on", async () => {
    const off = await startGateway(yaml("max_attempts: 8"), { env: ENV });
    try {
      const res = await chat(off.url, "hi");
      await res.text();
      const routeId = res.headers.get("x-switchyard-route-id")!;
      const r = await recording(off.url, res.headers.get("x-request-id")!);
      expect(r.status).toBe(404);
      expect(((await r.json()) as any).error.message).toContain("exists, but its bodies were not recorded: the flight recorder is off (the default). Turn it on with settings.flight_recorder: {enabled: true} in the config file");

      const cli = await inspect(off.url, routeId, ["--bodies"]);
      expect(cli.code).toBe(1);
      // the trace as lines to read (the JSON is --json's)
      expect(cli.stdout.split("\n").slice(0, 3)).toEqual([expect.stringMatching(new RegExp(`^${routeId}  \\d{4}-`)), "requested   p/claude-x (openai-chat)", expect.stringMatching(/^outcome     ok 200, \d+ ms$/)]);
      expect(cli.stderr).toStartWith(`no bodies: The call ${routeId} exists, but its bodies were not recorded: the flight recorder is off (the default). Turn it on with settings.flight_recorder: {enabled: true}`);
      const json = await inspect(off.url, routeId, ["--bodies", "--json"]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ trace: { routeId }, recording: null });

      // An id nobody knows: one line saying where route ids come from.
      const unknown = await inspect(off.url, "sy_unknown", ["--bodies"]);
      expect(unknown.code).toBe(1);
      expect(unknown.stdout).toBe("");
      expect(unknown.stderr).toContain("error 404: No route trace sy_unknown: take a route id from switchyard calls list");
    } finally {
      await off.stop();
    }
  });

  test("bodies longer than max_body_bytes are cut and marked truncated, with their full size", async () => {
    const small = await startGateway(yaml("flight_recorder: { enabled: true, max_body_bytes: 64 }"), { env: ENV });
    try {
      const content = "x".repeat(500);
      const res = await chat(small.url, content);
      await res.text();
      const rec = (await (await recording(small.url, res.headers.get("x-request-id")!)).json()) as any;
      const full = JSON.stringify({ model: "p/claude-x", stream: true, messages: [{ role: "user", content }] });
      expect(rec.client).toMatchObject({ truncated: true, bytes: full.length, body: full.slice(0, 64) });
      expect(rec.attempts[0].request.truncated).toBe(true);
      expect(rec.response.truncated).toBe(true);
    } finally {
      await small.stop();
    }
  });

  test("with redaction on, every key redaction replaces upstream is [redacted] in the recording: GitHub, GitLab, Slack and AWS keys too (newuser15 N7)", async () => {
    // Made up, and built from parts so that no scanner mistakes this file for a leak.
    const keys = {
      github: "gh" + "p_" + "abcdefghijklmnopqrstuvwxyz0123456789",
      aws: "AK" + "IA" + "IOSFODNN7EXAMPLE",
      slack: "xo" + "xb-" + "123456789012-abcdefghijkl",
      gitlab: "gl" + "pat-" + "abcdefghijklmnopqrst",
      openai: "sk-" + "proj-" + "AbCdEfGhIjKlMnOpQrStUv1234567890",
    };
    const red = await startGateway(yaml("flight_recorder: { enabled: true }\n  redaction: { enabled: true }"), { env: ENV });
    try {
      const content = `a ${keys.github} b ${keys.aws} c ${keys.slack} d ${keys.gitlab} e ${keys.openai}`;
      const res = await chat(red.url, content);
      expect(res.status).toBe(200);
      await res.text();
      // redaction replaced each upstream
      expect(red.fake.requests.at(-1)!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "a [SECRET_1] b [SECRET_2] c [SECRET_3] d [SECRET_4] e [SECRET_5]" }] }]);
      const raw = await (await recording(red.url, res.headers.get("x-request-id")!)).text();
      for (const k of Object.values(keys)) expect(raw).not.toContain(k);
      expect(JSON.parse(JSON.parse(raw).client.body).messages).toEqual([{ role: "user", content: "a [redacted] b [redacted] c [redacted] d [redacted] e [redacted]" }]);
    } finally {
      await red.stop();
    }
  });

  test("with redaction on, the client request is what the client sent and the attempt's body what went upstream", async () => {
    // newuser11's tryout: the "client request" held the redacted body (not what the client sent) while
    // the reply sent to the client held the restored values.
    const red = await startGateway(yaml("flight_recorder: { enabled: true }\n  redaction: { enabled: true }"), { env: ENV });
    try {
      const content = "Contact john.doe@example.com about it";
      const res = await chat(red.url, content);
      await res.text();
      const rec = (await (await recording(red.url, res.headers.get("x-request-id")!)).json()) as any;
      expect(JSON.parse(rec.client.body).messages).toEqual([{ role: "user", content }]);
      expect(JSON.parse(rec.attempts[0].request.body).messages).toEqual([{ role: "user", content: [{ type: "text", text: "Contact [EMAIL_1] about it" }] }]);
      expect(red.fake.requests.at(-1)!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Contact [EMAIL_1] about it" }] }]);
    } finally {
      await red.stop();
    }
  });
});
