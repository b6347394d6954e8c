/**
 * A translated stream's exact output, pinned (docs/performance.md item 107): the bytes a client
 * reads from `TranslatedStreamDriver` (provider SSE → decoder → normalizer → client encoder → UTF-8)
 * are part of the contract (SDKs and recorded clients compare ids, order and members), so a change
 * made for speed in the SSE reader, a decoder, the normalizer or a client encoder must leave every byte
 * as it was. Every recorded upstream stream of the shared fixtures (four formats), every regression
 * case's upstream stream, the bench upstream's Chat stream, and hand-made Chat streams for what no
 * recording has (text needing escapes, multi-byte characters, OpenAI's `obfuscation` padding, CRLF
 * line ends, comments, log probabilities, a stream cut short, an in-band error) go through the driver
 * to an Anthropic Messages, an OpenAI Responses and a Gemini client: read whole (as the commit point
 * holds a short reply) and pushed in 7-byte and 1-byte reads (the Chat streams; 7-byte ones only for
 * the others). Ids are made deterministic (`newId`, `now`, and `Math.random` seeded for the decoders'
 * synthesized call ids); each output's SHA-256 is compared with the one recorded before those items
 * (test/fixtures/translated-stream-bytes.json; `UPDATE_TRANSLATED_GOLDEN=1` rewrites it, for a change
 * that means to change the bytes).
 */
import { describe, expect, test } from "bun:test";
import { expectPinnedDigests } from "../support/pinned-digests.ts";
import { join } from "node:path";
import { caseIds, manifest, recordedBytes, regressionCase } from "../support/fixtures.ts";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { TranslatedStreamDriver } from "../../pipeline/re-translate.ts";
import { benchReply } from "../../scripts/bench-upstream.ts";

const GOLDEN = join(import.meta.dir, "..", "fixtures", "translated-stream-bytes.json");
const UPDATE = process.env.UPDATE_TRANSLATED_GOLDEN === "1";
const utf8 = new TextEncoder();

const familyOf = (f: WireFormat) => (f === "anthropic-messages" ? "anthropic" : f === "gemini" ? "gemini" : "openai");

const chunk = (obj: Record<string, unknown>) => `data: ${JSON.stringify(obj)}\n\n`;
const base = { id: "chatcmpl-x1", object: "chat.completion.chunk", created: 1700000000, model: "gpt-x" };
const delta = (d: Record<string, unknown>, extra: Record<string, unknown> = {}, finish: string | null = null) =>
  chunk({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }], ...extra });
const usage = chunk({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
const words = (ws: string[], extra: (i: number) => Record<string, unknown> = () => ({})) => ws.map((w, i) => delta({ content: w }, extra(i))).join("");

/** Chat streams no recording has. */
const SYNTHETIC_CHAT: Record<string, string> = {
  "plain words": delta({ role: "assistant", content: "" }) + words(["Hello", " there", ",", " world", "."]) + delta({}, {}, "stop") + usage + "data: [DONE]\n\n",
  "text needing escapes and unicode":
    delta({ role: "assistant", content: "" }) +
    words(['say "hi"', "\n", "back\\slash", " \u0001", " café", " ☕", " 😀", "\ud800", "x".repeat(300), "", "</script>", "\u2028"]) +
    delta({}, {}, "length") +
    "data: [DONE]\n\n",
  "obfuscation padding": delta({ role: "assistant", content: "" }, { obfuscation: "ab" }) + words(["One", " two", ' "three"', " four"], (i) => ({ obfuscation: "x".repeat(i + 1) })) + delta({}, { obfuscation: "q" }, "stop") + "data: [DONE]\n\n",
  "CRLF line ends and comments": (": keep-alive\n\n" + delta({ role: "assistant", content: "" }) + words(["A", "B", "C"]) + ": ping\n\n" + delta({}, {}, "stop") + usage + "data: [DONE]\n\n").replaceAll("\n", "\r\n"),
  "spaces, fields and multi-line data":
    "event: message\ndata:" + JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: "no space" } }] }) + "\n\nid: 7\nretry: 10\n" + delta({ content: " after id" }) + "data: {\"id\":\"chatcmpl-x1\",\n" + 'data: "choices":[{"index":0,"delta":{"content":" two lines"}}]}\n\n' + delta({}, {}, "stop") + "data: [DONE]\n\n",
  "template changes midway": words(["a", "b"]) + delta({ content: "c" }, { system_fingerprint: "fp_1" }) + words(["d", "e"]) + delta({ content: "f", refusal: null }) + delta({ content: "g" }, { created: 1700000001 }) + delta({}, {}, "stop") + usage + "data: [DONE]\n\n",
  "log probabilities":
    delta({ role: "assistant", content: "" }) +
    delta({ content: "Hi" }, {}) +
    chunk({ ...base, choices: [{ index: 0, delta: { content: " there" }, logprobs: { content: [{ token: " there", logprob: -0.25, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [] }] }, finish_reason: null }] }) +
    delta({}, {}, "stop") +
    "data: [DONE]\n\n",
  "reasoning then text then tools":
    delta({ role: "assistant", reasoning_content: "think" }) +
    delta({ reasoning_content: " more" }) +
    words(["Answer", ":"]) +
    delta({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get", arguments: "" } }] }) +
    delta({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }) +
    delta({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }) +
    delta({ tool_calls: [{ index: 1, function: { name: "noid", arguments: "{}" } }] }) +
    delta({}, {}, "tool_calls") +
    usage +
    "data: [DONE]\n\n",
  "cut short": delta({ role: "assistant", content: "" }) + words(["partial", " text"]),
  "no [DONE], no final blank line": delta({ role: "assistant", content: "" }) + words(["x"]) + delta({}, {}, "stop").trimEnd(),
  "in-band error after text": delta({ role: "assistant", content: "" }) + words(["so far"]) + 'data: {"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}\n\n',
  "not JSON": delta({ role: "assistant", content: "" }) + words(["ok"]) + "data: {broken\n\n",
};

/** Deterministic ids and clock for one run. */
function encoderOptions(client: WireFormat) {
  let n = 0;
  return { model: client === "gemini" ? "gemini-x" : "client-model", includeUsage: true, newId: (p: string) => `${p}${++n}`, now: () => 1_750_000_000_000 };
}

/** Seeded `Math.random` (mulberry32) around `fn`: the decoders draw the salt of synthesized call ids from it. */
function seeded<T>(fn: () => T): T {
  const orig = Math.random;
  let s = 0x5eed;
  Math.random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  try {
    return fn();
  } finally {
    Math.random = orig;
  }
}

/** The client's bytes for `bytes` from a `provider` upstream, read whole (hold, then end) or in `piece`-byte reads. */
function translate(provider: WireFormat, client: WireFormat, bytes: Uint8Array, piece?: number): Uint8Array {
  return seeded(() => {
    const d = new TranslatedStreamDriver(codecFor(provider), codecFor(client), { family: familyOf(provider) }, encoderOptions(client));
    const parts: Uint8Array[] = [];
    if (piece === undefined) d.hold(bytes);
    else for (let i = 0; i < bytes.length; i += piece) parts.push(d.push(bytes.subarray(i, i + piece)));
    parts.push(d.end());
    const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  });
}

/** Every input stream: name, provider format, bytes, and whether it is also read one byte at a time. */
async function streams(): Promise<[string, WireFormat, Uint8Array, boolean][]> {
  const out: [string, WireFormat, Uint8Array, boolean][] = [];
  for (const e of await manifest()) if (e.kind === "sse") out.push([`recorded ${e.file}`, e.format, await recordedBytes(e.file), e.format === "openai-chat"]);
  for (const id of await caseIds()) {
    const c = await regressionCase(id);
    const sse = c.upstream?.response?.sse;
    if (typeof sse === "string") out.push([`case ${id}`, c.upstream.format, utf8.encode(sse), c.upstream.format === "openai-chat"]);
  }
  for (const usage of [false, true]) {
    const body = `{"model":"gpt-bench","stream":true${usage ? ',"stream_options":{"include_usage":true}' : ""}}`;
    const reply = benchReply("/v1/chat/completions", body)!;
    out.push([`bench chat stream${usage ? " with usage" : ""}`, "openai-chat", new Uint8Array(await reply.arrayBuffer()), true]);
  }
  for (const [name, text] of Object.entries(SYNTHETIC_CHAT)) out.push([`synthetic chat ${name}`, "openai-chat", utf8.encode(text), true]);
  return out;
}

const CLIENTS: WireFormat[] = ["anthropic-messages", "openai-responses", "gemini"];

async function sha256(bytes: Uint8Array): Promise<string> {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

describe("translated streams: the client's bytes are pinned", () => {
  test("every stream, every client, read whole and in pieces, matches its recorded SHA-256", async () => {
    const got: Record<string, string> = {};
    for (const [name, provider, bytes, byteByByte] of await streams()) {
      for (const client of CLIENTS) {
        if (client === provider) continue;
        const whole = translate(provider, client, bytes);
        got[`${name} → ${client}`] = await sha256(whole);
        // The output does not depend on how the upstream's bytes were split into reads.
        expect(new TextDecoder().decode(translate(provider, client, bytes, 7))).toBe(new TextDecoder().decode(whole));
        if (byteByByte) expect(new TextDecoder().decode(translate(provider, client, bytes, 1))).toBe(new TextDecoder().decode(whole));
      }
    }
    expectPinnedDigests(GOLDEN, got, UPDATE);
  });
});
