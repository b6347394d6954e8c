/**
 * EventNormalizer.text (formats/normalize.ts, docs/performance.md item 133): a text delta handed in
 * without its event objects comes out as the text delta event itself would: the same events, indices
 * and order, whether it goes on as it came (`emitText`) or as an event.
 */
import { describe, expect, test } from "bun:test";
import { EventNormalizer } from "../../formats/normalize.ts";
import type { HubEvent } from "../../formats/hub.ts";

/** A step: an event, or a text delta `[key, text]`. */
type Step = HubEvent | [number, string];

/** What the normalizer emits for `steps`, text deltas given as events. */
function viaEvents(steps: Step[]): HubEvent[] {
  const out: HubEvent[] = [];
  const n = new EventNormalizer((e) => out.push(e));
  for (const s of steps) n.event(Array.isArray(s) ? { type: "block_delta", index: s[0], delta: { type: "text", text: s[1] } } : s);
  n.end();
  return out;
}

/** The same through `text`, with what `emitText` got written back as events (and counted). */
function viaText(steps: Step[]): { events: HubEvent[]; direct: number } {
  const out: HubEvent[] = [];
  let direct = 0;
  const n = new EventNormalizer(
    (e) => out.push(e),
    (index, text) => {
      direct++;
      out.push({ type: "block_delta", index, delta: { type: "text", text } });
    },
  );
  for (const s of steps) (Array.isArray(s) ? n.text(s[0], s[1], false) : n.event(s));
  n.end();
  return { events: out, direct };
}

const CASES: Record<string, Step[]> = {
  "a text block whose key is its index": [{ type: "message_start" }, { type: "block_start", index: 0, block: { type: "text" } }, [0, "a"], [0, "b"], [0, ""], { type: "block_stop", index: 0 }, { type: "finish", reason: "end_turn" }],
  "a text block whose key is not its index (a block before it)": [
    { type: "block_start", index: -1, block: { type: "tool_call", id: "c", name: "f" } },
    { type: "block_stop", index: -1 },
    { type: "block_start", index: 0, block: { type: "text" } },
    [0, "x"],
    [0, "y"],
    { type: "finish", reason: "end_turn" },
  ],
  "text queued behind a live tool call, then at the finish": [
    { type: "block_start", index: -1, block: { type: "tool_call", id: "c", name: "f" } },
    { type: "block_start", index: 0, block: { type: "text" } },
    [0, "held"],
    { type: "block_delta", index: -1, delta: { type: "tool_args", json: "{}" } },
    [0, " more"],
    { type: "finish", reason: "stop" as never },
  ],
  "a delta for a key never started, after a stop, after the finish and after an error": [
    [5, "implicit"],
    [5, "again"],
    { type: "block_stop", index: 5 },
    [5, "after its stop"],
    { type: "finish", reason: "end_turn" },
    [5, "after the finish"],
    { type: "error", error: { kind: "api_error", status: 502, message: "x" } },
    [5, "after the error"],
  ],
  "an error before any text": [{ type: "error", error: { kind: "api_error", status: 502, message: "x" } }, [0, "late"]],
};

describe("EventNormalizer.text", () => {
  for (const [name, steps] of Object.entries(CASES)) {
    test(`${name}: the events of the text delta events`, () => {
      expect(viaText(steps).events).toEqual(viaEvents(steps));
    });
  }

  test("a live block's deltas go on as they came; others become events", () => {
    // "a" opens the block (an event), "b" goes on as it came, the empty one is an event (dropped)
    expect(viaText(CASES["a text block whose key is its index"]!).direct).toBe(1);
    expect(viaText(CASES["text queued behind a live tool call, then at the finish"]!).direct).toBe(0);
  });
});
