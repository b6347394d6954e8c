/**
 * Token savers and redaction through the real gateway (SPEC S-1, S-2, S-3, R-1, R-6) with the fake
 * upstream, asserting on the body the fake RECEIVED and on the route trace and log line:
 * - Claude Code's real turn 2 with a long tool result: shortened for an openai-compatible target,
 *   untouched for an anthropic target and with `X-Switchyard-Token-Saver: off`;
 * - Codex's real turn 2 through native Responses passthrough: shortened, re-serialised;
 * - redaction on: consistent placeholders across the body the upstream receives, counts in the trace,
 *   no value in the trace or the log; redaction off (the default): nothing redacted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clientRequest } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { sample, serverLog } from "../pipeline/save-tokens-fixtures/samples.ts";
import { tokenSaverSentence } from "../../pipeline/trace-words.ts";
import { traceLines } from "../../src/cli/calls.ts";
import { fakeProviders } from "../support/configs.ts";

const yaml = (settings = "") => `
${fakeProviders([["anth", "anthropic"], ["chat", "openai-compatible"], ["resp", "openai-responses"]])}${settings}
`;

const REMINDER = "\n\n<system-reminder>\n<total_tokens>14999968 tokens left</total_tokens>\n</system-reminder>";
const LOG = serverLog(1000);

/**
 * Claude Code's real turn 2 with its Bash result replaced by `content`, for `model`. Claude Code marks
 * that result with `cache_control`, which protects it from the savers (S-4, test/e2e/savers-cache.test.ts);
 * the marker is taken off here (a client caching only its system prompt).
 */
async function claudeTurn(model: string, content: string) {
  const body = await clientRequest("claude-code-tool-use-2.json");
  body.model = model;
  body.messages.at(-1).content[0].content = content;
  delete body.messages.at(-1).content[0].cache_control;
  return body;
}

async function post(gw: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  await res.text(); // the reply completes (usage, trace, log line)
  expect(res.status).toBe(200);
  return res;
}

const traceOf = async (gw: TestGateway, res: Response): Promise<any> =>
  (await fetch(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json();
const logOf = (gw: TestGateway, res: Response): any =>
  gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "request" && l.requestId === res.headers.get("x-request-id"));

describe("token savers (default settings: compression on, redaction off)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(yaml());
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("Claude Code → openai-compatible: the upstream receives the shortened tool result; savings in trace and log", async () => {
    gw.fake.reset();
    const res = await post(gw, "/v1/messages?beta=true", await claudeTurn("chat/glm-5", LOG + REMINDER));
    const sent = gw.fake.requests[0];
    expect(sent.format).toBe("openai-chat");
    const tool = sent.body.messages.find((m: any) => m.role === "tool");
    expect(tool.content).toContain("WARN  db: connection refused (ECONNREFUSED), retry 1/1000");
    expect(tool.content).toContain("… 997 similar lines elided");
    expect(tool.content).toContain("ERROR db: giving up after 1000 attempts");
    expect(tool.content.endsWith(REMINDER)).toBe(true);
    expect(tool.content.length).toBeLessThan(LOG.length / 20);

    const trace = await traceOf(gw, res);
    expect(trace.tokenSaver).toMatchObject({ results: 1, charsBefore: LOG.length + REMINDER.length, rules: { log: 1 } });
    expect(trace.tokenSaver.charsAfter).toBe(tool.content.length);
    expect(trace.tokenSaver.tokensSaved).toBe(Math.round((LOG.length + REMINDER.length - tool.content.length) / 4));
    expect(logOf(gw, res).tokenSaver).toEqual(trace.tokenSaver);
  });

  test("Claude Code → anthropic: the upstream receives Claude Code's body unchanged (S-2 prompt cache)", async () => {
    gw.fake.reset();
    const body = await claudeTurn("anth/claude-sonnet-4-5", LOG + REMINDER);
    const res = await post(gw, "/v1/messages?beta=true", body);
    expect(gw.fake.requests[0].body).toEqual({ ...body, model: "claude-sonnet-4-5" });
    expect((await traceOf(gw, res)).tokenSaver).toEqual({ skipped: "prompt_cache" });
  });

  test("X-Switchyard-Token-Saver: off → the openai-compatible upstream receives the whole tool result", async () => {
    gw.fake.reset();
    const res = await post(gw, "/v1/messages?beta=true", await claudeTurn("chat/glm-5", LOG + REMINDER), { "x-switchyard-token-saver": "off" });
    expect(gw.fake.requests[0].body.messages.find((m: any) => m.role === "tool").content).toBe(LOG + REMINDER);
    expect((await traceOf(gw, res)).tokenSaver).toEqual({ skipped: "header" });
  });

  test("a long tool result no rule recognises reaches the upstream whole, and the trace says the savers looked at it and shortened nothing (it was silent); a short one records nothing", async () => {
    gw.fake.reset();
    // 2,000 characters of prose: no diff, status, tree, listing, search hits or repeated lines
    const prose = Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1} of the design notes explains one more decision in words.`).join(" ");
    expect(prose.length).toBeGreaterThan(2000);
    const res = await post(gw, "/v1/messages?beta=true", await claudeTurn("chat/glm-5", prose));
    expect(gw.fake.requests[0].body.messages.find((m: any) => m.role === "tool").content).toBe(prose);
    const trace = await traceOf(gw, res);
    expect(trace.tokenSaver).toEqual({ unchanged: 1 });
    expect(logOf(gw, res).tokenSaver).toEqual({ unchanged: 1 });
    expect(tokenSaverSentence(trace.tokenSaver)).toBe(
      "Token savers shortened nothing: they looked at 1 tool result of 500 characters or more, but it was not a kind they shorten (diffs, git status, trees, directory listings, compiler output, search results, logs with repeated lines) or would not get 10 % shorter.",
    );
    // as `switchyard calls inspect` prints it
    expect(traceLines(trace).at(-1)).toBe(tokenSaverSentence(trace.tokenSaver));
    // nothing long enough to shorten: the savers had nothing to look at, and the trace says nothing
    const short = await post(gw, "/v1/messages?beta=true", await claudeTurn("chat/glm-5", "ok"));
    expect((await traceOf(gw, short)).tokenSaver).toBeUndefined();
  });

  test("Codex → openai-responses (native passthrough): the git diff output is shortened, the rest is Codex's body", async () => {
    gw.fake.reset();
    const body = await clientRequest("codex-tool-use-2.json");
    body.model = "resp/gpt-5-codex";
    const header = "Chunk ID: 9a1b2c\nWall time: 0.0400 seconds\nProcess exited with code 0\nOriginal token count: 2998\nOutput:\n";
    body.input.at(-1).output = header + sample("git-diff.txt");
    const res = await post(gw, "/v1/responses", body);
    const sent = gw.fake.requests[0].body;
    const out = sent.input.at(-1).output;
    expect(out.startsWith(header + "diff --git a/formats/codec.ts b/formats/codec.ts\n")).toBe(true);
    expect(out).toContain("+function carriesTaggedState(ctx: RequestContext): boolean {");
    expect(out).toMatch(/\[switchyard: diff shortened; elided: \d+ unchanged context lines, 7 index lines\]/);
    expect({ ...sent, input: sent.input.slice(0, -1) }).toEqual({ ...body, model: "gpt-5-codex", input: body.input.slice(0, -1) });
    expect((await traceOf(gw, res)).tokenSaver).toMatchObject({ results: 1, rules: { diff: 1 } });
  });

  test("redaction is off by default: PII reaches the upstream as written, no counts", async () => {
    gw.fake.reset();
    const res = await post(gw, "/v1/chat/completions", { model: "chat/glm-5", messages: [{ role: "user", content: "mail dana.lee@corp.example from 203.0.113.44" }] });
    expect(gw.fake.requests[0].body.messages[0].content).toBe("mail dana.lee@corp.example from 203.0.113.44");
    expect((await traceOf(gw, res)).redactions).toBeUndefined();
  });
});

describe("redaction enabled (settings.redaction.enabled: true)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(yaml("settings:\n  redaction: { enabled: true }\n"));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const EMAIL = "dana.lee@corp.example";
  const KEY = "sk-proj-Xq7fR2mP9sLk4Tz8Wv1Nb6Jc3Hd5";
  const IP = "203.0.113.44";

  test("Claude Code → anthropic (native passthrough): the upstream receives consistent placeholders everywhere", async () => {
    gw.fake.reset();
    const body = await claudeTurn("anth/claude-sonnet-4-5", `ssh: connected to ${IP}\nlast login by ${EMAIL}\n${REMINDER}`);
    body.system[2].text += `\nThe user's email is ${EMAIL}.`;
    body.messages[0].content.at(-1).text = `deploy with key ${KEY} to ${IP}, notify ${EMAIL}`;
    body.messages[1].content[1].input.command = `ssh deploy@${IP}`;
    const res = await post(gw, "/v1/messages?beta=true", body);
    const sent = gw.fake.requests[0].body;
    expect(sent.system[2].text).toEndWith("\nThe user's email is [EMAIL_1].");
    expect(sent.messages[0].content.at(-1).text).toBe("deploy with key [SECRET_1] to [IPV4_1], notify [EMAIL_1]");
    expect(sent.messages[1].content[1].input.command).toBe("ssh deploy@[IPV4_1]");
    expect(sent.messages[2].content[0].content).toBe(`ssh: connected to [IPV4_1]\nlast login by [EMAIL_1]\n${REMINDER}`);
    expect(sent.messages[1].content[1].id).toBe("toolu_fake_1");
    expect(sent.tools).toEqual(body.tools);
    const raw = JSON.stringify(gw.fake.requests[0].body);
    for (const v of [EMAIL, KEY, IP]) expect(raw).not.toContain(v);

    const trace = await traceOf(gw, res);
    expect(trace.redactions).toEqual({ secret: 1, email: 3, ipv4: 3 });
    expect(logOf(gw, res).redactions).toEqual(trace.redactions);
    for (const v of [EMAIL, KEY, IP]) {
      expect(JSON.stringify(trace)).not.toContain(v);
      expect(gw.logs.join("\n")).not.toContain(v);
    }
  });

  test("Chat client → openai-compatible: redacted, and a long tool result is still shortened after redaction", async () => {
    gw.fake.reset();
    const body = {
      model: "chat/glm-5",
      messages: [
        { role: "user", content: `why does ${IP} refuse connections?` },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "logs", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: LOG.replaceAll("10.0.3.7", IP) },
      ],
    };
    const res = await post(gw, "/v1/chat/completions", body);
    const sent = gw.fake.requests[0].body;
    expect(sent.messages[0].content).toBe("why does [IPV4_1] refuse connections?");
    expect(sent.messages[2].content).toContain("connect ECONNREFUSED [IPV4_1]:5432");
    expect(sent.messages[2].content).toContain("… 997 similar lines elided");
    const trace = await traceOf(gw, res);
    expect(trace.redactions).toEqual({ ipv4: 2 });
    expect(trace.tokenSaver).toMatchObject({ results: 1, rules: { log: 1 } });
  });
});
