/**
 * The hand-written check of a non-streamed Gemini reply (`plainResponse`, formats/gemini/response.ts)
 * against the valibot schema it stands in for: it may send a reply to valibot that valibot accepts, but
 * it must never accept a reply that valibot refuses (a 200 reply that is no Gemini reply stays a 502).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { decodeResponse, plainResponse } from "../../../formats/gemini/response.ts";
import { GenerateContentResponseSchema } from "../../../formats/gemini/schema.ts";
import { FIXTURES } from "../../support/fixtures.ts";

/** Every recorded Gemini reply object: the JSON bodies and each SSE chunk's payload. */
async function recordedReplies(): Promise<Array<[string, Record<string, unknown>]>> {
  const dir = join(FIXTURES, "recorded", "gemini");
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const f of readdirSync(dir)) {
    const text = await Bun.file(join(dir, f)).text();
    if (f.endsWith(".json")) out.push([f, JSON.parse(text)]);
    else {
      // The first chunks, the last one (finish, usage) and one from the middle: the shapes a stream has.
      const chunks = text.split(/\r?\n/).filter((l) => l.startsWith("data: "));
      const pick = new Set([0, 1, 2, Math.floor(chunks.length / 2), chunks.length - 1].filter((i) => i < chunks.length));
      for (const i of pick) out.push([`${f}#${i}`, JSON.parse(chunks[i]!.slice(6))]);
    }
  }
  return out.filter(([, o]) => !("error" in o));
}

const WRONG: unknown[] = [null, 0, Number.NaN, "s", true, [], [{}], { text: 1 }, undefined];
/** Field names the schema types, tried at every object of a reply (present or not). */
const FIELDS = ["candidates", "content", "role", "parts", "text", "thought", "thoughtSignature", "thought_signature", "functionCall", "id", "name", "args", "partialArgs", "jsonPath", "stringValue", "numberValue", "boolValue", "nullValue", "willContinue", "finishReason", "index", "promptFeedback", "blockReason", "usageMetadata", "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount", "toolUsePromptTokenCount", "totalTokenCount", "modelVersion", "responseId"];

/** The path (member names) of every object and array inside `root`, root included. */
function containerPaths(root: unknown, at: string[] = [], out: string[][] = []): string[][] {
  if (typeof root !== "object" || root === null) return out;
  out.push(at);
  for (const [k, v] of Object.entries(root)) containerPaths(v, [...at, k], out);
  return out;
}

/** Copies of `reply` with one member changed: each schema field at each object, each array item, set to each wrong value. */
function* mutations(reply: Record<string, unknown>): Generator<Record<string, unknown>> {
  const text = JSON.stringify(reply);
  for (const path of containerPaths(reply)) {
    const probe = path.reduce<any>((o, k) => o[k], reply);
    const keys = Array.isArray(probe) ? probe.map((_, k) => String(k)) : [...new Set([...Object.keys(probe), ...FIELDS])];
    for (const key of keys) {
      for (const value of WRONG) {
        const copy = JSON.parse(text);
        path.reduce<any>((o, k) => o[k], copy)[key] = value;
        yield copy;
      }
    }
  }
}

describe("plainResponse: the schema's check by hand", () => {
  test("every recorded Gemini reply and chunk passes it (the replies Google sends take the fast check)", async () => {
    const replies = await recordedReplies();
    expect(replies.length).toBeGreaterThan(20);
    for (const [name, reply] of replies) expect(plainResponse(reply), name).toBe(true);
  });

  test("it never passes a reply the valibot schema refuses (each recorded reply with one member changed to a wrong type)", async () => {
    let checked = 0;
    let refused = 0;
    let handedOn = 0;
    for (const [name, reply] of await recordedReplies()) {
      for (const m of mutations(reply)) {
        const schemaOk = v.safeParse(GenerateContentResponseSchema, m).success;
        const plain = plainResponse(m);
        if (plain && !schemaOk) throw new Error(`${name}: passed by hand, refused by the schema: ${JSON.stringify(m).slice(0, 400)}`);
        if (!schemaOk) refused++;
        if (!plain && schemaOk) handedOn++;
        checked++;
      }
    }
    // The mutations do exercise both sides: many are refused, and some that valibot takes go to it.
    expect(checked).toBeGreaterThan(10_000);
    expect(refused).toBeGreaterThan(1_000);
    expect(handedOn).toBeGreaterThan(0);
  });

  test("a reply the check hands on is decoded as before: valibot's verdict and its words in the 502", () => {
    // An array as a candidate is a loose object to valibot (it has none of the fields): accepted.
    expect(() => decodeResponse({ candidates: [[]], usageMetadata: { promptTokenCount: 3 } }, { family: "gemini" })).not.toThrow();
    // A wrong type is refused with valibot's message.
    let message = "";
    try {
      decodeResponse({ candidates: [{ content: { parts: [{ text: 5 }] } }] }, { family: "gemini" });
    } catch (e) {
      message = (e as { error: { message: string } }).error.message;
    }
    expect(message).toMatch(/^The upstream reply is not a Gemini generateContent response: Invalid type: Expected string but received 5\.$/);
  });

  test("optional fields written as null (a Gemini-compatible server) are read as absent, as the streaming decoder reads them, not refused with a 502", () => {
    const opts = { family: "gemini" as const };
    const call = { name: "f", args: { q: 1 } };
    const pairs: Array<[unknown, unknown]> = [
      [{ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "f", args: null } }] }, finishReason: "STOP" }] }, { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "f" } }] }, finishReason: "STOP" }] }],
      [{ candidates: [{ content: { role: "model", parts: [{ text: null, thought: null, functionCall: call }] }, finishReason: "STOP" }] }, { candidates: [{ content: { role: "model", parts: [{ functionCall: call }] }, finishReason: "STOP" }] }],
      [{ candidates: [{ content: null, finishReason: "SAFETY", index: null }] }, { candidates: [{ finishReason: "SAFETY" }] }],
      [{ candidates: [{ content: { role: null, parts: null }, finishReason: "STOP" }] }, { candidates: [{ content: {}, finishReason: "STOP" }] }],
      [{ candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: null }], usageMetadata: null, modelVersion: null }, { candidates: [{ content: { role: "model", parts: [{ text: "hi" }] } }] }],
      [{ candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, thoughtsTokenCount: null, cachedContentTokenCount: null } }, { candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } }],
    ];
    // A responseId on both makes the minted call ids the same.
    const id = (o: unknown) => ({ ...(o as object), responseId: "resp1" });
    for (const [withNulls, without] of pairs) expect(decodeResponse(id(withNulls), opts)).toEqual(decodeResponse(id(without), opts));
  });
});
