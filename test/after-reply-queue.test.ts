/**
 * src/after-reply.ts: the queue of per-request bookkeeping run after the reply (docs/performance.md items
 * 145 and 231). Tasks run in the order queued, each with the arguments it was queued with; a task that
 * throws is reported and the others still run; tasks queued while the queue settles run in the same settle.
 */
import { expect, test } from "bun:test";
import { AfterReply } from "../src/after-reply.ts";

test("settle runs every task in order with its arguments, reports a throw and runs the rest, and runs what was queued meanwhile", () => {
  const errors: string[] = [];
  const q = new AfterReply((err) => errors.push(err instanceof Error ? err.message : String(err)));
  const ran: string[] = [];
  const note = (what: string, n: number, flag: boolean) => ran.push(`${what}:${n}:${flag}`);
  q.add(note, "first", 1, true);
  q.add(() => {
    throw new Error("broken task");
  });
  q.add(() => {
    ran.push("second");
    q.add(note, "queued meanwhile", 3, false);
  });
  q.add(note, "third", 2, false);
  q.settle();
  expect(ran).toEqual(["first:1:true", "second", "third:2:false", "queued meanwhile:3:false"]);
  expect(errors).toEqual(["broken task"]);
  q.settle();
  expect(ran).toHaveLength(4);
});

test("a queued task runs by itself after the current turn when nobody settles the queue", async () => {
  const q = new AfterReply(() => {});
  const ran: number[] = [];
  q.add((n: number) => ran.push(n), 7);
  expect(ran).toEqual([]);
  for (let i = 0; i < 200 && ran.length === 0; i++) await new Promise((r) => setImmediate(r));
  expect(ran).toEqual([7]);
});

test("a settle from inside a task (a reader settling first), nested twice, runs each task once and in order; the queue keeps working after it", () => {
  const q = new AfterReply(() => {});
  const ran: string[] = [];
  const note = (what: string) => ran.push(what);
  let nested = false;
  const c = () => {
    ran.push("c");
    if (nested) return;
    nested = true;
    q.add(note, "d");
    q.settle(); // settled again from a task that a settle inside another task runs
  };
  q.add(note, "a");
  q.add(() => {
    q.add(c);
    q.settle(); // a reader inside the bookkeeping (the store's flush) settles the queue
    q.add(note, "e");
  });
  q.add(note, "b");
  q.settle();
  q.add(note, "f");
  q.add(note, "g");
  q.settle();
  expect(ran).toEqual(["a", "c", "d", "b", "e", "f", "g"]);
});
