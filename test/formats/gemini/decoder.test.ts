import { describe, expect, test } from "bun:test";
import { manifest, recordedBytes, type ManifestEntry } from "../../support/fixtures.ts";
import { expectSplitReadsDecodeAlike } from "../../support/split-reads.ts";
import {
  bytewise,
  canonical,
  decodeBytes,
  decodePieces,
  geminiSse,
  reply,
  twoPieceSplits,
  utf8,
} from "../../support/gemini-harness.ts";
import type { HubEvent, HubPart, ToolCallPart } from "../../../formats/hub.ts";
import { TRUNCATED_ERROR } from "../../../formats/normalize.ts";
import { MALFORMED_CHUNK_ERROR } from "../../../formats/gemini/decoder.ts";
import { randomIdPart } from "../../../formats/random-text.ts";

const entries = (await manifest()).filter((e) => e.format === "gemini" && e.kind === "sse");

const ID_SHAPE = /^[a-zA-Z0-9_-]+$/;

const shape = (evs: HubEvent[]) =>
  evs.map((e) => {
    switch (e.type) {
      case "block_start":
        return `start:${e.index}:${e.block.type}`;
      case "block_delta":
        return `delta:${e.index}:${e.delta.type}`;
      case "block_stop":
        return `stop:${e.index}`;
      case "finish":
        return `finish:${e.reason}`;
      default:
        return e.type;
    }
  });

const texts = (content: HubPart[], type: "text" | "thinking") =>
  content
    .filter((p) => p.type === type)
    .map((p) => (p as { text: string }).text)
    .join("");

/** Every thoughtSignature / thought_signature value in a recorded file, in stream order. */
function recordedSignatures(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  return [...text.matchAll(/"thought_?[sS]ignature":"([^"]+)"/g)].map((m) => m[1]!);
}

function signaturesOf(content: HubPart[]): string[] {
  const out: string[] = [];
  for (const p of content) {
    if ((p.type === "text" || p.type === "thinking" || p.type === "tool_call") && p.signature) {
      expect(p.signature.family).toBe("gemini");
      out.push(p.signature.value);
    }
  }
  return out;
}

describe("gemini decoder: every recorded stream against its manifest entry", () => {
  test("the manifest lists the recorded gemini streams", () => {
    expect(entries.length).toBeGreaterThanOrEqual(9);
  });

  for (const entry of entries) {
    test(entry.file, async () => {
      const bytes = await recordedBytes(entry.file);
      const rec = entry.recorded!;
      const { response, error } = reply(decodeBytes(bytes));
      expect(error).toBeUndefined();

      // visible text and thought text are kept apart
      expect(texts(response.content, "text")).toBe(rec.text);
      expect(texts(response.content, "thinking")).toBe(rec.thought_text ?? "");

      // function calls: names, parsed (reassembled) arguments, ids passed through or minted
      const calls = response.content.filter((p): p is ToolCallPart => p.type === "tool_call");
      expect(calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) }))).toEqual(
        rec.function_calls.map((f: any) => ({ name: f.name, arguments: f.arguments })),
      );
      rec.function_calls.forEach((f: any, i: number) => {
        if (f.id) expect(calls[i]!.id).toBe(f.id);
        else expect(calls[i]!.id).toMatch(ID_SHAPE);
      });
      expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);

      // finish: STOP → end_turn, promoted to tool_use when calls were made; a blocked prompt → refusal
      if (rec.finish_reason === null) {
        expect(rec.prompt_feedback?.blockReason).toBeString();
        expect(response.stopReason).toBe("refusal");
        expect(response.rawStopReason).toBe(rec.prompt_feedback.blockReason);
      } else {
        expect(response.rawStopReason).toBe(rec.finish_reason);
        expect(response.stopReason).toBe(calls.length > 0 ? "tool_use" : "end_turn");
      }

      // usage per REFERENCE §5.10
      const u = rec.usage;
      expect(response.usage.inputTokens).toBe(u.promptTokenCount - (u.cachedContentTokenCount ?? 0));
      if (u.candidatesTokenCount !== undefined || u.thoughtsTokenCount !== undefined) {
        expect(response.usage.outputTokens).toBe((u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0));
      } else {
        expect(response.usage.outputTokens).toBeUndefined();
      }
      expect(response.usage.reasoningTokens).toBe(u.thoughtsTokenCount);

      // every signature survives byte for byte, stamped with the decoder's family
      const sigs = signaturesOf(response.content);
      expect(sigs.length).toBe(rec.thought_signatures);
      expect(sigs).toEqual(recordedSignatures(bytes));
    });
  }
});

describe("gemini decoder: exact event sequences", () => {
  test("text.sse: text block, then the empty-text signature as a signature-only thinking block, usage, finish", async () => {
    const evs = canonical(decodeBytes(await recordedBytes("gemini/text.sse")));
    expect(shape(evs)).toEqual([
      "message_start",
      "start:0:text",
      "delta:0:text",
      "delta:0:text",
      "usage",
      "stop:0",
      "start:1:thinking",
      "delta:1:signature",
      "stop:1",
      "finish:end_turn",
    ]);
    expect(evs[0]).toEqual({
      type: "message_start",
      id: "bH6LaZW8Fp_3nsEPqtaSwQ4",
      model: "gemini-3-pro-preview",
      usage: { inputTokens: 9, outputTokens: 190, reasoningTokens: 185 },
    });
    expect(evs[4]).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 208, reasoningTokens: 185 } });
    expect(evs.at(-1)).toEqual({ type: "finish", reason: "end_turn", raw: "STOP" });
  });

  test("function-call.sse: whole call = start, ONE tool_args delta with the stringified args, stop; finish promoted to tool_use", async () => {
    const evs = canonical(decodeBytes(await recordedBytes("gemini/function-call.sse")));
    expect(shape(evs)).toEqual(["message_start", "start:0:tool_call", "delta:0:tool_args", "stop:0", "finish:tool_use"]);
    const start = evs[1] as Extract<HubEvent, { type: "block_start" }>;
    expect(start.block).toMatchObject({ type: "tool_call", name: "weather", id: "call_b36LacjwM668nsEP2tbsgQQ_0" });
    expect((start.block as { signature?: { value: string } }).signature?.value).toStartWith("EqUCCqICAb4+");
    expect(evs[2]).toEqual({ type: "block_delta", index: 0, delta: { type: "tool_args", json: '{"location":"San Francisco"}' } });
  });

  test("thought-parts.sse: thought parts stream as one thinking block, then the answer as text", async () => {
    const evs = canonical(decodeBytes(await recordedBytes("gemini/thought-parts.sse")));
    expect(shape(evs)).toEqual([
      "message_start",
      "start:0:thinking",
      "delta:0:thinking",
      "delta:0:thinking",
      "usage",
      "delta:0:thinking",
      "usage",
      "delta:0:thinking",
      "usage",
      "stop:0",
      "start:1:text",
      "delta:1:text",
      "usage",
      "stop:1",
      "finish:end_turn",
    ]);
  });

  test("streamed-args-parallel.sse: each streamed call is emitted with one tool_args delta when it closes", async () => {
    const evs = canonical(decodeBytes(await recordedBytes("gemini/streamed-args-parallel.sse")));
    expect(shape(evs)).toEqual([
      "message_start",
      "start:0:tool_call",
      "delta:0:tool_args",
      "stop:0",
      "start:1:tool_call",
      "delta:1:tool_args",
      "stop:1",
      "usage",
      "finish:tool_use",
    ]);
    const deltas = evs.filter((e) => e.type === "block_delta").map((e) => (e as any).delta.json);
    expect(deltas).toEqual(['{"location":"Boston"}', '{"location":"San Francisco"}']);
  });

  test("streamed-args-array-no-terminator.sse: the call closes on its last piece (no willContinue), args rebuilt with array paths", async () => {
    const loose = decodeBytes(await recordedBytes("gemini/streamed-args-array-no-terminator.sse"));
    const argDeltas = loose.filter((e) => e.type === "block_delta" && e.delta.type === "tool_args");
    expect(argDeltas.length).toBe(1);
    // the stop comes before the finishReason chunk's usage/finish
    const stopAt = loose.findIndex((e) => e.type === "block_stop");
    const finishAt = loose.findIndex((e) => e.type === "finish");
    expect(stopAt).toBeGreaterThan(0);
    expect(stopAt).toBeLessThan(finishAt);
  });

  test("prompt-blocked.sse: no candidates, blockReason → a refusal finish with no content, the reason as its explanation", async () => {
    const evs = canonical(decodeBytes(await recordedBytes("gemini/prompt-blocked.sse")));
    expect(shape(evs)).toEqual(["message_start", "finish:refusal"]);
    expect(evs[1]).toEqual({ type: "finish", reason: "refusal", raw: "PROHIBITED_CONTENT", explanation: "Gemini blocked the prompt (PROHIBITED_CONTENT)." });
    expect(evs[0]).toMatchObject({ usage: { inputTokens: 9 } });
  });
});

describe("gemini decoder: adversarial framing", () => {
  for (const entry of entries) {
    // The reads: test/support/split-reads.ts says why they cover every state a read boundary can leave
    // the decoder in (a cut at every offset near each line end, in and around each multi-byte character
    // and escape, each checked with everything before it decoded; a seeded sample of two-piece splits);
    // one byte per read makes every offset a read boundary as well.
    test(`${entry.file}: reads cut around every line end, character and escape, and one byte per read, equal the unsplit decode`, async () => {
      const bytes = await recordedBytes(entry.file);
      const whole = decodeBytes(bytes);
      expect(whole.length).toBeGreaterThan(1);
      const plan = expectSplitReadsDecodeAlike(bytes, (reads) => decodePieces(reads));
      expect(plan.crlfCuts).toBeGreaterThan(0); // splits inside `\r\n` were exercised
      expect(decodePieces(bytewise(bytes))).toEqual(whole);
    });
  }

  test("multi-byte UTF-8 (CJK, emoji) split at every offset, in text, thoughts and function args", () => {
    const bytes = geminiSse(
      { candidates: [{ content: { role: "model", parts: [{ text: "思考中… 🤔", thought: true }] } }], responseId: "r1" },
      { candidates: [{ content: { role: "model", parts: [{ text: "日本語のテキスト 👍🏽" }] } }], responseId: "r1" },
      {
        candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "note", args: { body: "ünïcødé ✓ 🚀" } } }] }, finishReason: "STOP" }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 },
        responseId: "r1",
      },
    );
    const whole = decodeBytes(bytes);
    const r = reply(whole).response;
    expect(texts(r.content, "thinking")).toBe("思考中… 🤔");
    expect(texts(r.content, "text")).toBe("日本語のテキスト 👍🏽");
    expect(JSON.parse((r.content[2] as ToolCallPart).arguments)).toEqual({ body: "ünïcødé ✓ 🚀" });
    for (const [, pieces] of twoPieceSplits(bytes)) {
      const got = decodePieces(pieces);
      if (!Bun.deepEquals(got, whole)) expect(got).toEqual(whole);
    }
    expect(decodePieces(bytewise(bytes))).toEqual(whole);
  });

  test("LF framing, `data:` without a space, comments and a final event without its blank line", () => {
    const body =
      ': keep-alive\n\ndata:{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"responseId":"x"}\n\n' +
      'data: {"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}';
    const r = reply(decodeBytes(utf8(body)));
    expect(r.error).toBeUndefined();
    expect(texts(r.response.content, "text")).toBe("ab");
    expect(r.response.stopReason).toBe("end_turn");
  });
});

describe("gemini decoder: stream ends and errors", () => {
  test("EOF without a finishReason: no finish is invented, the normalizer ends with the truncation error", async () => {
    const bytes = await recordedBytes("gemini/text.sse");
    const cut = new TextDecoder().decode(bytes).lastIndexOf("data:");
    const evs = canonical(decodeBytes(bytes.subarray(0, cut)));
    expect(evs.some((e) => e.type === "finish")).toBe(false);
    expect(evs.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
    expect(texts(reply(decodeBytes(bytes.subarray(0, cut))).response.content, "text")).toBe(
      'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
    );
  });

  test("EOF in the middle of a JSON line is truncation, not a malformed chunk", async () => {
    const bytes = await recordedBytes("gemini/function-call.sse");
    const evs = canonical(decodeBytes(bytes.subarray(0, 120)));
    expect(evs.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
  });

  test("in-band {error} chunk → one hub error with the mapped kind; nothing after it", () => {
    const bytes = geminiSse(
      { candidates: [{ content: { parts: [{ text: "Hel" }] } }], responseId: "r" },
      { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } },
      { candidates: [{ content: { parts: [{ text: "lo" }] }, finishReason: "STOP" }] },
    );
    const loose = decodeBytes(bytes);
    const errs = loose.filter((e) => e.type === "error");
    expect(errs).toEqual([
      { type: "error", error: { kind: "overloaded", status: 503, message: "The model is overloaded. Please try again later.", code: "UNAVAILABLE" } },
    ]);
    expect(loose.at(-1)!.type).toBe("error");
    const evs = canonical(loose);
    expect(shape(evs)).toEqual(["message_start", "start:0:text", "delta:0:text", "error"]);
  });

  test("an in-band error before any content is the first and only event (pre-commit failure)", () => {
    const evs = decodeBytes(geminiSse({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } }));
    expect(evs).toEqual([{ type: "error", error: { kind: "api_error", status: 500, message: "Internal error encountered.", code: "INTERNAL" } }]);
  });

  test("a data line that is not JSON → upstream_malformed error, decoding stops", () => {
    const evs = decodeBytes(utf8('data: {"candidates":[]}\r\n\r\ndata: {nope\r\n\r\ndata: {"candidates":[{"finishReason":"STOP"}]}\r\n\r\n'));
    expect(evs.filter((e) => e.type === "error")).toEqual([{ type: "error", error: MALFORMED_CHUNK_ERROR }]);
    expect(evs.some((e) => e.type === "finish")).toBe(false);
  });

  test("finishReason vocabulary", () => {
    const cases: Array<[string, string]> = [
      ["MAX_TOKENS", "max_tokens"],
      ["SAFETY", "refusal"],
      ["RECITATION", "refusal"],
      ["BLOCKLIST", "refusal"],
      ["PROHIBITED_CONTENT", "refusal"],
      ["SPII", "refusal"],
      ["IMAGE_SAFETY", "refusal"],
      ["LANGUAGE", "refusal"],
      ["MALFORMED_FUNCTION_CALL", "other"],
      ["UNEXPECTED_TOOL_CALL", "other"],
      ["OTHER", "other"],
      ["FINISH_REASON_UNSPECIFIED", "other"],
      ["SOMETHING_NEW", "other"],
    ];
    for (const [raw, reason] of cases) {
      const evs = canonical(decodeBytes(geminiSse({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: raw }] })));
      // a reply Gemini blocked says so (the client's refusal text or Anthropic `stop_details`)
      const explanation = reason === "refusal" ? { explanation: `Gemini blocked the reply (${raw}).` } : {};
      expect(evs.at(-1)).toEqual({ type: "finish", reason: reason as never, raw, ...explanation });
    }
    const withMessage = canonical(decodeBytes(geminiSse({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: "SAFETY", finishMessage: " Blocked for harassment. " }] })));
    expect(withMessage.at(-1)).toEqual({ type: "finish", reason: "refusal", raw: "SAFETY", explanation: "Gemini blocked the reply (SAFETY): Blocked for harassment." });
  });

  test("MAX_TOKENS after a function call stays max_tokens (not promoted)", () => {
    const evs = canonical(
      decodeBytes(geminiSse({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: {} } }] }, finishReason: "MAX_TOKENS" }] })),
    );
    expect(evs.at(-1)).toEqual({ type: "finish", reason: "max_tokens", raw: "MAX_TOKENS" });
  });
});

describe("gemini decoder: parts, signatures, ids", () => {
  test("cached tokens split out of the prompt; tool-use prompt tokens count as input", () => {
    const r = reply(
      decodeBytes(
        geminiSse({
          candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "STOP" }],
          usageMetadata: { promptTokenCount: 1000, cachedContentTokenCount: 800, toolUsePromptTokenCount: 7, candidatesTokenCount: 5, thoughtsTokenCount: 20 },
        }),
      ),
    ).response;
    expect(r.usage).toEqual({ inputTokens: 207, cacheReadTokens: 800, outputTokens: 25, reasoningTokens: 20 });
  });

  test("a usage-only chunk without counts (Vertex trafficType) emits nothing; unchanged usage is not repeated", () => {
    const evs = decodeBytes(
      geminiSse(
        { candidates: [{ content: { parts: [{ text: "a" }] } }], usageMetadata: { trafficType: "ON_DEMAND" } },
        { candidates: [{ content: { parts: [{ text: "b" }] } }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1 } },
        { candidates: [{ content: { parts: [{ text: "c" }] } }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1 } },
        { candidates: [{ content: { parts: [{ text: "" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3 } },
      ),
    );
    expect(evs.filter((e) => e.type === "usage").map((e) => (e as any).usage)).toEqual([
      { inputTokens: 4, outputTokens: 1 },
      { inputTokens: 4, outputTokens: 3 },
    ]);
    expect((evs[0] as any).usage).toBeUndefined();
  });

  test("signature on a non-empty text part stays on that text; the next text opens a new block", () => {
    const r = reply(
      decodeBytes(
        geminiSse(
          { candidates: [{ content: { parts: [{ text: "Hello " }] } }] },
          { candidates: [{ content: { parts: [{ text: "world", thoughtSignature: "U0lHMQ==" }] } }] },
          { candidates: [{ content: { parts: [{ text: "More.", thought_signature: "U0lHMg==" }] }, finishReason: "STOP" }] },
        ),
        { family: "provider:vertex-proxy" },
      ),
    ).response;
    expect(r.content).toEqual([
      { type: "text", text: "Hello world", signature: { family: "provider:vertex-proxy", value: "U0lHMQ==" } },
      { type: "text", text: "More.", signature: { family: "provider:vertex-proxy", value: "U0lHMg==" } },
    ]);
  });

  test("signature on a thought part ends that thinking block; signature-only part becomes its own thinking block", () => {
    const r = reply(
      decodeBytes(
        geminiSse(
          { candidates: [{ content: { parts: [{ text: "plan", thought: true }, { text: " more", thought: true, thoughtSignature: "QQ==" }] } }] },
          { candidates: [{ content: { parts: [{ text: "answer" }, { text: "", thoughtSignature: "Qg==" }] }, finishReason: "STOP" }] },
        ),
      ),
    ).response;
    expect(r.content).toEqual([
      { type: "thinking", text: "plan more", signature: { family: "gemini", value: "QQ==" } },
      { type: "text", text: "answer" },
      { type: "thinking", text: "", signature: { family: "gemini", value: "Qg==" } },
    ]);
  });

  test("parallel calls in one chunk: one block each, minted ids unique and stable, the id kept when present", () => {
    const bytes = geminiSse({
      candidates: [
        {
          content: {
            parts: [
              { functionCall: { name: "a", args: { x: 1 } }, thoughtSignature: "c2ln" },
              { functionCall: { name: "b", args: {}, id: "given-1" } },
              { functionCall: { name: "a" } },
            ],
          },
          finishReason: "STOP",
        },
      ],
      responseId: "resp.with/odd+chars",
    });
    const r = reply(decodeBytes(bytes)).response;
    const calls = r.content as ToolCallPart[];
    expect(calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call_respwithoddchars_0", "a", '{"x":1}'],
      ["given-1", "b", "{}"],
      ["call_respwithoddchars_1", "a", "{}"],
    ]);
    expect(calls[0]!.signature).toEqual({ family: "gemini", value: "c2ln" });
    expect(calls[1]!.signature).toBeUndefined();
    expect(r.stopReason).toBe("tool_use");
  });

  test("without a responseId minted ids still match the id pattern and differ between streams", () => {
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: {} } }] }, finishReason: "STOP" }] });
    const a = (reply(decodeBytes(bytes)).response.content[0] as ToolCallPart).id;
    const b = (reply(decodeBytes(bytes)).response.content[0] as ToolCallPart).id;
    expect(a).toMatch(/^call_[a-zA-Z0-9_-]+_0$/);
    expect(a).not.toBe(b);
  });

  test("an upstream that reuses its responseId (a Gemini-compatible server's constant one) still gets call ids unique across replies", () => {
    // Found in a tryout: ids were call_<responseId>_<n>, so two turns' calls were both call_resp_g1_0 and
    // Claude Code, pairing results by id, looped (2,228 requests in 120 s).
    const bytes = geminiSse({ candidates: [{ content: { parts: [{ functionCall: { name: "f", args: {} } }, { functionCall: { name: "g", args: {} } }] }, finishReason: "STOP" }], responseId: "resp_g1" });
    // The gateway's decoders draw a part per reply (pipeline/commit.ts); test/e2e/gemini-reused-response-id.test.ts checks it there.
    const ids = [0, 1, 2].flatMap(() => (reply(decodeBytes(bytes, { family: "gemini", callIdPart: randomIdPart })).response.content as ToolCallPart[]).map((c) => c.id));
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(/^call_resp_g1_[0-9a-f]{8}_[01]$/);
    // Without it (tests comparing two decodes), ids depend on the bytes alone, as before.
    expect((reply(decodeBytes(bytes)).response.content as ToolCallPart[]).map((c) => c.id)).toEqual(["call_resp_g1_0", "call_resp_g1_1"]);
  });

  test("only candidate 0 is decoded", () => {
    const r = reply(
      decodeBytes(
        geminiSse({
          candidates: [
            { index: 1, content: { parts: [{ text: "second" }] }, finishReason: "STOP" },
            { index: 0, content: { parts: [{ text: "first" }] }, finishReason: "STOP" },
          ],
        }),
      ),
    ).response;
    expect(texts(r.content, "text")).toBe("first");
  });

  test("renamed tools are given back under the client's name (toolNames)", () => {
    const r = reply(
      decodeBytes(geminiSse({ candidates: [{ content: { parts: [{ functionCall: { name: "mcp_fs_read", args: { p: 1 } } }] }, finishReason: "STOP" }] }), {
        family: "gemini",
        toolNames: { mcp_fs_read: "mcp/fs read" },
      }),
    ).response;
    expect((r.content[0] as ToolCallPart).name).toBe("mcp/fs read");
  });

  test("streamed args: nested objects, bracket paths, numbers, booleans, null, string continuation", () => {
    const part = (fc: unknown) => ({ candidates: [{ content: { parts: [{ functionCall: fc }] } }], responseId: "s" });
    const bytes = geminiSse(
      part({ name: "cfg", willContinue: true }),
      part({ partialArgs: [{ jsonPath: "$.a.b", stringValue: "hel", willContinue: true }], willContinue: true }),
      part({ partialArgs: [{ jsonPath: "$.a.b", stringValue: "lo \"q\"", willContinue: true }], willContinue: true }),
      part({ partialArgs: [{ jsonPath: "$.a.b", stringValue: "" }], willContinue: true }),
      part({ partialArgs: [{ jsonPath: "$['odd key'][1]", numberValue: 2 }, { jsonPath: "$.flag", boolValue: false }], willContinue: true }),
      part({ partialArgs: [{ jsonPath: "$.none", nullValue: "NULL_VALUE" }, { jsonPath: "$.__proto__.x", stringValue: "safe" }], willContinue: true }),
      part({}),
      { candidates: [{ content: { parts: [{ text: "" }] }, finishReason: "STOP" }] },
    );
    const call = reply(decodeBytes(bytes)).response.content[0] as ToolCallPart;
    expect(JSON.parse(call.arguments)).toEqual({
      a: { b: 'hello "q"' },
      "odd key": [null, 2],
      flag: false,
      none: null,
      ["__proto__"]: { x: "safe" },
    } as never);
    expect(({} as any).x).toBeUndefined();
  });

  test("a streamed call left open at EOF is not completed (the stream is truncated)", () => {
    const evs = canonical(
      decodeBytes(
        geminiSse(
          { candidates: [{ content: { parts: [{ functionCall: { name: "f", willContinue: true } }] } }] },
          { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: "$.a", numberValue: 1 }], willContinue: true } }] } }] },
        ),
      ),
    );
    expect(evs.some((e) => e.type === "block_delta" && e.delta.type === "tool_args")).toBe(false);
    expect(evs.at(-1)).toEqual({ type: "error", error: TRUNCATED_ERROR });
  });
});
