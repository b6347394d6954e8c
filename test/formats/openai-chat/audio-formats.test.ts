/**
 * Found by the request-features tryout (session 45; fixed that session): a Gemini client's audio
 * (`inlineData` audio/ogg, audio/flac, audio/aac: formats Gemini takes) reaches OpenAI Chat and
 * Responses as `input_audio` with `format: "ogg"` / `"flac"` / `"aac"`. OpenAI's `input_audio.format`
 * takes `wav` and `mp3` only (API reference, chat `input_audio`), so the request becomes an upstream
 * 400, with no warning. Expected: audio of another format not sent, with a warning (as the Anthropic
 * lane does for audio: `dropped_content`). It failed for that reason before the fix.
 */
import { expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const WAV_BYTES = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

test("OpenAI gets input_audio only as wav or mp3; other audio is named in a warning", () => {
  for (const mimeType of ["audio/ogg", "audio/flac", "audio/aac"]) {
    const body = { contents: [{ role: "user", parts: [{ text: "transcribe" }, { inlineData: { mimeType, data: WAV_BYTES } }] }] };
    for (const [to, kind, model] of [["openai-chat", "openai", "gpt-4o-audio-preview"], ["openai-responses", "openai-responses", "gpt-5"]] as const) {
      const built = translateBody("gemini", body, to, kind, model);
      const formats = [...JSON.stringify(built.body).matchAll(/"format":"([^"]+)"/g)].map((m) => m[1]);
      expect(formats.filter((f) => f !== "wav" && f !== "mp3"), `${mimeType} → ${to}`).toEqual([]);
      expect(built.warnings.length, `${mimeType} → ${to}: a warning`).toBeGreaterThan(0);
    }
  }
});

test("Gemini's audio/mpeg and audio/x-wav reach OpenAI as mp3 and wav, without a warning", () => {
  for (const [mimeType, format] of [["audio/mpeg", "mp3"], ["audio/x-wav", "wav"], ["audio/wav", "wav"], ["audio/mp3", "mp3"]] as const) {
    const body = { contents: [{ role: "user", parts: [{ text: "transcribe" }, { inlineData: { mimeType, data: WAV_BYTES } }] }] };
    for (const [to, kind, model] of [["openai-chat", "openai", "gpt-4o-audio-preview"], ["openai-responses", "openai-responses", "gpt-5"]] as const) {
      const built = translateBody("gemini", body, to, kind, model);
      expect([...JSON.stringify(built.body).matchAll(/"format":"([^"]+)"/g)].map((m) => m[1]), `${mimeType} → ${to}`).toEqual([format]);
      expect(built.warnings.filter((w) => w.code === "dropped_media")).toEqual([]);
    }
  }
});

test("an OpenAI-compatible Chat server gets audio of another format as it came (it may take more than OpenAI)", () => {
  const body = { contents: [{ role: "user", parts: [{ text: "transcribe" }, { inlineData: { mimeType: "audio/flac", data: WAV_BYTES } }] }] };
  const built = translateBody("gemini", body, "openai-chat", "openai-compatible", "local-model");
  expect([...JSON.stringify(built.body).matchAll(/"format":"([^"]+)"/g)].map((m) => m[1])).toEqual(["flac"]);
});
