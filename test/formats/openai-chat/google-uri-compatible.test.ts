/**
 * Found by review (session 45; fixed that session): a Google-only file URI (`gs://…`) in an image is now
 * dropped for every Chat Completions target (formats/openai-chat/build.ts, media-types.ts
 * `isGoogleOnlyUri`), also for an `openai-compatible` server. But Vertex AI's own OpenAI-compatible
 * Chat Completions endpoint (`…/endpoints/openapi/chat/completions`) reads Cloud Storage images given as
 * `image_url` "gs://…" (Google's sample "Generate streaming text to describe an image by using the Chat
 * Completions API", cloud.google.com/vertex-ai/generative-ai/docs/samples/
 * generativeaionvertexai-gemini-chat-completions-streaming-image). A Gemini or Anthropic client's gs://
 * image routed to such a provider lost it (dropped_media) where it went through before this session,
 * while a Chat client's own gs:// image on the same provider still goes through (the tidy lane keeps
 * it). Expected: a third-party Chat server gets the URI as it came, as it gets an audio format OpenAI
 * refuses (the same builder's rule for `openai-compatible`); OpenAI's own API (kind `openai`) still
 * drops it. Failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const URI = "gs://cloud-samples-data/generative-ai/image/scones.jpg";
const gemini = { contents: [{ role: "user", parts: [{ text: "describe" }, { fileData: { mimeType: "image/jpeg", fileUri: URI } }] }] };

test("a Gemini client's gs:// image reaches an openai-compatible Chat server as image_url; not OpenAI's own API", () => {
  const compat = translateBody("gemini", gemini, "openai-chat", "openai-compatible", "google/gemini-2.5-flash");
  const content = (compat.body.messages as Array<{ content: unknown }>)[0]!.content;
  expect(content).toEqual([{ type: "text", text: "describe" }, { type: "image_url", image_url: { url: URI } }]);
  expect(compat.warnings.map((w) => w.code)).not.toContain("dropped_media");

  const openai = translateBody("gemini", gemini, "openai-chat", "openai", "gpt-4.1");
  expect(openai.warnings.map((w) => w.code)).toContain("dropped_media");
});
