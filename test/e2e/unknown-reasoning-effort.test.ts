/**
 * A reasoning effort that is no level (`"hihg"`, `"High"`) from a Chat or Responses client, on a lane
 * through the hub: the request goes without an effort (the hub carries only its levels), and the
 * `dropped_reasoning_effort` warning says which value of which field was dropped and why (SPEC F-2: a
 * value the target cannot express is dropped explicitly, never silently). Until 2026-12-04 a Chat
 * client read "Field "reasoning_effort" has no Anthropic equivalent" (it has one: the value was the
 * problem) and a Responses client read nothing at all.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

type Warning = { code: string; message: string };
const post = (path: string, body: unknown) => fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Warning[];
const sent = () => suite.gw.fake.requests.at(-1)!.body;
const LEVELS = "is not a reasoning effort level (none, minimal, low, medium, high, xhigh, max)";

describe("an unknown reasoning effort on a translated lane", () => {
  test("Chat client reasoning_effort \"hihg\" → Anthropic, Responses, Gemini: not sent, and the warning names the value and why", async () => {
    for (const model of ["anth/claude-x", "resp/gpt-x", "gem/gemini-x"]) {
      const res = await post("/v1/chat/completions", { model, reasoning_effort: "hihg", messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(200);
      await res.text();
      const w = warnings(res);
      expect(w).toContainEqual({ code: "dropped_reasoning_effort", message: `reasoning_effort "hihg" ${LEVELS}; the request was sent to ${model} without one, so the model's default reasoning applies.` });
      // The old, misleading word for it ("has no … equivalent") is gone.
      expect(w.filter((x) => x.message.includes("reasoning_effort") && x.code !== "dropped_reasoning_effort")).toEqual([]);
      const body = sent();
      expect([body.reasoning_effort, body.reasoning?.effort, body.thinking, body.output_config, body.generationConfig?.thinkingConfig]).toEqual([undefined, undefined, undefined, undefined, undefined]);
    }
  });

  test("Responses client reasoning.effort \"High\" → Anthropic, Chat: the same warning (it went without one before)", async () => {
    for (const model of ["anth/claude-x", "chat/m"]) {
      const res = await post("/v1/responses", { model, reasoning: { effort: "High" }, input: "hi" });
      expect(res.status).toBe(200);
      await res.text();
      expect(warnings(res)).toContainEqual({ code: "dropped_reasoning_effort", message: `reasoning.effort "High" ${LEVELS}; the request was sent to ${model} without one, so the model's default reasoning applies.` });
    }
  });

  test("a known level is carried with no such warning; a Chat target keeps the client's own value (its own body)", async () => {
    const known = await post("/v1/responses", { model: "chat/m", reasoning: { effort: "high" }, input: "hi" });
    await known.text();
    expect(sent().reasoning_effort).toBe("high");
    expect(warnings(known).map((w) => w.code)).not.toContain("dropped_reasoning_effort");

    const own = await post("/v1/chat/completions", { model: "chat/m", reasoning_effort: "hihg", messages: [{ role: "user", content: "hi" }] });
    await own.text();
    expect(sent().reasoning_effort).toBe("hihg");
    expect(warnings(own).map((w) => w.code)).not.toContain("dropped_reasoning_effort");
  });
});
