/**
 * Found by the request-features tryout (session 45; fixed that session): an OpenAI reasoning model (the
 * o-series, gpt-5 but its chat models: formats/openai-common/models.ts `reasonsByDefault`) refuses a
 * sampling setting: 400 "Unsupported value: 'temperature' does not support 0.2 with this model. Only
 * the default (1) value is supported." and "Unsupported parameter: 'top_p' is not supported with this
 * model." (REFERENCE §5.12: "reasoning models reject non-default temperature/top_p"). The Chat and
 * Responses builders send a translated client's `temperature` and `top_p` to them as they came
 * (openai-chat/build.ts, openai-responses/build.ts), so Gemini CLI, which sends `temperature: 1,
 * topP: 0.95, topK: 64` with every chat turn (its `chat-base` model config) and `temperature: 0,
 * topP: 1` with its helper calls, gets a 400 on every request routed to gpt-5 or o3; so does an
 * Anthropic client with a temperature. Seen end to end against an upstream that answers as OpenAI
 * does: the Gemini client's 400 "Unsupported parameter: 'top_p' …". The Claude lane already drops
 * what Opus 4.7 refuses, with a warning. Expected: no temperature other than 1 and no top_p to a
 * reasoning model, each one not sent named in a warning; a model that takes them (gpt-4.1) keeps
 * them. Failed for that reason before the fix (session 45).
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";
import type { ProviderKind } from "../../../formats/codec.ts";
import type { WireFormat } from "../../../formats/hub.ts";

const geminiCli = (temperature: number, topP: number) => ({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { temperature, topP, topK: 64 } });
const sampling = (to: WireFormat, body: Record<string, unknown>) => ({ temperature: body.temperature, top_p: body.top_p });
const REASONING: Array<[WireFormat, ProviderKind, string]> = [
  ["openai-chat", "openai", "gpt-5"],
  ["openai-responses", "openai-responses", "gpt-5"],
  ["openai-chat", "openai", "o3"],
  ["openai-responses", "openai-responses", "gpt-5-mini"],
];

describe("an OpenAI reasoning model gets no sampling setting it refuses", () => {
  for (const [temperature, topP] of [[1, 0.95], [0, 1]] as const) {
    test(`Gemini CLI's temperature ${temperature}, topP ${topP}`, () => {
      for (const [to, kind, model] of REASONING) {
        const built = translateBody("gemini", geminiCli(temperature, topP), to, kind, model);
        const s = sampling(to, built.body);
        // the defaults (temperature 1, top_p 1) are taken ("Only the default (1) value is supported"): sent, not named
        expect(s.temperature, `${model} on ${to}: temperature`).toBe(temperature === 1 ? 1 : undefined);
        expect(s.top_p, `${model} on ${to}: top_p`).toBe(topP === 1 ? 1 : undefined);
        const named = built.warnings.filter((w) => w.code === "dropped_field").map((w) => w.message).join(" ");
        expect(named.includes(`top_p ${topP}`), `${model} on ${to}: a warning names top_p ${topP}`).toBe(topP !== 1);
        expect(named.includes(`temperature ${temperature}`), `${model} on ${to}: a warning names temperature ${temperature}`).toBe(temperature !== 1);
      }
    });
  }

  test("an Anthropic client's temperature 0.2 to gpt-5", () => {
    const built = translateBody("anthropic-messages", { model: "m", max_tokens: 100, temperature: 0.2, messages: [{ role: "user", content: "hi" }] }, "openai-chat", "openai", "gpt-5");
    expect(built.body.temperature === undefined || built.body.temperature === 1).toBe(true);
    expect(built.warnings.some((w) => /temperature/.test(w.message))).toBe(true);
  });

  test("a model that takes them keeps them (gpt-4.1)", () => {
    const built = translateBody("gemini", geminiCli(0, 0.9), "openai-chat", "openai", "gpt-4.1");
    expect(sampling("openai-chat", built.body)).toEqual({ temperature: 0, top_p: 0.9 });
  });
});
