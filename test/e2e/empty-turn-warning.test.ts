/**
 * A turn with nothing in it (a Messages `content: ""`, a Chat assistant `content: ""`, a Responses
 * `input: ""`) is not sent by any target format. On the same-format lanes the tidy step said so
 * (`dropped_empty_message`); on the translated lanes the builders left it out without a word, against
 * SPEC F-2 ("dropped explicitly and reported as a warning, never silently"), until 2026-12-04
 * (pipeline/translate.ts `emptyTurns`). A Gemini client's turn of only empty texts, which its parser
 * leaves out, is counted there too (hub `droppedEmptyTurns`, since 2026-12-04).
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as { code: string; message: string }[];

describe("an empty turn on a translated lane is left out and said", () => {
  test("Messages client, Chat provider: the empty assistant turn is not sent, with dropped_empty_message", async () => {
    const res = await post("/v1/messages", {
      model: "chat/gpt-x",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "" }, { role: "user", content: "again" }],
    });
    expect(res.status).toBe(200);
    expect(warnings(res)).toContainEqual({ code: "dropped_empty_message", message: "1 empty message(s) were not sent." });
    expect(suite.gw.fake.requests[0]!.body.messages).toEqual([
      { role: "user", content: "hi" },
      { role: "user", content: "again" },
    ]);
  });

  test("Chat client, Anthropic provider: the same", async () => {
    const res = await post("/v1/chat/completions", {
      model: "anth/claude-x",
      messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "" }, { role: "user", content: "again" }],
    });
    expect(res.status).toBe(200);
    expect(warnings(res).map((w) => w.code)).toContain("dropped_empty_message");
    expect(suite.gw.fake.requests[0]!.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "again" }] }]);
  });

  test("Responses client with input \"\", Gemini provider: nothing is left, so a 400 says so and nothing is sent (test/e2e/empty-conversation.test.ts)", async () => {
    const res = await post("/v1/responses", { model: "gem/gemini-x", input: "" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toStartWith("Nothing in `input` can be sent to gem/gemini-x: 1 message has no content.");
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Gemini client, Chat provider: a model turn of only empty texts is left out and said, as on the other lanes", async () => {
    const res = await post("/v1beta/models/chat/gpt-x:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ text: "" }, { text: "" }] },
        { role: "user", parts: [{ text: "again" }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(warnings(res)).toContainEqual({ code: "dropped_empty_message", message: "1 empty message(s) were not sent." });
    expect(suite.gw.fake.requests[0]!.body.messages.map((m: { role: string }) => m.role)).toEqual(["user"]);
  });

  test("Gemini client: empty turns counted with the others (a user turn with no parts, a model turn of an empty text); the native Gemini lane sends the body as it came and says nothing", async () => {
    const contents = [
      { role: "user", parts: [{ text: "hi" }] },
      { role: "model", parts: [{ text: "" }] },
      { role: "user", parts: [] },
      { role: "user", parts: [{ text: "again" }] },
    ];
    const translated = await post("/v1beta/models/anth/claude-x:generateContent", { contents });
    expect(translated.status).toBe(200);
    expect(warnings(translated)).toContainEqual({ code: "dropped_empty_message", message: "2 empty message(s) were not sent." });
    suite.gw.fake.reset();
    const native = await post("/v1beta/models/gem/gemini-x:generateContent", { contents });
    expect(native.status).toBe(200);
    expect(warnings(native).map((w) => w.code)).not.toContain("dropped_empty_message");
    expect(suite.gw.fake.requests[0]!.body.contents).toEqual(contents);
  });

  test("Gemini client: a part of a kind the parser does not read is left out and named (dropped_input_item), not skipped without a word", async () => {
    const res = await post("/v1beta/models/chat/gpt-x:generateContent", {
      contents: [{ role: "user", parts: [{ text: "hi" }, { toolCall: { id: "t1", toolType: "GOOGLE_SEARCH_WEB" } }] }],
    });
    expect(res.status).toBe(200);
    expect(warnings(res)).toContainEqual({ code: "dropped_input_item", message: "Input items with no equivalent in the request to chat/gpt-x were not sent: toolCall part." });
    expect(suite.gw.fake.requests[0]!.body.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  test("a conversation without an empty turn gets no such warning (whitespace is content)", async () => {
    const res = await post("/v1/messages", { model: "chat/gpt-x", max_tokens: 20, messages: [{ role: "user", content: "   " }] });
    expect(res.status).toBe(200);
    expect(warnings(res).map((w) => w.code)).not.toContain("dropped_empty_message");
  });
});
