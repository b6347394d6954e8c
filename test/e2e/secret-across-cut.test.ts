/**
 * A secret across a cut is scrubbed whole (SPEC O-2, O-6): the route trace keeps 300 characters of an
 * attempt's error and the flight recorder `max_body_bytes` of each body; both are scrubbed as a whole
 * before they are cut, so an account key that an upstream echoes right where the cut falls does not
 * survive in part. The key here has no credential shape (no `sk-` prefix): only the exact match of the
 * instance's own secret can catch it, and a part of it is no longer that secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { providersAtFake } from "../support/configs.ts";
import { ACCOUNT_KEY, anthropicBrokenOff, PIECE, piecesIn } from "../support/echoed-key.ts";

const yaml = (settings: string) => `
${providersAtFake(["o5", "openai"], ["fa", "anthropic"])}
accounts:
  - id: o5-1
    provider: o5
    api_key: env:O5_KEY
  - id: fa-1
    provider: fa
    api_key: env:O5_KEY
settings:
  ${settings}
`;

/**
 * The fake answers `PAD:n` with a 400 whose message is n × "e", then the key it was sent: as an
 * OpenAI error, or for an Anthropic account as plain text (no JSON: the client's message is that text,
 * cut at 500 characters); `LATE:n` with a stream that ends in an error event of those words.
 */
function echoPadded(gw: TestGateway): void {
  gw.fake.handle((req) => {
    const key = req.headers["x-api-key"] ?? (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const late = JSON.stringify(req.body ?? {}).match(/LATE:(\d+)/);
    if (late) return { sse: lateErrorStream(`${"e".repeat(Number(late[1]))} key: ${key}`) };
    const last = JSON.stringify(req.body ?? {}).match(/PAD:(\d+)/);
    if (!last) return undefined;
    if (req.format === "anthropic-messages") return { status: 400, headers: { "content-type": "text/plain" }, text: `${"e".repeat(Number(last[1]))} key: ${key}` };
    return { status: 400, json: { error: { message: `${"e".repeat(Number(last[1]))} key: ${key}`, type: "invalid_request_error", param: null, code: null } } };
  });
}

/** An Anthropic stream that breaks off after some text with an error event whose data is `text`, not JSON. */
const lateErrorStream = (text: string) => anthropicBrokenOff(["partial"], text);

const chat = (url: string, content: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "o5/gpt-x", messages: [{ role: "user", content }] }),
  });

/** `switchyard calls inspect ID ARGS… --url URL` from source: its output. */
async function inspect(gw: TestGateway, id: string, args: string[] = []): Promise<string> {
  const p = Bun.spawn([...SOURCE_CLI, "calls", "inspect", id, "--url", gw.url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect([code, stderr]).toEqual([0, ""]);
  return stdout;
}

describe("route traces: an attempt's error cut at 300 characters", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(yaml("max_attempts: 1"), { env: { O5_KEY: ACCOUNT_KEY } });
    echoPadded(gw);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const traceOf = async (routeId: string) => {
    const r = await fetch(`${gw.url}/admin/api/route-traces/${routeId}`);
    expect(r.status).toBe(200);
    return await r.text();
  };

  test("a key the cut goes through is [redacted] or left out, never kept in part: API and calls inspect", async () => {
    // Where the upstream's message starts in the trace's error text.
    const probe = await chat(gw.url, "PAD:0");
    expect(probe.status).toBe(400);
    await probe.text();
    const probeError: string = JSON.parse(await traceOf(probe.headers.get("x-switchyard-route-id")!)).attempts[0].error;
    const lead = probeError.indexOf(" key: ");
    expect(lead).toBeGreaterThanOrEqual(0);
    expect(probeError).toContain(" key: [redacted]");

    // The key starts 1…32 characters before the cut at 300 (its first `PIECE`-character piece and more before it).
    let straddled = 0;
    for (const before of [1, 4, 9, 16, 25, 32]) {
      const n = 300 - before - lead - " key: ".length;
      const res = await chat(gw.url, `PAD:${n}`);
      expect(res.status).toBe(400);
      const clientText = await res.text();
      expect(clientText).toContain("key: [redacted]");
      const routeId = res.headers.get("x-switchyard-route-id")!;
      const trace = await traceOf(routeId);
      const error: string = JSON.parse(trace).attempts[0].error;
      expect(error.length).toBeLessThanOrEqual(300);
      expect(error).toStartWith(probeError.slice(0, lead));
      expect([before, piecesIn(trace)]).toEqual([before, []]);
      if (before >= PIECE) {
        straddled++;
        const text = await inspect(gw, routeId);
        expect(text).toContain("eeee");
        expect([before, piecesIn(text)]).toEqual([before, []]);
        const json = await inspect(gw, routeId, ["--json"]);
        expect(piecesIn(json)).toEqual([]);
      }
    }
    expect(straddled).toBe(4);
  });

  test("an in-band error event that is not JSON, after some text, with the key across the 200 characters its message keeps: the trace keeps no piece", async () => {
    const lead = "The upstream sent an error event that is not JSON: ".length;
    for (const before of [9, 20]) {
      const res = await fetch(`${gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "fa/claude-x", max_tokens: 10, stream: true, messages: [{ role: "user", content: `LATE:${200 - before - " key: ".length}` }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const trace = await traceOf(res.headers.get("x-switchyard-route-id")!);
      const parsed = JSON.parse(trace);
      expect(parsed.outcome).toBe("upstream_error");
      expect(parsed.attempts[0].error.slice(0, lead + 4)).toBe("The upstream sent an error event that is not JSON: eeee");
      expect(parsed.attempts[0].error).toEndWith(" key: [redacted]");
      expect([before, piecesIn(trace)]).toEqual([before, []]);
    }
  });

  test("a plain-text error body with the key across the 500-character cut of the client's message: neither the answer nor the trace keeps a piece", async () => {
    for (const before of [9, 20, 32]) {
      const res = await fetch(`${gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "fa/claude-x", max_tokens: 10, messages: [{ role: "user", content: `PAD:${500 - before - " key: ".length}` }] }),
      });
      expect(res.status).toBe(400);
      const answer = await res.text();
      expect(JSON.parse(answer).error.message).toStartWith("eeee");
      expect([before, piecesIn(answer)]).toEqual([before, []]);
      expect([before, piecesIn(await traceOf(res.headers.get("x-switchyard-route-id")!))]).toEqual([before, []]);
    }
  });
});

describe("flight recorder: bodies cut at max_body_bytes", () => {
  // The upstream's 400 reply as the fake writes it, the key at `at`.
  const reply = (n: number) => JSON.stringify({ error: { message: `${"e".repeat(n)} key: ${ACCOUNT_KEY}`, type: "invalid_request_error", param: null, code: null } });
  const N = 40;
  const at = reply(N).indexOf(ACCOUNT_KEY);
  // The cut falls 20 characters into the key.
  const MAX = at + 20;
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(yaml(`flight_recorder: { enabled: true, max_body_bytes: ${MAX} }`), { env: { O5_KEY: ACCOUNT_KEY } });
    echoPadded(gw);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("the upstream's reply and the client's body: no piece of the key, in the API and in calls inspect --bodies", async () => {
    // The client's own body carries the key across the cut too (a pasted `.env`, say).
    const opening = JSON.stringify({ model: "o5/gpt-x", messages: [{ role: "user", content: `PAD:${N} ` }] }).indexOf(`PAD:${N} `) + `PAD:${N} `.length;
    const content = `PAD:${N} ${"x".repeat(at - opening)}${ACCOUNT_KEY} tail`;
    const res = await chat(gw.url, content);
    expect(res.status).toBe(400);
    await res.text();
    const routeId = res.headers.get("x-switchyard-route-id")!;
    const r = await fetch(`${gw.url}/admin/api/calls/${routeId}/recording`);
    expect(r.status).toBe(200);
    const raw = await r.text();
    const rec = JSON.parse(raw);
    // Both cut where the key is: the fake's reply as sent, the client's body as sent.
    expect(gw.fake.requests.at(-1)!.body.messages[0].content).toBe(content);
    expect(rec.attempts[0].reply).toMatchObject({ truncated: true, bytes: reply(N).length });
    expect(rec.attempts[0].reply.body).toBe(reply(N).slice(0, at));
    expect(rec.client.truncated).toBe(true);
    expect(rec.client.body).toBe(JSON.stringify({ model: "o5/gpt-x", messages: [{ role: "user", content }] }).slice(0, at));
    expect(piecesIn(raw)).toEqual([]);

    const text = await inspect(gw, routeId, ["--bodies"]);
    expect(text).toContain("--- upstream reply");
    expect(piecesIn(text)).toEqual([]);
  });

  test("a key that ends before the cut shows [redacted]; one the cut goes through is left out", async () => {
    const res = await chat(gw.url, `PAD:1 ${ACCOUNT_KEY}`);
    expect(res.status).toBe(400);
    await res.text();
    const rec = (await (await fetch(`${gw.url}/admin/api/calls/${res.headers.get("x-switchyard-route-id")}/recording`)).json()) as any;
    expect(rec.attempts[0].reply.body).toStartWith(`{"error":{"message":"e key: [redacted]`);
    // The client's body: the key begins before the cut and ends after it.
    expect(rec.client.body).toEndWith('"content":"PAD:1 ');
    expect(piecesIn(JSON.stringify(rec))).toEqual([]);
  });
});
