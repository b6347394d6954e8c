/**
 * The ids the client encoders mint for a reply when no generator is injected (formats/random-text.ts,
 * docs/performance.md item 144): Responses `prefix` + 32 hex chars, Chat `chatcmpl-` + 24 hex chars,
 * Gemini 22 base64url chars, Messages `msg_` + 24 hex chars (item 180); never the same id twice across
 * many draws of the shared pools.
 */
import { expect, test } from "bun:test";
import { defaultNewId } from "../../formats/anthropic-messages/encoder.ts";
import { defaultResponseId } from "../../formats/gemini/encoder.ts";
import { defaultChatId } from "../../formats/openai-chat/encoder.ts";
import { mintId } from "../../formats/openai-responses/common.ts";

const N = 10_000; // ~40 draws of each pool

test("Responses ids: the prefix and 32 hex chars, all distinct", () => {
  const ids = Array.from({ length: N }, (_, i) => mintId(i % 2 ? "resp_" : "msg_"));
  for (const id of ids) expect(id).toMatch(/^(resp|msg)_[0-9a-f]{32}$/);
  expect(new Set(ids.map((id) => id.slice(id.indexOf("_") + 1))).size).toBe(N);
});

test("Chat ids: chatcmpl- and 24 hex chars, all distinct", () => {
  const ids = Array.from({ length: N }, () => defaultChatId());
  for (const id of ids) expect(id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
  expect(new Set(ids).size).toBe(N);
});

test("Gemini response ids: 22 base64url chars, all distinct", () => {
  const ids = Array.from({ length: N }, () => defaultResponseId());
  for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(new Set(ids).size).toBe(N);
});

test("Messages ids: msg_ and 24 hex chars, all distinct", () => {
  const ids = Array.from({ length: N }, () => defaultNewId("msg_"));
  for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{24}$/);
  expect(new Set(ids).size).toBe(N);
});

test("an injected generator still decides (tests pin ids with it)", () => {
  expect(mintId("resp_", (p) => p + "x1")).toBe("resp_x1");
  expect(mintId("resp_", () => "abc")).toBe("resp_abc");
});
