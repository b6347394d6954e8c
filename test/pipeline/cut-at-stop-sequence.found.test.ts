/**
 * Found (report-only, review43b): with two stop sequences where a longer one begins before a shorter
 * one ends ("abc" and "b" on the text "xabc"), where the emulated cut falls depends on how the text
 * arrived: the streaming cutter cuts at "xa" naming "b" when "xab" and "c" come as two deltas, at "x"
 * naming "abc" when "xabc" comes as one, and the whole-reply cut (a JSON reply) at "x" naming "abc".
 * A client gets a different reply for the same upstream text, streamed or not. (Which one is right is
 * the provider's rule; the gateway's two paths should at least agree with each other.)
 */
import { describe, expect, test } from "bun:test";
import { cutReplyAtStop, StopSequenceCutter } from "../../pipeline/cut-at-stop-sequence.ts";
import type { HubResponse } from "../../formats/hub.ts";

function streamed(stops: string[], deltas: string[]): { text: string; stop: string | undefined } {
  let text = "";
  let stop: string | undefined;
  const c = new StopSequenceCutter(
    stops,
    (ev) => {
      if (ev.type === "finish") stop = ev.stopSequence ?? undefined;
    },
    (_i, t) => (text += t),
  );
  for (const d of deltas) c.onText(0, d, true);
  return { text, stop };
}

describe("overlapping stop sequences: the same text gives the same cut however it arrived", () => {
  const stops = ["abc", "b"];
  test("two deltas vs one delta", () => {
    expect(streamed(stops, ["xab", "c tail"])).toEqual(streamed(stops, ["xabc tail"]));
  });
  test("streamed (two deltas) vs a whole JSON reply", () => {
    const resp = { content: [{ type: "text", text: "xabc tail" }], stopReason: "end_turn" } as unknown as HubResponse;
    cutReplyAtStop(resp, stops);
    const whole = { text: (resp.content[0] as { text: string } | undefined)?.text ?? "", stop: resp.stopSequence ?? undefined };
    expect(streamed(stops, ["xab", "c tail"])).toEqual(whole);
  });
});
