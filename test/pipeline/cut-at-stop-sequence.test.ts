/**
 * The gateway's stop-sequence emulation (pipeline/cut-at-stop-sequence.ts) as a client's events see it:
 * the text reassembled from what was handed on, the events after it, what is held back and released.
 */
import { describe, expect, test } from "bun:test";
import type { HubEvent, HubResponse } from "../../formats/hub.ts";
import { cutReplyAtStop, StopSequenceCutter } from "../../pipeline/cut-at-stop-sequence.ts";

function run(stops: string[], deltas: string[], after: HubEvent[] = []) {
  const out: HubEvent[] = [];
  const texts: string[] = [];
  let dropped = 0;
  const c = new StopSequenceCutter(stops, (ev) => out.push(ev), (_i, t) => texts.push(t), (n) => (dropped += n));
  c.event({ type: "block_start", index: 0, block: { type: "text" } } as HubEvent);
  for (const d of deltas) c.onText(0, d, true);
  for (const ev of after) c.event(ev);
  return { text: texts.join(""), texts, out, cut: c.cut, dropped };
}

const END: HubEvent[] = [{ type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }];

describe("StopSequenceCutter", () => {
  test("a stop sequence split across three deltas: the text before it exactly, then block_stop and finish stop_sequence naming it; after it only the provider's usage", () => {
    const later: HubEvent[] = [
      { type: "block_delta", index: 0, delta: { type: "text", text: " still more" } },
      { type: "block_start", index: 1, block: { type: "tool_call", id: "c", name: "f" } } as HubEvent,
      { type: "block_delta", index: 1, delta: { type: "tool_args", json: '{"a":1}' } },
      ...END,
      { type: "usage", usage: { outputTokens: 9 } },
    ];
    const r = run(["\n\nHuman:"], ["The answer is 42.\n", "\nHu", "man: and more"], later);
    expect(r.text).toBe("The answer is 42.");
    expect(r.cut).toBe(true);
    // The provider's usage read after the cut (its end came in the same read) is its figure for the
    // whole generation, what it bills: handed on, so the row and the client get it, not an estimate.
    expect(r.out.slice(1)).toEqual([{ type: "block_stop", index: 0 }, { type: "finish", reason: "stop_sequence", stopSequence: "\n\nHuman:" }, { type: "usage", usage: { outputTokens: 9 } }]);
    // What was generated but not handed on: the sequence and the text after it, the call's arguments.
    expect(r.dropped).toBe("\n\nHuman: and more".length + " still more".length + '{"a":1}'.length);
  });

  test("only the longest possible beginning is held back, and released as soon as it cannot match", () => {
    const r = run(["STOP"], ["abc ST", "ART here", " S", "T"], END);
    expect(r.texts).toEqual(["abc ", "START here", " ", "ST"]);
    expect(r.text).toBe("abc START here ST");
    expect(r.cut).toBe(false);
    expect(r.out.slice(1)).toEqual(END);
  });

  test("of several, the one that begins first wins; a sequence inside one delta", () => {
    const r = run(["world", "lo w"], ["hello world"]);
    expect(r.text).toBe("hel");
    expect(r.out.at(-1)).toEqual({ type: "finish", reason: "stop_sequence", stopSequence: "lo w" });
  });

  test("a match at the very start hands on no text", () => {
    const r = run(["###"], ["##", "# rest"]);
    expect(r.texts).toEqual([]);
    expect(r.out.at(-1)).toEqual({ type: "finish", reason: "stop_sequence", stopSequence: "###" });
  });

  test("text as block_delta events is scanned the same way", () => {
    const out: HubEvent[] = [];
    const texts: string[] = [];
    const c = new StopSequenceCutter(["END"], (ev) => out.push(ev), (_i, t) => texts.push(t));
    c.event({ type: "block_delta", index: 0, delta: { type: "text", text: "one E" } });
    c.event({ type: "block_delta", index: 0, delta: { type: "text", text: "ND two" } });
    expect(texts.join("")).toBe("one ");
    expect(c.cut).toBe(true);
  });
});

describe("overlapping stop sequences: the same text gives the same cut however it arrived", () => {
  const stops = ["abc", "b"];
  const whole = (text: string) => {
    const resp = { content: [{ type: "text", text }], stopReason: "end_turn" } as unknown as HubResponse;
    cutReplyAtStop(resp, stops);
    return { text: (resp.content[0] as { text: string } | undefined)?.text ?? "", stop: resp.stopSequence ?? undefined };
  };
  const streamed = (deltas: string[], after: HubEvent[] = []) => {
    const r = run(stops, deltas, after);
    const fin = r.out.find((e) => e.type === "finish") as { stopSequence?: string } | undefined;
    return { text: r.text, stop: fin?.stopSequence ?? undefined };
  };

  test('"xabc tail" split at every place, and in three deltas: cut at "x" naming "abc", as the whole reply is', () => {
    const text = "xabc tail";
    expect(whole(text)).toEqual({ text: "x", stop: "abc" });
    for (let i = 0; i <= text.length; i++) expect(streamed([text.slice(0, i), text.slice(i)])).toEqual({ text: "x", stop: "abc" });
    expect(streamed(["xa", "b", "c tail"])).toEqual({ text: "x", stop: "abc" });
  });

  test('"xab d": the held "ab" turns out no "abc", so the cut is at "b" (as whole); "xab" then the block ends: cut at "b" too', () => {
    expect(whole("xab d")).toEqual({ text: "xa", stop: "b" });
    expect(streamed(["xab", " d"])).toEqual({ text: "xa", stop: "b" });
    const r = run(stops, ["xab"], END);
    expect(r.text).toBe("xa");
    expect(r.out.slice(1)).toEqual([{ type: "block_stop", index: 0 }, { type: "finish", reason: "stop_sequence", stopSequence: "b" }]);
  });
});

describe("cutReplyAtStop", () => {
  test("a whole reply: the text cut, later parts dropped, stop_sequence naming it", () => {
    const resp: HubResponse = {
      content: [
        { type: "text", text: "Sure. END and after" },
        { type: "tool_call", id: "c1", name: "f", arguments: "{}" },
      ],
      stopReason: "tool_use",
      usage: {},
    } as HubResponse;
    expect(cutReplyAtStop(resp, ["END"])).toBe(true);
    expect(resp.content).toEqual([{ type: "text", text: "Sure. " }]);
    expect(resp.stopReason).toBe("stop_sequence");
    expect(resp.stopSequence).toBe("END");
  });

  test("no stop sequence in it: unchanged", () => {
    const resp = { content: [{ type: "text", text: "fine" }], stopReason: "end_turn", usage: {} } as HubResponse;
    expect(cutReplyAtStop(resp, ["END"])).toBe(false);
    expect(resp.stopReason).toBe("end_turn");
  });
});
