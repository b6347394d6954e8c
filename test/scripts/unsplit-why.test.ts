/**
 * scripts/bench-budget.ts given a floor run: a lane whose "over the wire, not seen in process" row is
 * printed whole says why, the floor file lacking the lane ("not in that run") or this run not having
 * measured the lane's floor top rung in process, not the first reason for both.
 */
import { expect, test } from "bun:test";
import { unsplitLanes, unsplitRowNote, unsplitWhy } from "../../scripts/lib/floor-json.ts";

test("a lane in the floor file whose in-process floor was not measured is not called missing from that run", () => {
  expect(unsplitWhy(false, false)).toBe("not in that run");
  expect(unsplitWhy(false, true)).toBe("not in that run");
  expect(unsplitWhy(true, false)).toBe("its in-process floor not measured");
  expect(unsplitWhy(true, true)).toBeUndefined();
  const lanes = [
    { name: "chat→chat json", why: unsplitWhy(true, true) },
    { name: "messages→chat json", why: unsplitWhy(false, true) },
    { name: "chat→chat stream", why: unsplitWhy(true, false) },
    { name: "responses→chat stream", why: unsplitWhy(false, true) },
  ];
  expect(unsplitLanes(lanes)).toBe("messages→chat json, responses→chat stream (not in that run), chat→chat stream (its in-process floor not measured)");
  expect(unsplitRowNote(lanes.map((l) => l.why))).toBe("the floor file has no such lane; or the lane's floor top rung was not measured in process");
  // only lanes missing from the floor file: the label the table had
  expect(unsplitRowNote([unsplitWhy(false, true), undefined])).toBe("the floor file has no such lane");
  expect(unsplitLanes([{ name: "a", why: undefined }])).toBe("");
});
