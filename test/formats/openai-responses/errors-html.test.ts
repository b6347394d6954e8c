/**
 * Found by trying the official SDKs against switchyard (session 43): a Responses provider that answered
 * with an HTML error page (a proxy's 502) handed the page itself to the client as its error message
 * (formats/openai-responses/errors.ts parseError kept `body.trim().slice(0, 500)`), where the Chat,
 * Anthropic and Gemini parsers give a generic sentence (formats/raw-error-text.ts: "markup says nothing
 * a client can use"). Seen through the gateway: `POST /v1/chat/completions` with model
 * `<openai-responses provider>/…` whose upstream answers 502 text/html → the OpenAI SDK's
 * InternalServerError message "502 <html><body><h1>502 Bad Gateway</h1></body></html>"; the same
 * upstream behind kind openai / anthropic gave "Upstream returned HTTP 502.". Fixed 2026-12-07: the
 * Responses parser gives that sentence too.
 */
import { describe, expect, test } from "bun:test";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { gemini } from "../../../formats/gemini/index.ts";

const page = "<html><body><h1>502 Bad Gateway</h1></body></html>";

describe("an upstream HTML error page is not the client's error message", () => {
  test("Responses provider", () => {
    const err = openaiResponses.parseError(502, page, new Headers());
    expect(err.status).toBe(502);
    expect(err.message).toBe("Upstream returned HTTP 502.");
  });

  test("Chat, Anthropic and Gemini providers (as today)", () => {
    for (const codec of [openaiChat, anthropicMessages, gemini]) expect(codec.parseError(502, page, new Headers()).message).not.toContain("<html");
  });
});
